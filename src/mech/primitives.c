/* mech_primitives: the pipeline primitives of <cuda_pipeline_primitives.h>, cp.async
 * behind a C-style interface: __pipeline_memcpy_async per chunk (4, 8 or 16 bytes, the
 * tail of a region zero-filled by its zfill argument; chunks below 4 bytes copied
 * synchronously), __pipeline_commit per step and __pipeline_wait_prior(N).
 *
 * The schedule is cp.async's (plan_commit_groups); __pipeline_wait_prior(N) waits as for 8
 * when N is larger (17 slots and more), which only waits for more. The primitives take no
 * cache operator, prefetch size or eviction policy: the stage options that ask for them are
 * hints this lowering does not pass on. */
#include "mech.h"

static void chunk(kctx *k, const spec_stage *st, const char *name)
{
    (void)st;
    kp(k, "pg_prim_chunk<pg_vec_%s, %s>(pg_d, pg_s, pg_v)", name, emit_zero_whole(k));
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_regions(k, op, REGION_SPLIT, chunk);
}

static void print_commit(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "__pipeline_commit();\n");
}

static void print_wait(kctx *k, const ir_op *op)
{
    kp(k, "__pipeline_wait_prior(%d);\n", op->n);
}

const mech_module mech_primitives_module = {
    .plan = plan_commit_groups,
    .print = {
        [OP_COPY] = print_copy, [OP_COMMIT] = print_commit, [OP_WAIT] = print_wait,
        [OP_BARRIER] = emit_print_barrier, [OP_COMPUTE] = emit_print_compute,
        [OP_STORE] = emit_print_store,
    },
    .header = "pipert_primitives.cuh",
};
