/* mech_cp_async: PTX cp.async into a ring of slots, one commit group per step.
 *
 * With S >= 2 slots the loop waits for step t (S-2 groups may stay pending), then one
 * barrier both publishes step t to every thread and frees the slot that step t-1 used;
 * step t+S-1 is copied into it before step t is computed. With one slot, copy, wait and
 * compute of a step are separated by two barriers. Copies are 16, 8 or 4 bytes by
 * alignment (.cg for 16 unless `cache ca`), the tail of a region zero-filled through
 * src-size, with the spec's L2 prefetch size and eviction policy. */
#include "mech.h"

bool plan_commit_groups(planner *p)
{
    int S = plan_ring_slots(p);
    p->sc->track = TRACK_GROUPS;
    if (S == 1) {
        ir_section *loop = plan_section(p, SEC_LOOP, 0);
        plan_copy(p, loop, 0);
        plan_op(p, loop, OP_COMMIT, 0);
        plan_wait(p, loop, 0);
        plan_op(p, loop, OP_BARRIER, 0);
        plan_op(p, loop, OP_COMPUTE, 0);
        plan_op(p, loop, OP_BARRIER, 0);
        plan_store(p, loop);
        return true;
    }
    ir_section *pro = plan_section(p, SEC_PROLOGUE, S - 1);
    plan_copy(p, pro, 0);
    plan_op(p, pro, OP_COMMIT, 0);
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_wait(p, loop, S - 2);
    plan_op(p, loop, OP_BARRIER, 0);
    plan_copy(p, loop, S - 1);
    plan_op(p, loop, OP_COMMIT, S - 1);
    plan_op(p, loop, OP_COMPUTE, 0);
    if (plan_has_outputs(p)) {
        plan_op(p, loop, OP_BARRIER, 0);
        plan_store(p, loop);
    }
    return true;
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_regions(k, op, REGION_SPLIT, emit_chunk_cp_async);
}

static void print_commit(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "pg_cp_async_commit();\n");
}

static void print_wait(kctx *k, const ir_op *op)
{
    kp(k, "pg_cp_async_wait<%d>();\n", op->n);
}

void emit_chunk_cp_async(kctx *k, const spec_stage *st, const char *name)
{
    bool hint = st->evict != EVICT_DEFAULT;
    kp(k, "pg_copy_chunk_async<pg_vec_%s, %s, %d, %s, %s>(pg_d, pg_s, pg_v, %s%s)", name,
       st->cache == CACHE_CA ? "false" : "true", st->prefetch, hint ? "true" : "false",
       emit_zero_whole(k), hint ? "pg_pol_" : "0", hint ? name : "");
}

const mech_module mech_cp_async_module = {
    .plan = plan_commit_groups,
    .print = {
        [OP_COPY] = print_copy, [OP_COMMIT] = print_commit, [OP_WAIT] = print_wait,
        [OP_BARRIER] = emit_print_barrier, [OP_COMPUTE] = emit_print_compute,
        [OP_STORE] = emit_print_store,
    },
    .header = "pipert_cp_async.cuh",
    .l2_policy = true,
    .hints = (1u << HINT_CACHE) | (1u << HINT_PREFETCH) | (1u << HINT_EVICT),
};
