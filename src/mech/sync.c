/* mech_sync: the baseline. Ordinary loads into one slot, a barrier, the compute, and a
 * barrier before the slot is overwritten. */
#include "mech.h"

static bool plan(planner *p)
{
    plan_layout(p, 1);
    p->sc->track = TRACK_SYNC;
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_copy(p, loop, 0);
    plan_op(p, loop, OP_BARRIER, 0);
    plan_op(p, loop, OP_COMPUTE, 0);
    plan_op(p, loop, OP_BARRIER, 0);
    plan_store(p, loop);
    return true;
}

/* A chunk wholly outside the array is one store of zeros (ZERO_WHOLE), whatever the walk:
 * with byte stores instead, ptxas spilled 12-36 bytes in the 16-byte kernels of hash,
 * gemv and minmax_types (sm_90, CUDA 13.0). */
static void chunk(kctx *k, const spec_stage *st, const char *name)
{
    (void)st;
    kp(k, "pg_copy_chunk_sync<pg_vec_%s, true>(pg_d, pg_s, pg_v)", name);
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_regions(k, op, REGION_CHECKED, chunk);
}

const mech_module mech_sync_module = {
    .plan = plan,
    .print = {
        [OP_COPY] = print_copy, [OP_BARRIER] = emit_print_barrier,
        [OP_COMPUTE] = emit_print_compute, [OP_STORE] = emit_print_store,
    },
};
