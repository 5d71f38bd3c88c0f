/* mech_cg: cooperative_groups::memcpy_async + cg::wait / cg::wait_prior<N>.
 *
 * How cg counts (cooperative_groups/details/async.h, CUDA 13): every memcpy_async call
 * copies one contiguous range and then commits a cp.async group in each thread of the
 * group (__pipeline_commit), even when it copies nothing; wait_prior<N>(g) is
 * __pipeline_wait_prior(N) (cp.async.wait_group, with N above 8 waiting as for 8) followed
 * by g.sync(), and wait(g) is the same with N = 0. So N counts calls, per thread, and a
 * step's copies are several calls: one per row of each staged region (rows of a rank-2 or
 * rank-3 region are separate ranges). pg_cg_region makes one call of the whole block per
 * row, inside the array or not (a block-wide call deals the row's chunks to the threads
 * one each; cg's calls on a tile of the block copy a row's last chunk again from several
 * lanes, races that racecheck reports), so that every step commits the same number C of
 * groups, the regions' rows, in every thread.
 *
 * The schedule is cp.async's (plan_commit_groups): the IR's commit group of a step is
 * the C groups of its calls, COPY printing the calls (which commit) and COMMIT printing,
 * for a step past the block's last, C empty calls instead, so that the count of groups
 * per step never changes (trip counts 0, 1, < S included). WAIT n (steps) is
 * wait_prior<n * C> (cg::wait for 0). Where n * C exceeds 8, cg waits until 8 groups
 * pend: for more than the IR's WAIT allows to pend, never less, so what the verifier
 * proves still holds; a step's copies then stay in flight only in part while the block
 * waits for the step before (S-2 steps of 8 / C rows each overlap fully when C <= 8).
 * cg::wait_prior syncs the block after the wait, which is the IR's BARRIER after it.
 *
 * memcpy_async copies only bytes inside the array, and has no zero-fill: the chunks a
 * staged region needs zero (a halo outside the array, the end of a row, rows outside the
 * array) are stored synchronously by pg_cg_region, complete before the block sync that
 * publishes the step. The API takes no cache operator, prefetch size or eviction policy:
 * those stage options are hints this lowering does not pass on. */
#include "pipegen.h"

/* Rows of a staged region (planes times rows): the layout widens only the fastest
 * dimension, so the spec's extents count them. */
static long long region_rows(const spec_stage *st)
{
    long long rows = 1;
    for (int d = 0; d < st->rank - 1; ++d)
        rows *= st->extent[d];
    return rows;
}

/* C: the memcpy_async calls (commit groups) of one step, per thread: pg_cg_region's one
 * per row of each staged input. */
static long long step_batches(const spec *s)
{
    long long c = 0;
    for (int i = 0; i < s->nstages; ++i)
        if (!s->stages[i].is_output)
            c += region_rows(&s->stages[i]);
    return c;
}

/* ------------------------------------------------------------------ printing */

/* The block's group, which every memcpy_async and wait names. */
static void setup(kctx *k)
{
    kp(k, "const cooperative_groups::thread_block pg_block = cooperative_groups::"
          "this_thread_block();\n");
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_step_open(k, op);
    for (int i = 0; i < k->s->nstages; ++i) {
        if (k->s->stages[i].is_output || (op->stage >= 0 && op->stage != i))
            continue;
        emit_region_call(k, i, "pg_cg_region");
        kp(k, ", pg_ptid, pg_block);\n");
    }
    emit_step_close(k, op);
}

/* The groups of a step that copied nothing. */
static void print_commit(kctx *k, const ir_op *op)
{
    long long c = step_batches(k->s);
    int first = -1;
    for (int i = k->s->nstages - 1; i >= 0; --i)
        if (!k->s->stages[i].is_output)
            first = i;
    if (first < 0) {
        kp(k, "/* no staged input: no memcpy_async batches to commit */\n");
        return;
    }
    if (op->step_off)
        kp(k, "if (%s + %d >= pg_trips)\n", k->var, op->step_off);
    else
        kp(k, "if (%s >= pg_trips)\n", k->var);
    kp(k, "    pg_cg_empty_batches<%lld>(pg_block, pg_smem, pg_g_%s);\n", c,
       k->s->arrays[k->s->stages[first].array].name);
}

static void print_wait(kctx *k, const ir_op *op)
{
    long long n = op->n * step_batches(k->s);
    if (n == 0)
        kp(k, "cooperative_groups::wait(pg_block);\n");
    else
        kp(k, "cooperative_groups::wait_prior<%lld>(pg_block);\n", n);
}

/* The operation before op in its section, if any. */
static const ir_op *prev_op(const kctx *k, const ir_op *op)
{
    for (int i = 0; i < k->sc->nsecs; ++i) {
        const ir_section *sec = &k->sc->secs[i];
        if (op > sec->ops && op < sec->ops + sec->nops)
            return op - 1;
    }
    return NULL;
}

/* A barrier right after a wait is the block sync that cg's wait ends with. */
static void print_barrier(kctx *k, const ir_op *op)
{
    const ir_op *prev = prev_op(k, op);
    if (prev && prev->kind == OP_WAIT)
        kp(k, "/* the block barrier: cg's wait above syncs the block */\n");
    else
        emit_print_barrier(k, op);
}

const mech_module mech_cg_module = {
    .plan = plan_commit_groups,
    .print = {
        [OP_COPY] = print_copy, [OP_COMMIT] = print_commit, [OP_WAIT] = print_wait,
        [OP_BARRIER] = print_barrier, [OP_COMPUTE] = emit_print_compute,
        [OP_STORE] = emit_print_store,
    },
    .setup = setup,
    .includes = "#include <cooperative_groups.h>\n#include <cooperative_groups/memcpy_async.h>\n"
                "#include <cuda/barrier>\n#define PG_API_CG 1\n",
    .support = tmpl_pg_cuda_api_cuh,
};
