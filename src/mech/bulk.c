/* mech_bulk: bulk copies (cp.async.bulk, sm_90) completing on the slot's full mbarrier by
 * transaction bytes, consumers waiting on its phase parity.
 *
 * One elected thread (thread 0) arms the slot's full barrier for the step: it arrives
 * once (the barrier counts one arrival) and expects exactly the bytes the step's bulk
 * copies deliver. The copies (pg_bulk_region) are the rows' 16-byte aligned middles inside
 * the array, one bulk copy each, dealt to the copying threads in turn: every one of them
 * passed the barrier that freed the slot, and a copy landing before the expectation only
 * takes the tx-count below zero until it. What bulk copies cannot move (the head and tail of a
 * row outside that middle, rows or columns outside the array, zero-filled; every chunk
 * of a launch whose pointers allow less than 16 bytes) every thread stores with ordinary
 * stores (the COPY's `stores`), which a block barrier publishes before the step's compute:
 *   - with S >= 2 slots the loop copies S steps ahead, after the block barrier that
 *     follows the compute (which frees the slot); the next iteration's barrier publishes
 *     the stores, and one barrier after the prologue those of the first S steps;
 *   - with one slot, copy, barrier, wait, compute, barrier.
 * The parity of each wait is that of the step's use of its slot (pg_step / S), counted
 * over the block's steps, so it carries across a persistent block's work items.
 *
 * The IR's ARRIVE_TX names the staged regions' bytes as the spec gives them (what the
 * verifier's copies deliver); the printed expectation is what the step's bulk copies
 * deliver (pg_bulk_bytes, from the row split the copies use: the region as copied, its
 * origin moved to a 16-byte boundary, less the stored edges), plus any difference the
 * IR's bytes have from the regions' (a fault, printed with --no-verify).
 *
 * With producer warps (warp specialization) the producers copy and the consumers compute:
 * full and empty barriers per slot hand the slots over (plan_roles), and every producer
 * thread arrives on the full barrier after its own stores. */
#include "mech.h"

/* The bytes of every staged input: what a step's copy (of all of them) delivers in the
 * verifier's model, and what its ARRIVE_TX expects. */
static long long input_bytes(const spec *s)
{
    long long bytes = 0;
    for (int i = 0; i < s->nstaged; ++i)
        if (!s->stages[i].is_output)
            bytes += s->stages[i].bytes;
    return bytes;
}

/* Step step_off's copy: every copying thread's share of the bulk copies, and its stores. */
static ir_op *plan_bulk_copy(planner *p, ir_section *sec, int step_off)
{
    ir_op *copy = plan_copy(p, sec, step_off);
    copy->stores = true;
    copy->dealt = true;
    return copy;
}

/* The full barrier's arrival of step step_off, expecting every staged input's bytes. */
static ir_op *plan_arm(planner *p, ir_section *sec, int step_off)
{
    ir_op *arm = plan_op(p, sec, OP_ARRIVE_TX, step_off);
    arm->bar = BAR_FULL;
    arm->bytes = input_bytes(p->s);
    return arm;
}

/* The elected thread arms the full barrier for step step_off, then the step's copy. */
static void plan_fill(planner *p, ir_section *sec, int step_off)
{
    plan_arm(p, sec, step_off)->guarded = true;
    plan_bulk_copy(p, sec, step_off);
}

/* Producer warps: they acquire the slot (its empty barrier; every producer thread waits,
 * so its stores follow the consumers' reads), copy, and then every producer thread
 * arrives on the full barrier, which counts them all: the elected one expecting the
 * bytes, the others plainly. Each arrival releases that thread's own stores to the
 * consumers, which no block barrier joins; a producers' barrier before one elected
 * arrival would release them only through the barrier's transitivity, which
 * compute-sanitizer's racecheck does not follow. The bulk copies, issued before the bytes
 * are expected, may land first (the tx-count goes below zero, as for a peer's multicast);
 * the phase completes only with the elected arrival. */
static void plan_roles(planner *p)
{
    ir_section *loop = plan_mbar_roles_loop(p);
    plan_bulk_copy(p, loop, 0)->role = ROLE_PRODUCER;
    ir_op *arm = plan_arm(p, loop, 0);
    arm->role = ROLE_PRODUCER;
    arm->all_arrive = true;
    plan_mbar_consume_role(p, loop);
}

bool plan_bulk(planner *p)
{
    int S = plan_ring_slots(p);
    p->bulk_stores = true;
    p->sc->track = TRACK_BARRIER;
    plan_mbar_init(p);
    if (p->s->producer_warps) {
        plan_roles(p);
        return true;
    }
    p->sc->full_arrivals = 1;
    if (S == 1) {
        ir_section *loop = plan_section(p, SEC_LOOP, 0);
        plan_fill(p, loop, 0);
        plan_op(p, loop, OP_BARRIER, 0);
        plan_mbar_consume(p, loop);
        return true;
    }
    plan_fill(p, plan_section(p, SEC_PROLOGUE, S), 0);
    plan_op(p, plan_section(p, SEC_PROLOGUE, 1), OP_BARRIER, 0);
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_mbar_consume(p, loop);
    plan_fill(p, loop, S);
    return true;
}

/* ------------------------------------------------------------------ printing */

/* The slot's full barrier and the stage's L2 policy (pg_pol_NAME, made where it has one). */
void emit_bulk_copy_args(kctx *k, const spec_stage *st, const char *name)
{
    if (st->evict != EVICT_DEFAULT)
        kp(k, "&pg_full[%s], pg_l2_hint<true>{pg_pol_%s}", emit_slot(k, true), name);
    else
        kp(k, "&pg_full[%s], pg_l2_hint<false>{0}", emit_slot(k, true));
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_region_calls(k, op, "pg_bulk_region", emit_bulk_copy_args);
}

static void tx_args(kctx *k, const spec_stage *st, const char *name)
{
    (void)st; (void)name;
    kp(k, "pg_tx");
}

void emit_bulk_arrive_tx(kctx *k, const ir_op *op, tx_expect expect)
{
    emit_step_open(k, op);
    kp(k, "if (threadIdx.x == 0) {\n");
    k->ind += 4;
    /* 0 unless the IR's bytes differ from the regions' (a fault, printed by --no-verify) */
    const char *tx = expect(k, op, op->bytes - input_bytes(k->s));
    kp(k, "pg_mbar_arrive_tx(&pg_full[%s], %s);\n", emit_slot(k, true), tx);
    k->ind -= 4;
    /* each of the role's other threads releases its own stores */
    if (op->all_arrive)
        kp(k, "} else {\n    pg_mbar_arrive(&pg_full[%s]);\n", emit_slot(k, true));
    kp(k, "}\n");
    emit_step_close(k, op);
}

/* FENCE: the barriers' initialisation, or the compute's writes of staged outputs, made
 * visible to the async proxy. */
void emit_bulk_fence(kctx *k, const ir_op *op)
{
    if (op->fence == FENCE_PROXY_ASYNC)
        kp(k, "pg_fence_proxy_async();\n");
    else
        emit_mbar_fence(k, op);
}

static void print_store(kctx *k, const ir_op *op)
{
    emit_store_calls(k, op, "pg_bulk_store_region");
}

/* The thread's bulk stores of the step form one bulk group (empty where it has no row);
 * the wait is for their reads of shared memory only (.read), all the next compute needs. */
void emit_bulk_commit(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "pg_bulk_commit();\n");
}

void emit_bulk_wait(kctx *k, const ir_op *op)
{
    kp(k, "pg_bulk_wait_read<%d>();\n", op->n);
}

/* What the step's bulk copies deliver depends on where its tile meets the array's edges
 * (the stored edges, the rows outside): counted at run time from the copies' row split. */
static const char *bulk_expect(kctx *k, const ir_op *op, long long fault)
{
    kp(k, "int64_t pg_tx = %lld;\n", fault);
    emit_region_calls(k, op, "pg_bulk_bytes", tx_args);
    return "pg_tx";
}

static void print_arrive_tx(kctx *k, const ir_op *op)
{
    emit_bulk_arrive_tx(k, op, bulk_expect);
}

const mech_module mech_bulk_module = {
    .plan = plan_bulk,
    .print = {MECH_BULK_PRINTERS, [OP_COPY] = print_copy, [OP_ARRIVE_TX] = print_arrive_tx,
              [OP_STORE] = print_store},
    .setup = emit_mbar_setup,
    .header = "pipert_bulk.cuh",
    .roles = true,
    .l2_policy = true,
    .hints = 1u << HINT_EVICT,   /* .L2::cache_hint; the bulk copy has no cache operator or prefetch */
    .row_copies = true,
};
