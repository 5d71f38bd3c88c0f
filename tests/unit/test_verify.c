/* Unit tests of verify.c: the schedule verifier and its fault injection.
 *
 * The mechanisms that use barriers, roles and fences are not planned yet, so their
 * schedules are built here by hand, as a planner would: a warp-specialized full/empty
 * mbarrier ring with transaction bytes, a unified cuda::pipeline-like ring with
 * cp.async.mbarrier.arrive.noinc arrivals, and a bulk ring with a staged output written back
 * by an async-proxy store. Each is proven for every trip count and work-item sequence, and
 * each fault that applies to it is caught under the right rule. The real planners (sync,
 * cp.async) are checked through parsed specs: proven, faults caught or not applicable. */
#include "mech/mech.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ fixtures */

typedef struct fx {
    arena *a;
    spec s;
    spec_stage st[2];
    sched sc;
    planner p;
    char *out;               /* diagnostics of the last verify */
    size_t len;
} fx;

static const char *src_text = "line one\nline two\n";

/* A spec with one staged input of `bytes` (and a staged output when with_out). */
static void fx_init(fx *f, int nslots, bool with_out)
{
    memset(f, 0, sizeof *f);
    f->a = arena_new();
    f->st[0] = (spec_stage){.loc = {"t.pipe", 2, 6}, .rank = 1, .bytes = 4096};
    f->st[1] = (spec_stage){.loc = {"t.pipe", 2, 9}, .array = 1, .is_output = true, .rank = 1,
                            .bytes = 4096};
    f->s = (spec){.name = "t", .loc = {"t.pipe", 1, 1}, .stages = f->st,
                  .nstaged = with_out ? 2 : 1, .threads = 256};
    f->sc = (sched){.spec = &f->s, .mech = MECH_CP_ASYNC, .sm = 90, .nslots = nslots,
                    .threads = 256, .track = TRACK_GROUPS};
    f->p = (planner){.a = f->a, .s = &f->s, .sc = &f->sc};
}

static void fx_free(fx *f)
{
    free(f->out);
    arena_free(f->a);
}

static ir_op *op_r(fx *f, ir_section *sec, ir_op_kind k, int off, ir_role role)
{
    ir_op *op = plan_op(&f->p, sec, k, off);
    op->role = role;
    return op;
}

static ir_op *op(fx *f, ir_section *sec, ir_op_kind k, int off)
{
    return op_r(f, sec, k, off, ROLE_ALL);
}

static ir_op *bar_op(fx *f, ir_section *sec, ir_op_kind k, int off, ir_role role,
                     ir_barrier_set set)
{
    ir_op *o = op_r(f, sec, k, off, role);
    o->bar = set;
    return o;
}

/* The barriers' initialisation in the frame, published: a fence (for the async proxy)
 * and a block barrier, before the ring starts. */
static void init_section(fx *f, bool fence)
{
    ir_section *init = plan_section(&f->p, SEC_FRAME, 1);
    op(f, init, OP_INIT, 0);
    if (fence)
        op(f, init, OP_FENCE, 0)->fence = FENCE_MBARRIER_INIT;
    op(f, init, OP_BARRIER, 0);
}

/* Warp-specialized ring: one producer warp, 256 consumer threads; the producer acquires the
 * slot (empty barrier), expects the bytes and issues the bulk copy; the consumer waits for
 * the full barrier, computes and releases. */
static void build_ws_ring(fx *f, int S)
{
    fx_init(f, S, false);
    f->sc.mech = MECH_BULK;
    f->sc.track = TRACK_BARRIER;
    f->sc.threads = 288;
    f->sc.producer_threads = 32;
    f->sc.full_arrivals = 1;
    f->sc.empty_arrivals = 256;
    init_section(f, true);
    ir_section *loop = plan_section(&f->p, SEC_LOOP, 0);
    op_r(f, loop, OP_ACQUIRE, 0, ROLE_PRODUCER);
    bar_op(f, loop, OP_ARRIVE_TX, 0, ROLE_PRODUCER, BAR_FULL)->bytes = 4096;
    op_r(f, loop, OP_COPY, 0, ROLE_PRODUCER);
    bar_op(f, loop, OP_WAIT_PARITY, 0, ROLE_CONSUMER, BAR_FULL);
    op_r(f, loop, OP_COMPUTE, 0, ROLE_CONSUMER);
    op_r(f, loop, OP_RELEASE, 0, ROLE_CONSUMER);
}

/* One step of the unified ring: acquire, copy, arrive when the copies complete. */
static void unified_fill(fx *f, ir_section *sec, int off)
{
    op(f, sec, OP_ACQUIRE, off)->guarded = true;
    plan_copy(&f->p, sec, off);
    ir_op *arr = bar_op(f, sec, OP_ARRIVE, off, ROLE_ALL, BAR_FULL);
    arr->on_copies = true;
    arr->guarded = true;
}

/* Unified ring (every thread produces and consumes, as cuda::pipeline does), copies by
 * cp.async tracked by cp.async.mbarrier.arrive.noinc on the full barrier. */
static void build_unified_ring(fx *f, int S)
{
    fx_init(f, S, false);
    f->sc.mech = MECH_CP_ASYNC_MBARRIER;
    f->sc.track = TRACK_BARRIER;
    f->sc.full_arrivals = 256;
    f->sc.empty_arrivals = 256;
    init_section(f, false);
    ir_section *pro = plan_section(&f->p, SEC_PROLOGUE, S - 1);
    unified_fill(f, pro, 0);
    ir_section *loop = plan_section(&f->p, SEC_LOOP, 0);
    unified_fill(f, loop, S - 1);
    bar_op(f, loop, OP_WAIT_PARITY, 0, ROLE_ALL, BAR_FULL);
    op(f, loop, OP_COMPUTE, 0);
    op(f, loop, OP_RELEASE, 0);
}

/* Bulk ring with a staged output: the bulk copy in, the compute writes the output slot,
 * a proxy fence and a barrier, then one thread's TMA store, one bulk group per step; the
 * output slot is reused only after wait_group.read (S-1 groups may pend). */
static void build_bulk_store(fx *f, int S)
{
    fx_init(f, S, true);
    f->sc.mech = MECH_BULK;
    f->sc.track = TRACK_BARRIER;
    f->sc.full_arrivals = 1;
    f->sc.empty_arrivals = 256;
    init_section(f, true);
    ir_section *loop = plan_section(&f->p, SEC_LOOP, 0);
    plan_wait(&f->p, loop, S - 1);
    op(f, loop, OP_BARRIER, 0);
    bar_op(f, loop, OP_ARRIVE_TX, 0, ROLE_ALL, BAR_FULL)->bytes = 4096;
    op(f, loop, OP_COPY, 0)->stage = 0;
    bar_op(f, loop, OP_WAIT_PARITY, 0, ROLE_ALL, BAR_FULL);
    op(f, loop, OP_COMPUTE, 0);
    op(f, loop, OP_FENCE, 0)->fence = FENCE_PROXY_ASYNC;
    op(f, loop, OP_BARRIER, 0);
    op(f, loop, OP_STORE, 0)->fence = FENCE_PROXY_ASYNC;
    op(f, loop, OP_COMMIT, 0);
    ir_section *epi = plan_section(&f->p, SEC_EPILOGUE, 0);
    plan_wait(&f->p, epi, 0);
}

/* The cp.async ring as mech_cp_async plans it, built by hand (S >= 2). */
static void build_groups_ring(fx *f, int S)
{
    fx_init(f, S, false);
    ir_section *pro = plan_section(&f->p, SEC_PROLOGUE, S - 1);
    plan_copy(&f->p, pro, 0);
    op(f, pro, OP_COMMIT, 0);
    ir_section *loop = plan_section(&f->p, SEC_LOOP, 0);
    plan_wait(&f->p, loop, S - 2);
    op(f, loop, OP_BARRIER, 0);
    plan_copy(&f->p, loop, S - 1);
    op(f, loop, OP_COMMIT, S - 1);
    op(f, loop, OP_COMPUTE, 0);
}

/* sync: copy, barrier, compute, barrier (trailing: without it, WAR). */
static void build_sync(fx *f, bool trailing)
{
    fx_init(f, 1, false);
    f->sc.mech = MECH_SYNC;
    f->sc.track = TRACK_SYNC;
    ir_section *loop = plan_section(&f->p, SEC_LOOP, 0);
    plan_copy(&f->p, loop, 0);
    op(f, loop, OP_BARRIER, 0);
    op(f, loop, OP_COMPUTE, 0);
    if (trailing)
        op(f, loop, OP_BARRIER, 0);
}

/* Run the verifier; its diagnostics land in f->out. */
static bool run_verify(fx *f)
{
    free(f->out);
    memfile m;
    diag_ctx d;
    diag_init(&d, mem_open(&m), "t.pipe", src_text, strlen(src_text));
    bool ok = verify_schedule(&d, &f->sc);
    f->out = mem_close(&m);
    f->len = m.len;
    ck_assert_int_eq(ok, d.errors == 0);
    return ok;
}

static void expect_proven(fx *f)
{
    bool ok = run_verify(f);
    ck_assert_msg(ok, "expected a proof, got:\n%s", f->out);
    ck_assert_str_eq(f->out, "");
}

/* Not proven, with a diagnostic of rule `rule` (a "] rule:" tag) and one per rule. */
static void expect_rule(fx *f, const char *rule)
{
    bool ok = run_verify(f);
    if (getenv("VERIFY_SHOW"))
        fprintf(stderr, "--- %s\n%s", rule, f->out);
    char tag[64];
    snprintf(tag, sizeof tag, "] %s: ", rule);
    ck_assert_msg(!ok, "expected rule %s to be broken, but the schedule was proven", rule);
    ck_assert_msg(strstr(f->out, tag), "expected rule %s, got:\n%s", rule, f->out);
    ck_assert_msg(count(f->out, tag) == 1, "rule %s reported more than once:\n%s", rule,
                  f->out);
}

static void inject_expect(fx *f, fault_kind k, const char *rule)
{
    ck_assert_msg(verify_inject(&f->sc, k), "fault %s does not apply", verify_fault_name(k));
    expect_rule(f, rule);
}

/* ------------------------------------------------------------------ fault names */

START_TEST(fault_names_round_trip)
{
    for (int k = 0; k < FAULT__COUNT; ++k)
        ck_assert_int_eq(verify_fault_from_name(verify_fault_name((fault_kind)k)), k);
    ck_assert_int_eq(verify_fault_from_name("drop-everything"), FAULT__COUNT);
    ck_assert_str_eq(verify_fault_name(FAULT_WAIT_PLUS_ONE), "wait-plus-one");
}
END_TEST

/* The producers' ring as bulk plans it: the elected thread's bulk copy and every producer
 * thread's stores of what it cannot move, then the arrivals on the full barrier: every
 * producer thread's (all_arrive, the barrier counting 32), or the elected one's alone. */
static void build_ws_stores(fx *f, int S, bool all_arrive)
{
    build_ws_ring(f, S);
    ir_section *loop = &f->sc.secs[f->sc.nsecs - 1];
    ir_op arm = loop->ops[1];
    loop->ops[1] = loop->ops[2];
    loop->ops[1].stores = true;
    loop->ops[2] = arm;
    loop->ops[2].all_arrive = all_arrive;
    f->sc.full_arrivals = all_arrive ? 32 : 1;
}

/* ------------------------------------------------------------------ warp-specialized ring */

START_TEST(ws_ring_proven)
{
    for (int S = 1; S <= 5; ++S) {
        fx f;
        build_ws_ring(&f, S);
        expect_proven(&f);
        fx_free(&f);
    }
}
END_TEST

/* Every producer thread's arrival releases its own stores to the consumers. */
START_TEST(ws_stores_every_arrival_proven)
{
    for (int S = 1; S <= 4; ++S) {
        fx f;
        build_ws_stores(&f, S, true);
        expect_proven(&f);
        fx_free(&f);
    }
}
END_TEST

/* The elected arrival alone releases no other producer thread's stores. */
START_TEST(ws_stores_elected_arrival_raw)
{
    fx f;
    build_ws_stores(&f, 2, false);
    expect_rule(&f, "RAW");
    ck_assert_ptr_nonnull(strstr(f.out, "ordinary stores of every thread are visible"));
    fx_free(&f);
}
END_TEST

/* The arrivals' count is the IR's: every producer thread on a barrier counting one
 * completes it early; one arrival on a barrier counting them all never does. */
START_TEST(ws_stores_arrival_counts)
{
    fx f;
    build_ws_stores(&f, 2, true);
    f.sc.full_arrivals = 1;
    expect_rule(&f, "arrivals");
    fx_free(&f);
    build_ws_stores(&f, 2, false);
    f.sc.full_arrivals = 32;
    expect_rule(&f, "deadlock");
    fx_free(&f);
}
END_TEST

/* The faults that apply are caught on it too. */
START_TEST(ws_stores_faults_caught)
{
    static const struct { fault_kind k; const char *rule; } cases[] = {
        {FAULT_EXPECT_TX_SHORT, "expect_tx"}, {FAULT_EXPECT_TX_LONG, "expect_tx"},
        {FAULT_DROP_FENCE, "fence"}, {FAULT_DROP_ARRIVE, "deadlock"},
        {FAULT_DROP_RELEASE, "deadlock"}, {FAULT_EARLY_RELEASE, "WAR"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        fx f;
        build_ws_stores(&f, 2, true);
        inject_expect(&f, cases[i].k, cases[i].rule);
        fx_free(&f);
    }
}
END_TEST

START_TEST(ws_flip_parity_caught)
{
    fx f;
    build_ws_ring(&f, 3);
    inject_expect(&f, FAULT_FLIP_PARITY, "parity");
    ck_assert_ptr_nonnull(strstr(f.out, "the consumer waits at step 0 (slot 0, use 0) for "
                                        "parity 1 of the full barrier"));
    fx_free(&f);
}
END_TEST

START_TEST(ws_flip_acquire_parity_deadlocks)
{
    fx f;
    build_ws_ring(&f, 3);
    /* The producer's acquire flipped: its first use waits for a release that never comes. */
    f.sc.secs[1].ops[0].parity_flip = true;
    expect_rule(&f, "deadlock");
    ck_assert_ptr_nonnull(strstr(f.out, "the producer waits at step 0 for parity 0 of the "
                                        "empty barrier of slot 0"));
    fx_free(&f);
}
END_TEST

START_TEST(ws_expect_tx_short_caught)
{
    fx f;
    build_ws_ring(&f, 2);
    inject_expect(&f, FAULT_EXPECT_TX_SHORT, "expect_tx");
    ck_assert_ptr_nonnull(strstr(f.out, "when 4080 of the 4096 bytes of step 0's copy arrived"));
    fx_free(&f);
}
END_TEST

START_TEST(ws_expect_tx_long_caught)
{
    fx f;
    build_ws_ring(&f, 2);
    inject_expect(&f, FAULT_EXPECT_TX_LONG, "expect_tx");
    ck_assert_ptr_nonnull(strstr(f.out, "expects 4112 bytes but its copies deliver 4096"));
    ck_assert_ptr_nonnull(strstr(f.out, "deadlock"));
    fx_free(&f);
}
END_TEST

START_TEST(ws_drop_fence_caught)
{
    fx f;
    build_ws_ring(&f, 2);
    inject_expect(&f, FAULT_DROP_FENCE, "fence");
    fx_free(&f);
}
END_TEST

START_TEST(ws_drop_release_caught)
{
    fx f;
    build_ws_ring(&f, 2);
    inject_expect(&f, FAULT_DROP_RELEASE, "deadlock");
    /* Found at the first reuse of a slot: S+1 = 3 trips. */
    ck_assert_ptr_nonnull(strstr(f.out, "(trips 3)"));
    fx_free(&f);
}
END_TEST

START_TEST(ws_drop_arrive_caught)
{
    fx f;
    build_ws_ring(&f, 2);
    inject_expect(&f, FAULT_DROP_ARRIVE, "deadlock");
    ck_assert_ptr_nonnull(strstr(f.out, "0 of 1 arrivals"));
    fx_free(&f);
}
END_TEST

START_TEST(ws_early_release_caught)
{
    fx f;
    build_ws_ring(&f, 2);
    inject_expect(&f, FAULT_EARLY_RELEASE, "WAR");
    fx_free(&f);
}
END_TEST

START_TEST(ws_not_applicable)
{
    fx f;
    build_ws_ring(&f, 3);
    /* No groups; the roles pace the ring, so one slot fewer is not a bug there. */
    ck_assert(!verify_inject(&f.sc, FAULT_DROP_WAIT));
    ck_assert(!verify_inject(&f.sc, FAULT_WAIT_PLUS_ONE));
    ck_assert(!verify_inject(&f.sc, FAULT_DROP_COMMIT));
    ck_assert(!verify_inject(&f.sc, FAULT_ONE_SLOT_SHORT));
    expect_proven(&f);
    fx_free(&f);
}
END_TEST

/* The warp-specialized ring with whole warpgroups, registers moved as gemm_bf16's are. */
static void build_ws_regs(fx *f)
{
    build_ws_ring(f, 3);
    f->sc.threads = 384;
    f->sc.producer_threads = 128;
    f->sc.regs_launch = 168;
    f->sc.regs_producer = 40;
    f->sc.regs_consumer = 232;
}

START_TEST(ws_registers)
{
    fx f;
    build_ws_regs(&f);
    expect_proven(&f);
    inject_expect(&f, FAULT_REGS_OVER, "registers");
    ck_assert_ptr_nonnull(strstr(f.out, "128 x 40 registers and the consumers take 256 x 240, "
                                        "66560 in all, but the block launched with 384 x 168"));
    fx_free(&f);
    build_ws_ring(&f, 3);
    ck_assert(!verify_inject(&f.sc, FAULT_REGS_OVER));
    fx_free(&f);
}
END_TEST

START_TEST(ws_registers_wrong)
{
    /* Each row changes build_ws_regs's numbers; the rule says what is wrong with them. */
    static const struct { int producers, keep, take, launch; const char *says; } rows[] = {
        {32, 40, 232, 168, "whole warpgroups"},       /* one warp: setmaxnreg is per warpgroup */
        {128, 40, 230, 168, "multiples of 8 from 24 to 256"},
        {128, 16, 232, 168, "multiples of 8 from 24 to 256"},
        {128, 40, 264, 168, "multiples of 8 from 24 to 256"},
        {128, 40, 232, 172, "an SM has 65536, given in multiples of 8"},
        {128, 40, 232, 176, "an SM has 65536"},       /* 384 x 176 = 67584 */
        {128, 200, 152, 168, ".dec may only lower the count, .inc only raise it"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        fx f;
        build_ws_regs(&f);
        f.sc.producer_threads = rows[i].producers;
        f.sc.regs_producer = rows[i].keep;
        f.sc.regs_consumer = rows[i].take;
        f.sc.regs_launch = rows[i].launch;
        expect_rule(&f, "registers");
        ck_assert_msg(strstr(f.out, rows[i].says), "row %zu: %s", i, f.out);
        fx_free(&f);
    }
}
END_TEST

START_TEST(ws_arrival_count_wrong)
{
    fx f;
    build_ws_ring(&f, 2);
    f.sc.empty_arrivals = 255;          /* 256 consumers release */
    expect_rule(&f, "arrivals");
    ck_assert_ptr_nonnull(strstr(f.out, "empty barrier of slot 0"));
    fx_free(&f);
    build_ws_ring(&f, 2);
    f.sc.full_arrivals = 2;             /* one elected producer arrives */
    expect_rule(&f, "deadlock");
    fx_free(&f);
}
END_TEST

START_TEST(ws_init_not_published)
{
    fx f;
    build_ws_ring(&f, 2);
    f.sc.secs[0].nops = 2;              /* init and fence without the block barrier */
    expect_rule(&f, "init");
    fx_free(&f);
}
END_TEST

START_TEST(ws_init_missing)
{
    fx f;
    build_ws_ring(&f, 2);
    f.sc.secs[0].ops[0].kind = OP_BARRIER;   /* no INIT: barriers used uninitialised */
    expect_rule(&f, "init");
    fx_free(&f);
}
END_TEST

START_TEST(implied_barrier_placement)
{
    /* A barrier may be implied only by the wait or init right before it. */
    fx f;
    build_ws_ring(&f, 2);
    f.sc.secs[0].ops[2].implied = true;      /* after the fence */
    expect_rule(&f, "IR");
    fx_free(&f);
}
END_TEST

START_TEST(ws_producer_first_and_consumer_first)
{
    /* A consumer that reads the slot again after releasing it: caught whichever role
     * the simulation runs first. */
    fx f;
    build_ws_ring(&f, 2);
    ir_section *loop = &f.sc.secs[1];
    op_r(&f, loop, OP_COMPUTE, 0, ROLE_CONSUMER);
    expect_rule(&f, "WAR");
    fx_free(&f);
}
END_TEST

START_TEST(ws_block_barrier_between_roles)
{
    /* A block barrier the producer must pass before it fills the slot the consumer waits
     * for: each role waits for the other. */
    fx f;
    fx_init(&f, 2, false);
    f.sc.mech = MECH_BULK;
    f.sc.track = TRACK_BARRIER;
    f.sc.threads = 288;
    f.sc.producer_threads = 32;
    f.sc.full_arrivals = 1;
    f.sc.empty_arrivals = 256;
    init_section(&f, true);
    ir_section *loop = plan_section(&f.p, SEC_LOOP, 0);
    bar_op(&f, loop, OP_WAIT_PARITY, 0, ROLE_CONSUMER, BAR_FULL);
    op_r(&f, loop, OP_COMPUTE, 0, ROLE_CONSUMER);
    op_r(&f, loop, OP_RELEASE, 0, ROLE_CONSUMER);
    op(&f, loop, OP_BARRIER, 0);
    op_r(&f, loop, OP_ACQUIRE, 0, ROLE_PRODUCER);
    bar_op(&f, loop, OP_ARRIVE_TX, 0, ROLE_PRODUCER, BAR_FULL)->bytes = 4096;
    op_r(&f, loop, OP_COPY, 0, ROLE_PRODUCER);
    expect_rule(&f, "deadlock");
    ck_assert_ptr_nonnull(strstr(f.out, "the producer waits at a block barrier that the other "
                                        "role never reaches; the consumer waits at step 0"));
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ unified ring */

START_TEST(unified_ring_proven)
{
    for (int S = 1; S <= 5; ++S) {
        fx f;
        build_unified_ring(&f, S);
        expect_proven(&f);
        fx_free(&f);
    }
}
END_TEST

START_TEST(unified_faults_caught)
{
    static const struct {
        fault_kind k;
        const char *rule;
    } cases[] = {
        {FAULT_FLIP_PARITY, "parity"}, {FAULT_DROP_RELEASE, "deadlock"},
        {FAULT_DROP_ARRIVE, "deadlock"}, {FAULT_EARLY_RELEASE, "WAR"},
        {FAULT_ONE_SLOT_SHORT, "deadlock"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        fx f;
        build_unified_ring(&f, 3);
        inject_expect(&f, cases[i].k, cases[i].rule);
        fx_free(&f);
    }
}
END_TEST

START_TEST(unified_not_applicable)
{
    fx f;
    build_unified_ring(&f, 3);
    ck_assert(!verify_inject(&f.sc, FAULT_EXPECT_TX_SHORT));
    ck_assert(!verify_inject(&f.sc, FAULT_EXPECT_TX_LONG));
    /* No async proxy here: no fence to drop (and none needed). */
    ck_assert(!verify_inject(&f.sc, FAULT_DROP_FENCE));
    ck_assert(!verify_inject(&f.sc, FAULT_DROP_WAIT));
    expect_proven(&f);
    fx_free(&f);
}
END_TEST

START_TEST(unified_arrivals_too_many)
{
    fx f;
    build_unified_ring(&f, 2);
    f.sc.full_arrivals = 255;
    expect_rule(&f, "arrivals");
    ck_assert_ptr_nonnull(strstr(f.out, "full barrier of slot 0"));
    fx_free(&f);
}
END_TEST

START_TEST(unified_wait_on_copy_without_arrival_raw)
{
    /* Reading before waiting on the full barrier: the copies are still in flight. */
    fx f;
    build_unified_ring(&f, 2);
    ir_section *loop = &f.sc.secs[2];
    ir_op tmp = loop->ops[3];           /* wait_parity <-> compute */
    loop->ops[3] = loop->ops[4];
    loop->ops[4] = tmp;
    expect_rule(&f, "RAW");
    ck_assert_ptr_nonnull(strstr(f.out, "no completed barrier phase covers it"));
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ bulk ring with a store */

START_TEST(bulk_store_proven)
{
    for (int S = 1; S <= 4; ++S) {
        fx f;
        build_bulk_store(&f, S);
        expect_proven(&f);
        fx_free(&f);
    }
}
END_TEST

START_TEST(bulk_store_faults_caught)
{
    static const struct {
        fault_kind k;
        const char *rule;
    } cases[] = {
        {FAULT_DROP_FENCE, "fence"}, {FAULT_DROP_WAIT, "WAR"}, {FAULT_WAIT_PLUS_ONE, "WAR"},
        {FAULT_DROP_COMMIT, "WAR"}, {FAULT_EXPECT_TX_SHORT, "expect_tx"},
        {FAULT_EXPECT_TX_LONG, "expect_tx"}, {FAULT_FLIP_PARITY, "parity"},
        {FAULT_DROP_ARRIVE, "deadlock"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        fx f;
        build_bulk_store(&f, 2);
        inject_expect(&f, cases[i].k, cases[i].rule);
        fx_free(&f);
    }
}
END_TEST

START_TEST(bulk_store_fence_after_barrier_only)
{
    /* The store fence removed, the init fence kept: only the store is unfenced. */
    fx f;
    build_bulk_store(&f, 2);
    ir_section *loop = &f.sc.secs[1];
    memmove(&loop->ops[6], &loop->ops[7], sizeof *loop->ops * (size_t)(loop->nops - 7));
    loop->nops--;
    expect_rule(&f, "fence");
    ck_assert_ptr_nonnull(strstr(f.out, "no proxy fence between the compute's shared-memory "
                                        "writes and the store"));
    fx_free(&f);
}
END_TEST

START_TEST(bulk_store_no_drain)
{
    fx f;
    build_bulk_store(&f, 2);
    f.sc.nsecs = 2;                     /* no wait_group 0 at the end */
    expect_rule(&f, "drain");
    ck_assert_ptr_nonnull(strstr(f.out, "async store from slot"));
    fx_free(&f);
}
END_TEST

START_TEST(bulk_store_before_barrier_raw)
{
    fx f;
    build_bulk_store(&f, 2);
    ir_section *loop = &f.sc.secs[1];
    /* fence, barrier, store -> fence, store, barrier */
    ir_op tmp = loop->ops[7];
    loop->ops[7] = loop->ops[8];
    loop->ops[8] = tmp;
    expect_rule(&f, "RAW");
    ck_assert_ptr_nonnull(strstr(f.out, "the store of step 0"));
    fx_free(&f);
}
END_TEST

START_TEST(bulk_store_single_output_slot)
{
    /* An output stage planned with one slot: wait_group.read must then let no store pend
     * when the slot is rewritten; S-1 is right only for an output ring. */
    fx f;
    build_bulk_store(&f, 2);
    f.sc.copy[1].nslots = 1;
    expect_rule(&f, "WAR");
    ck_assert_ptr_nonnull(strstr(f.out, "the compute of step 1 (every thread) writes slot 0 "
                                        "while step 0 may still store from it"));
    f.sc.secs[1].ops[0].n = 0;
    expect_proven(&f);
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ group rings */

START_TEST(groups_ring_proven)
{
    for (int S = 2; S <= 6; ++S) {
        fx f;
        build_groups_ring(&f, S);
        expect_proven(&f);
        fx_free(&f);
    }
}
END_TEST

START_TEST(groups_faults_caught)
{
    static const struct {
        fault_kind k;
        const char *rule;
    } cases[] = {
        {FAULT_DROP_WAIT, "RAW"}, {FAULT_WAIT_PLUS_ONE, "RAW"}, {FAULT_DROP_COMMIT, "RAW"},
        {FAULT_ONE_SLOT_SHORT, "WAR"},
    };
    for (int S = 2; S <= 5; ++S)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            fx f;
            build_groups_ring(&f, S);
            inject_expect(&f, cases[i].k, cases[i].rule);
            fx_free(&f);
        }
}
END_TEST

START_TEST(groups_not_applicable)
{
    static const fault_kind na[] = {
        FAULT_FLIP_PARITY, FAULT_EXPECT_TX_SHORT, FAULT_EXPECT_TX_LONG, FAULT_DROP_FENCE,
        FAULT_DROP_RELEASE, FAULT_DROP_ARRIVE, FAULT_EARLY_RELEASE,
    };
    fx f;
    build_groups_ring(&f, 4);
    for (size_t i = 0; i < sizeof na / sizeof *na; ++i)
        ck_assert_msg(!verify_inject(&f.sc, na[i]), "%s applies", verify_fault_name(na[i]));
    expect_proven(&f);
    fx_free(&f);
}
END_TEST

START_TEST(groups_barrier_missing_raw)
{
    /* Completed in each thread by its wait, but not published by a barrier. */
    fx f;
    build_groups_ring(&f, 3);
    ir_section *loop = &f.sc.secs[1];
    memmove(&loop->ops[1], &loop->ops[2], sizeof *loop->ops * 3);
    loop->nops--;
    expect_rule(&f, "RAW");
    ck_assert_ptr_nonnull(strstr(f.out, "no barrier after the copy completed in its thread"));
    fx_free(&f);
}
END_TEST

START_TEST(groups_guarded_commit_raw)
{
    /* A guarded commit: at the tail fewer groups are closed and the wait lets the last
     * steps' groups pend. */
    fx f;
    build_groups_ring(&f, 3);
    f.sc.secs[1].ops[3].guarded = true;
    expect_rule(&f, "RAW");
    fx_free(&f);
}
END_TEST

START_TEST(groups_diag_format)
{
    fx f;
    build_groups_ring(&f, 4);
    ck_assert(verify_inject(&f.sc, FAULT_ONE_SLOT_SHORT));
    ck_assert(!run_verify(&f));
    ck_assert_str_eq(f.out,
                     "t.pipe:2:6: error: [cp.async] WAR: the copy of step 3 (every thread) "
                     "writes slot 0 before step 0 was read from it (the ring has 3 slots) "
                     "(trips 4)\n"
                     "line two\n"
                     "     ^\n");
    fx_free(&f);
}
END_TEST

START_TEST(groups_drain)
{
    /* Copies that nothing waits for are still in flight when the block exits. */
    fx f;
    fx_init(&f, 2, false);
    ir_section *loop = plan_section(&f.p, SEC_LOOP, 0);
    plan_copy(&f.p, loop, 0);
    op(&f, loop, OP_COMMIT, 0);
    expect_rule(&f, "drain");
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ sync */

START_TEST(sync_proven_and_trailing_barrier_needed)
{
    fx f;
    build_sync(&f, true);
    expect_proven(&f);
    for (int k = FAULT_NONE + 1; k < FAULT__COUNT; ++k)
        ck_assert_msg(!verify_inject(&f.sc, (fault_kind)k), "%s applies to sync",
                      verify_fault_name((fault_kind)k));
    fx_free(&f);
    build_sync(&f, false);
    expect_rule(&f, "WAR");
    ck_assert_ptr_nonnull(strstr(f.out, "while step 0 may still read it"));
    fx_free(&f);
}
END_TEST

START_TEST(sync_no_barrier_raw)
{
    fx f;
    build_sync(&f, true);
    f.sc.secs[0].ops[1].kind = OP_FENCE;   /* the publishing barrier gone */
    expect_rule(&f, "RAW");
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ structure */

START_TEST(ir_roles_without_producers)
{
    fx f;
    build_ws_ring(&f, 2);
    f.sc.producer_threads = 0;
    expect_rule(&f, "IR");
    ck_assert_ptr_nonnull(strstr(f.out, "of the producer in a schedule without roles"));
    fx_free(&f);
}
END_TEST

START_TEST(ir_bad_counts)
{
    fx f;
    build_ws_ring(&f, 2);
    f.sc.full_arrivals = 0;
    expect_rule(&f, "IR");
    fx_free(&f);
    build_groups_ring(&f, 2);
    f.sc.secs[1].ops[0].n = -1;
    expect_rule(&f, "IR");
    fx_free(&f);
    build_groups_ring(&f, 2);
    f.sc.nslots = 0;
    expect_rule(&f, "IR");
    fx_free(&f);
}
END_TEST

START_TEST(no_staged_arrays_location)
{
    fx f;
    build_sync(&f, false);
    f.s.nstaged = 0;                    /* nothing staged: nothing to break */
    expect_proven(&f);
    f.sc.nslots = 0;
    ck_assert(!run_verify(&f));
    ck_assert_ptr_nonnull(strstr(f.out, "t.pipe:1:1: error: [sync] IR:"));
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ phase table */

/* The trace verify_schedule records, as the source prints it (emit_phase_table). */
static char *table_of(fx *f)
{
    run_verify(f);
    strbuf sb;
    sb_init(&sb, f->a);
    emit_phase_table(&sb, &f->sc);
    if (getenv("VERIFY_SHOW"))
        fputs(sb.data, stderr);
    return sb.data;
}

START_TEST(phase_table_groups)
{
    fx f;
    build_groups_ring(&f, 4);
    const char *t = table_of(&f);
    ck_assert_ptr_nonnull(strstr(t, "/* Phase table of the cp.async ring: 4 slots, the first 9 "
                                    "steps of a block.\n"));
    ck_assert_ptr_nonnull(strstr(t, " *  step slot  use group  completed by\n"));
    ck_assert_ptr_nonnull(strstr(t, " *     0    0    0     0  wait_group 2 in loop t=0\n"));
    ck_assert_ptr_nonnull(strstr(t, " *     8    0    2     8  wait_group 2 in loop t=8\n"));
    ck_assert_ptr_null(strstr(t, "full"));
    ck_assert_ptr_nonnull(strstr(t, " */\n"));
    ck_assert_ptr_null(strstr(t, "does not verify"));
    fx_free(&f);
}
END_TEST

START_TEST(phase_table_one_slot_tail)
{
    /* With one slot the group of step 2 is the third commit, completed in the same trip;
     * the trace has it, the source prints no table of one slot. */
    fx f;
    fx_init(&f, 1, false);
    ir_section *loop = plan_section(&f.p, SEC_LOOP, 0);
    plan_copy(&f.p, loop, 0);
    op(&f, loop, OP_COMMIT, 0);
    plan_wait(&f.p, loop, 0);
    op(&f, loop, OP_BARRIER, 0);
    op(&f, loop, OP_COMPUTE, 0);
    op(&f, loop, OP_BARRIER, 0);
    ck_assert_str_eq(table_of(&f), "");
    ck_assert_int_eq(f.sc.nphases, 3);
    const phase_step *ts = &f.sc.phases[2];
    ck_assert_int_eq(ts->grp, 2);
    ck_assert_int_eq(ts->wait_n, 0);
    ck_assert_int_eq(ts->wait_sec, SEC_LOOP);
    ck_assert_int_eq(ts->wait_var, 2);
    ck_assert_int_eq(ts->bytes, -1);
    ck_assert(!f.sc.unproven);
    fx_free(&f);
}
END_TEST

START_TEST(phase_table_barriers)
{
    fx f;
    build_ws_ring(&f, 2);
    const char *t = table_of(&f);
    ck_assert_ptr_nonnull(strstr(t, " *  step slot  use   full  empty          expect_tx\n"));
    ck_assert_ptr_nonnull(strstr(t, " *     0    0    0      0      1 (passes)      4096\n"));
    ck_assert_ptr_nonnull(strstr(t, " *     2    0    1      1      0               4096\n"));
    ck_assert_ptr_nonnull(strstr(t, " *     4    0    2      0      1               4096\n"));
    ck_assert_ptr_null(strstr(t, "group"));
    fx_free(&f);
}
END_TEST

START_TEST(phase_table_broken)
{
    fx f;
    build_groups_ring(&f, 3);
    ck_assert(verify_inject(&f.sc, FAULT_DROP_WAIT));
    const char *t = table_of(&f);
    ck_assert_ptr_nonnull(strstr(t, "(not waited for)"));
    ck_assert_ptr_nonnull(strstr(t, " * (the schedule does not verify: pipegen --verify says "
                                    "why)\n */\n"));
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ the real planners */

/* A spec planned for sm_80 (the harness). */
typedef harness planned;

static const char *saxpy_src =
    "pipeline saxpy {\n"
    "  param float a;\n"
    "  in float x[n];\n"
    "  in float y[n];\n"
    "  out float z[n];\n"
    "  threads 256;\n"
    "  stages %d;\n"
    "  grid %s;\n"
    "  tile z[2048];\n"
    "  stage x, y;\n"
    "  compute elementwise (i) { z[i] = a * x[i] + y[i]; }\n"
    "}\n";

static void plan_spec(planned *p, const char *file, const char *src, mech m)
{
    static const target tgt = {.sm = {80}, .narch = 1};
    h_start(p, file, src);
    ck_assert(h_check(p, &tgt));
    h_plan(p, m, 80);
    h_end(p);
    ck_assert_ptr_nonnull(p->sc);
}

static void plan_saxpy(planned *p, mech m, int stages, const char *grid)
{
    char src[1024];
    snprintf(src, sizeof src, saxpy_src, stages, grid);
    plan_spec(p, "saxpy.pipe", src, m);
}

/* Verify the schedule; p->diags gets the verifier's diagnostics (without source lines). */
static bool planned_verify(planned *p)
{
    h_restart_diags(p, "");
    bool ok = h_verify(p, p->sc);
    h_end(p);
    return ok;
}

static void planned_free(planned *p) { h_free(p); }

/* ------------------------------------------------------------------ the host plan */

/* The host plan of saxpy's schedule under m (one architecture), checked; the verdict, the
 * diagnostics in p->diags. fault: FAULT_NONE or a host fault injected first. */
static bool host_verdict(planned *p, mech m, fault_kind fault)
{
    plan_saxpy(p, m, 3, "persistent");
    host_plan *hp = plan_host(p->a, &p->s, &p->sc, 1);
    if (fault != FAULT_NONE)
        ck_assert(verify_inject_host(hp, fault));
    h_restart_diags(p, "");
    bool ok = verify_host(&p->d, &p->s, hp);
    h_end(p);
    return ok;
}

START_TEST(host_plan_proven_and_ordered)
{
    static const mech mechs[] = {MECH_SYNC, MECH_CP_ASYNC, MECH_CP_ASYNC_MBARRIER, MECH_CG,
                                 MECH_PIPELINE};
    for (size_t i = 0; i < sizeof mechs / sizeof mechs[0]; ++i) {
        planned p;
        ck_assert_msg(host_verdict(&p, mechs[i], FAULT_NONE), "%s", p.diags);
        ck_assert_str_eq(p.diags, "");
        planned_free(&p);
    }
    /* Checks first, the launch after the variant's preparation and the grid. */
    planned p;
    plan_saxpy(&p, MECH_CP_ASYNC, 3, "persistent");
    host_plan *hp = plan_host(p.a, &p.s, &p.sc, 1);
    static const host_op_kind order[] = {
        HOP_CHECK_ARGS, HOP_CHECK_ARRAY, HOP_CHECK_ARRAY, HOP_CHECK_ARRAY, HOP_CHECK_DISJOINT,
        HOP_CHECK_DISJOINT, HOP_COUNT_TILES, HOP_RETURN_IF_EMPTY, HOP_COPY_WIDTH,
        HOP_SELECT_VARIANT, HOP_GRID, HOP_TILE_COUNTER, HOP_LAUNCH,
    };
    ck_assert_int_eq(hp->nops, (int)(sizeof order / sizeof order[0]));
    for (int i = 0; i < hp->nops; ++i)
        ck_assert_str_eq(host_op_name(hp->ops[i].kind), host_op_name(order[i]));
    ck_assert_int_eq(hp->nparams, 3);
    ck_assert_int_eq(hp->params[1].value, HV_NTILES);
    ck_assert_int_eq(hp->params[2].value, HV_TILE_COUNTER);
    ck_assert_int_eq(hp->nvariants, 1);
    planned_free(&p);
}
END_TEST

START_TEST(host_faults_caught)
{
    static const struct { fault_kind k; const char *rule; } cases[] = {
        {FAULT_DROP_ARRAY_CHECK, "[host] checks: array 'x' is not checked"},
        {FAULT_LATE_SELECT, "[host] prepare: "},
        {FAULT_DROP_PARAM, "[host] params: kernel parameter 'pg_ntiles'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        planned p;
        ck_assert(!host_verdict(&p, MECH_CP_ASYNC, cases[i].k));
        ck_assert_msg(strstr(p.diags, cases[i].rule), "%s: %s", verify_fault_name(cases[i].k),
                      p.diags);
        planned_free(&p);
    }
}
END_TEST

START_TEST(host_twin_schedules_one_variant)
{
    /* sm_80's and sm_90's schedules of saxpy are the same: one variant serves both. A
     * schedule that differs (another slot count) is a variant of its own, highest first. */
    planned p;
    plan_saxpy(&p, MECH_CP_ASYNC, 3, "persistent");
    sched *two[2] = {p.sc, plan_schedule(p.a, &p.d, &p.s, MECH_CP_ASYNC, 90, false)};
    host_plan *hp = plan_host(p.a, &p.s, two, 2);
    ck_assert_int_eq(hp->nvariants, 1);
    ck_assert_int_eq(hp->variant[0], 0);
    two[1]->nslots = 2;
    hp = plan_host(p.a, &p.s, two, 2);
    ck_assert_int_eq(hp->nvariants, 2);
    ck_assert_int_eq(hp->variant[0], 1);
    ck_assert_int_eq(hp->variant[1], 0);
    planned_free(&p);
}
END_TEST

START_TEST(planned_schedules_proven)
{
    static const char *grids[] = {"per_tile", "persistent"};
    for (int g = 0; g < 2; ++g)
        for (int S = 1; S <= 6; ++S) {
            planned p;
            plan_saxpy(&p, MECH_CP_ASYNC, S, grids[g]);
            ck_assert_msg(planned_verify(&p), "%s", p.diags);
            ck_assert_str_eq(p.diags, "");
            planned_free(&p);
            plan_saxpy(&p, MECH_SYNC, S, grids[g]);
            ck_assert_msg(planned_verify(&p), "%s", p.diags);
            planned_free(&p);
        }
}
END_TEST

START_TEST(planned_cp_async_faults)
{
    static const struct {
        fault_kind k;
        const char *tag;
    } cases[] = {
        {FAULT_DROP_WAIT, "] RAW: "}, {FAULT_WAIT_PLUS_ONE, "] RAW: "},
        {FAULT_DROP_COMMIT, "] RAW: "}, {FAULT_ONE_SLOT_SHORT, "] WAR: "},
    };
    for (int S = 2; S <= 5; ++S)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            planned p;
            plan_saxpy(&p, MECH_CP_ASYNC, S, "persistent");
            ck_assert(verify_inject(p.sc, cases[i].k));
            ck_assert(!planned_verify(&p));
            ck_assert_msg(strstr(p.diags, cases[i].tag), "%s: %s",
                          verify_fault_name(cases[i].k), p.diags);
            ck_assert_int_eq(count(p.diags, "error:"), 1);
            planned_free(&p);
        }
}
END_TEST

START_TEST(planned_cp_async_one_slot)
{
    planned p;
    plan_saxpy(&p, MECH_CP_ASYNC, 4, "per_tile");
    ck_assert_int_eq(p.sc->nslots, 1);
    ck_assert(!verify_inject(p.sc, FAULT_ONE_SLOT_SHORT));
    ck_assert(verify_inject(p.sc, FAULT_WAIT_PLUS_ONE));
    ck_assert(!planned_verify(&p));
    ck_assert_ptr_nonnull(strstr(p.diags, "[cp.async] RAW: the compute of step 0"));
    planned_free(&p);
}
END_TEST

static const char *staged_out_src =
    "pipeline so {\n"
    "  in float x[n];\n"
    "  out float z[n];\n"
    "  stages 3;\n"
    "  grid persistent;\n"
    "  tile z[1024];\n"
    "  stage x, z;\n"
    "  compute elementwise (i) { z[i] = 2 * x[i]; }\n"
    "}\n";

START_TEST(planned_staged_output)
{
    static const mech mechs[] = {MECH_SYNC, MECH_CP_ASYNC};
    for (int i = 0; i < 2; ++i) {
        planned p;
        plan_spec(&p, "so.pipe", staged_out_src, mechs[i]);
        ck_assert_msg(planned_verify(&p), "%s", p.diags);
        /* The barrier between the compute and the store removed: the store reads the
         * output slot before every thread's writes are visible to it. */
        ir_section *loop = &p.sc->secs[p.sc->nsecs - 1];
        ck_assert_int_eq(loop->ops[loop->nops - 1].kind, OP_STORE);
        ck_assert_int_eq(loop->ops[loop->nops - 2].kind, OP_BARRIER);
        loop->ops[loop->nops - 2] = loop->ops[loop->nops - 1];
        loop->nops--;
        ck_assert(!planned_verify(&p));
        ck_assert_ptr_nonnull(strstr(p.diags, "] RAW: the store of step 0 (every thread) reads "
                                              "slot 0 before the compute's writes of every thread "
                                              "are visible"));
        planned_free(&p);
    }
}
END_TEST

/* ------------------------------------------------------------------ main */

static Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *names = tcase_create("names");
    tcase_add_test(names, fault_names_round_trip);
    suite_add_tcase(s, names);

    TCase *ws = tcase_create("ws_ring");
    tcase_add_test(ws, ws_ring_proven);
    tcase_add_test(ws, ws_stores_every_arrival_proven);
    tcase_add_test(ws, ws_stores_elected_arrival_raw);
    tcase_add_test(ws, ws_stores_arrival_counts);
    tcase_add_test(ws, ws_stores_faults_caught);
    tcase_add_test(ws, ws_flip_parity_caught);
    tcase_add_test(ws, ws_flip_acquire_parity_deadlocks);
    tcase_add_test(ws, ws_expect_tx_short_caught);
    tcase_add_test(ws, ws_expect_tx_long_caught);
    tcase_add_test(ws, ws_drop_fence_caught);
    tcase_add_test(ws, ws_drop_release_caught);
    tcase_add_test(ws, ws_drop_arrive_caught);
    tcase_add_test(ws, ws_early_release_caught);
    tcase_add_test(ws, ws_not_applicable);
    tcase_add_test(ws, ws_registers);
    tcase_add_test(ws, ws_registers_wrong);
    tcase_add_test(ws, ws_arrival_count_wrong);
    tcase_add_test(ws, ws_init_not_published);
    tcase_add_test(ws, ws_init_missing);
    tcase_add_test(ws, implied_barrier_placement);
    tcase_add_test(ws, ws_producer_first_and_consumer_first);
    tcase_add_test(ws, ws_block_barrier_between_roles);
    suite_add_tcase(s, ws);

    TCase *un = tcase_create("unified_ring");
    tcase_add_test(un, unified_ring_proven);
    tcase_add_test(un, unified_faults_caught);
    tcase_add_test(un, unified_not_applicable);
    tcase_add_test(un, unified_arrivals_too_many);
    tcase_add_test(un, unified_wait_on_copy_without_arrival_raw);
    suite_add_tcase(s, un);

    TCase *bs = tcase_create("bulk_store");
    tcase_add_test(bs, bulk_store_proven);
    tcase_add_test(bs, bulk_store_faults_caught);
    tcase_add_test(bs, bulk_store_fence_after_barrier_only);
    tcase_add_test(bs, bulk_store_no_drain);
    tcase_add_test(bs, bulk_store_before_barrier_raw);
    tcase_add_test(bs, bulk_store_single_output_slot);
    suite_add_tcase(s, bs);

    TCase *gr = tcase_create("groups");
    tcase_add_test(gr, groups_ring_proven);
    tcase_add_test(gr, groups_faults_caught);
    tcase_add_test(gr, groups_not_applicable);
    tcase_add_test(gr, groups_barrier_missing_raw);
    tcase_add_test(gr, groups_guarded_commit_raw);
    tcase_add_test(gr, groups_diag_format);
    tcase_add_test(gr, groups_drain);
    suite_add_tcase(s, gr);

    TCase *sy = tcase_create("sync");
    tcase_add_test(sy, sync_proven_and_trailing_barrier_needed);
    tcase_add_test(sy, sync_no_barrier_raw);
    suite_add_tcase(s, sy);

    TCase *ir = tcase_create("structure");
    tcase_add_test(ir, ir_roles_without_producers);
    tcase_add_test(ir, ir_bad_counts);
    tcase_add_test(ir, no_staged_arrays_location);
    suite_add_tcase(s, ir);

    TCase *pt = tcase_create("phase_table");
    tcase_add_test(pt, phase_table_groups);
    tcase_add_test(pt, phase_table_one_slot_tail);
    tcase_add_test(pt, phase_table_barriers);
    tcase_add_test(pt, phase_table_broken);
    suite_add_tcase(s, pt);

    TCase *pl = tcase_create("planned");
    tcase_add_test(pl, host_plan_proven_and_ordered);
    tcase_add_test(pl, host_faults_caught);
    tcase_add_test(pl, host_twin_schedules_one_variant);
    tcase_add_test(pl, planned_schedules_proven);
    tcase_add_test(pl, planned_cp_async_faults);
    tcase_add_test(pl, planned_cp_async_one_slot);
    tcase_add_test(pl, planned_staged_output);
    suite_add_tcase(s, pl);
    return s;
}

int main(void) { return run_suite(verify_suite()); }
