/* mech_cp_async_mbarrier: cp.async copies whose completion arrives on an mbarrier per
 * slot (cp.async.mbarrier.arrive.noinc), consumers waiting on its phase parity.
 *
 * Without producer warps every thread copies and computes: a full barrier per slot
 * counts one arrival per thread; a block barrier after each compute frees the slot for
 * the copy S steps ahead. With producer warps (warp specialization) the first warps only
 * copy and the others only compute, and a second barrier per slot (empty) counts the
 * consumers' releases, which the producers wait on before refilling the slot. Barriers are
 * initialised by thread 0 and published by a block barrier before first use. */
#include "mech.h"

void plan_mbar_init(planner *p)
{
    ir_section *init = plan_section(p, SEC_FRAME, 1);
    plan_op(p, init, OP_INIT, 0);
    plan_op(p, init, OP_FENCE, 0)->fence = FENCE_MBARRIER_INIT;
    plan_op(p, init, OP_BARRIER, 0);
}

ir_op *plan_role_op(planner *p, ir_section *sec, ir_op_kind kind, ir_role role)
{
    ir_op *op = plan_op(p, sec, kind, 0);
    op->role = role;
    return op;
}

/* The staged outputs' write-back after a step's compute by the role: a barrier (every
 * compute write done), the slot's release (with producer warps), the store, and a barrier
 * that keeps the next compute from overwriting what the store still reads. Bulk stores
 * read through the async proxy: each thread fences its compute writes for it before the
 * first barrier, and after the store commits its bulk group and waits for its reads. */
static void plan_write_back(planner *p, ir_section *loop, ir_role role, bool release)
{
    if (p->bulk_stores)
        plan_role_op(p, loop, OP_FENCE, role)->fence = FENCE_PROXY_ASYNC;
    plan_role_op(p, loop, OP_BARRIER, role);
    if (release)
        plan_role_op(p, loop, OP_RELEASE, role)->bar = BAR_EMPTY;
    ir_op *store = plan_role_op(p, loop, OP_STORE, role);
    if (p->bulk_stores) {
        store->fence = FENCE_PROXY_ASYNC;
        store->dealt = true;
        plan_role_op(p, loop, OP_COMMIT, role);
        plan_role_op(p, loop, OP_WAIT, role)->n = 0;
    }
    plan_role_op(p, loop, OP_BARRIER, role);
}

void plan_mbar_consume(planner *p, ir_section *loop)
{
    plan_op(p, loop, OP_WAIT_PARITY, 0)->bar = BAR_FULL;
    plan_op(p, loop, OP_COMPUTE, 0);
    if (plan_has_outputs(p))
        plan_write_back(p, loop, ROLE_ALL, false);
    else
        plan_op(p, loop, OP_BARRIER, 0);
}

static ir_op *arrive_full(planner *p, ir_section *sec, int step_off, ir_role role)
{
    ir_op *op = plan_op(p, sec, OP_ARRIVE, step_off);
    op->bar = BAR_FULL;
    op->on_copies = true;
    op->guarded = true;
    op->role = role;
    return op;
}

ir_section *plan_mbar_roles_loop(planner *p)
{
    sched *sc = p->sc;
    sc->producer_threads = p->s->producer_warps * 32;
    sc->full_arrivals = sc->producer_threads;
    sc->empty_arrivals = sc->threads - sc->producer_threads;
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_role_op(p, loop, OP_ACQUIRE, ROLE_PRODUCER)->bar = BAR_EMPTY;
    return loop;
}

void plan_mbar_consume_role(planner *p, ir_section *loop)
{
    plan_role_op(p, loop, OP_WAIT_PARITY, ROLE_CONSUMER)->bar = BAR_FULL;
    plan_role_op(p, loop, OP_COMPUTE, ROLE_CONSUMER);
    if (plan_has_outputs(p))
        plan_write_back(p, loop, ROLE_CONSUMER, true);
    else
        plan_role_op(p, loop, OP_RELEASE, ROLE_CONSUMER)->bar = BAR_EMPTY;
}

/* Every thread copies and computes. */
static void plan_shared(planner *p, int S)
{
    p->sc->full_arrivals = p->sc->threads;
    ir_section *pro = plan_section(p, SEC_PROLOGUE, S);
    plan_copy(p, pro, 0);
    arrive_full(p, pro, 0, ROLE_ALL);
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_mbar_consume(p, loop);
    plan_copy(p, loop, S);
    arrive_full(p, loop, S, ROLE_ALL);
}

/* Producer warps copy, consumer warps compute; full and empty barriers hand slots over. */
static void plan_roles(planner *p)
{
    ir_section *loop = plan_mbar_roles_loop(p);
    plan_copy(p, loop, 0)->role = ROLE_PRODUCER;
    arrive_full(p, loop, 0, ROLE_PRODUCER);
    plan_mbar_consume_role(p, loop);
}

static bool plan(planner *p)
{
    int S = plan_ring_slots(p);
    p->sc->track = TRACK_BARRIER;
    plan_mbar_init(p);
    if (p->s->producer_warps)
        plan_roles(p);
    else
        plan_shared(p, S);
    return true;
}

/* ------------------------------------------------------------------ printing */

void emit_mbar_setup(kctx *k)
{
    kp(k, "__shared__ __align__(8) uint64_t pg_full[%d];\n", k->sc->nslots);
    if (k->sc->empty_arrivals)
        kp(k, "__shared__ __align__(8) uint64_t pg_empty[%d];\n", k->sc->nslots);
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_regions(k, op, REGION_SPLIT, emit_chunk_cp_async);
}

/* Thread 0 initialises each slot's barriers: in a loop over the slots, or slot 0's. */
void emit_mbar_init(kctx *k, const ir_op *op)
{
    (void)op;
    const int S = k->sc->nslots, empty = k->sc->empty_arrivals;
    const char *i = S > 1 ? "pg_i" : "0";
    kp(k, "if (threadIdx.x == 0)%s\n", S > 1 || empty ? " {" : "");
    if (S > 1)
        kp(k, "    for (int pg_i = 0; pg_i < %d; ++pg_i) {\n", S);
    k->ind += S > 1 ? 8 : 4;
    kp(k, "pg_mbar_init(&pg_full[%s], %d);\n", i, k->sc->full_arrivals);
    if (empty)
        kp(k, "pg_mbar_init(&pg_empty[%s], %d);\n", i, empty);
    k->ind -= S > 1 ? 8 : 4;
    kp(k, "%s%s", S > 1 ? "    }\n" : "", S > 1 || empty ? "}\n" : "");
}

void emit_mbar_fence(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "pg_fence_mbar_init();\n");
}

void emit_mbar_arrive(kctx *k, const ir_op *op)
{
    const char *bar = op->bar == BAR_FULL ? "pg_full" : "pg_empty";
    emit_slot_open(k, op);
    if (op->per_warp)
        kp(k, "pg_mbar_arrive_warp<%d>(&%s[%s]);\n", op->cluster ? k->sc->cluster : 1, bar,
           emit_slot(k, false));
    else
        kp(k, "%s(&%s[%s]);\n", op->on_copies ? "pg_cp_async_mbar_arrive" : "pg_mbar_arrive",
           bar, emit_slot(k, false));
    emit_step_close(k, op);
}

void emit_mbar_wait(kctx *k, const ir_op *op)
{
    bool empty = op->kind == OP_ACQUIRE || op->bar == BAR_EMPTY;
    const bool one = k->sc->nslots == 1;
    const char *slot = emit_slot(k, false), *use = one ? "pg_step" : "pg_use";
    emit_slot_open(k, op);
    if (!one)
        kp(k, "const int64_t pg_use = %s;\n", emit_use(k));
    kp(k, "pg_mbar_wait<%lldLL>(&%s[%s], (unsigned)(%s & 1)%s%s, \"%s %s barrier\", %s%s%s, "
          "%s);\n", k->u->opts.watchdog, empty ? "pg_empty" : "pg_full", slot, use,
       empty ? " ^ 1u" : "", op->parity_flip ? " ^ 1u" : "", k->s->name,
       empty ? "empty" : "full", one ? "" : "(int)(", slot, one ? "" : ")", use);
    emit_step_close(k, op);
}

void emit_mbar_barrier(kctx *k, const ir_op *op)
{
    /* A barrier of one role is the consumers' (the producers meet on the mbarriers). */
    if (op->cluster)
        kp(k, "pg_cluster_sync();\n");
    else if (op->role == ROLE_ALL)
        emit_print_barrier(k, op);
    else
        kp(k, "pg_role_barrier<%d>();\n", k->sc->threads - k->sc->producer_threads);
}

const mech_module mech_cp_async_mbarrier_module = {
    .plan = plan,
    .print = {
        [OP_COPY] = print_copy, [OP_INIT] = emit_mbar_init, [OP_FENCE] = emit_mbar_fence,
        [OP_ARRIVE] = emit_mbar_arrive, [OP_RELEASE] = emit_mbar_arrive, [OP_WAIT_PARITY] = emit_mbar_wait,
        [OP_ACQUIRE] = emit_mbar_wait, [OP_BARRIER] = emit_mbar_barrier, [OP_COMPUTE] = emit_print_compute,
        [OP_STORE] = emit_print_store,
    },
    .setup = emit_mbar_setup,
    .header = "pipert_mbarrier.cuh",
    .roles = true,
    .l2_policy = true,
    .hints = (1u << HINT_CACHE) | (1u << HINT_PREFETCH) | (1u << HINT_EVICT),
};
