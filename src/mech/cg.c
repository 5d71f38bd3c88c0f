/* mech_cg: cooperative_groups::memcpy_async + cg::wait / cg::wait_prior<N>.
 *
 * How cg counts (cooperative_groups/details/async.h, CUDA 13): every memcpy_async call
 * copies one contiguous range and then commits a cp.async group in each thread of the
 * group (__pipeline_commit), even when it copies nothing; wait_prior<N>(g) is
 * __pipeline_wait_prior(N) (cp.async.wait_group, with N above 8 waiting as for 8) followed
 * by g.sync(), and wait(g) is the same with N = 0. So N counts calls, per thread, and a
 * step's copies are several calls: rows of a region are separate ranges. pg_cg_region
 * deals a region's rows to tiles of the block, one call per row, every tile making the
 * same number of calls (pg_cg_calls, empty ones where a tile has no row or the row is
 * outside the array), so that every step commits the same number C of groups in every
 * thread: pg_cg_step, the sum over the staged inputs, a constant of the kernel that
 * depends on its copy width (template arguments, printed by setup).
 *
 * The schedule is cp.async's (plan_commit_groups): the IR's commit group of a step is
 * the C groups of its calls, COPY printing the calls (which commit) and COMMIT printing,
 * for a step past the block's last, C empty calls instead, so that the count of groups
 * per step never changes (trip counts 0, 1, < S included). WAIT n (steps) is
 * wait_prior<n * C> (cg::wait for 0). Where n * C exceeds 8, cg waits until 8 groups
 * pend: for more than the IR's WAIT allows to pend, never less, so what the verifier
 * proves still holds; a step's copies then stay in flight only in part while the block
 * waits for the step before. cg::wait_prior syncs the block after the wait, which is the
 * IR's BARRIER after it.
 *
 * memcpy_async copies only bytes inside the array, and has no zero-fill: the chunks a
 * staged region needs zero (a halo outside the array, the end of a row, rows outside the
 * array) are stored synchronously by pg_cg_region, complete before the block sync that
 * publishes the step. The API takes no cache operator, prefetch size or eviction policy:
 * those stage options are hints this lowering does not pass on. */
#include "mech.h"

/* ------------------------------------------------------------------ printing */

/* The block's group, which every wait names, and C, the calls of one step. */
static void setup(kctx *k)
{
    kp(k, "const cooperative_groups::thread_block pg_block = cooperative_groups::"
          "this_thread_block();\n");
    kdecl(k, "pg_cg_step", "constexpr int pg_cg_step = ");
    const char *plus = "";
    for (int i = 0; i < k->s->nstaged; ++i) {
        if (k->s->stages[i].is_output)
            continue;
        kp(k, "%spg_cg_calls", plus);
        emit_region_shape(k, i, emit_copy_threads(k));
        kp(k, "()");
        plus = " + ";
    }
    kp(k, "%s;\n", *plus ? "" : "0");
}

static void copy_args(kctx *k, const spec_stage *st, const char *name)
{
    (void)st;
    (void)name;
    kp(k, "pg_block");
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_region_calls(k, op, "pg_cg_region", copy_args);
}

/* The groups of a step that copied nothing. */
static void print_commit(kctx *k, const ir_op *op)
{
    int first = -1;
    for (int i = k->s->nstaged - 1; i >= 0; --i)
        if (!k->s->stages[i].is_output)
            first = i;
    if (first < 0) {
        kp(k, "/* no staged input: no memcpy_async batches to commit */\n");
        return;
    }
    kp(k, "if (!(%s))\n", emit_live(k, emit_step(k, op->step_off)));
    kp(k, "    pg_cg_empty_batches<pg_cg_step>(pg_block, pg_smem, pg_g_%s);\n",
       k->s->arrays[k->s->stages[first].array].name);
}

static void print_wait(kctx *k, const ir_op *op)
{
    if (op->n == 0)
        kp(k, "cooperative_groups::wait(pg_block);\n");
    else
        kp(k, "cooperative_groups::wait_prior<%d * pg_cg_step>(pg_block);\n", op->n);
}

/* cp.async's schedule, where the block barrier after each wait is cg's own: wait and
 * wait_prior end with a sync of the block. */
static bool plan(planner *p)
{
    if (!plan_commit_groups(p))
        return false;
    for (int i = 0; i < p->sc->nsecs; ++i) {
        ir_section *sec = &p->sc->secs[i];
        for (int j = 1; j < sec->nops; ++j)
            if (sec->ops[j].kind == OP_BARRIER && sec->ops[j - 1].kind == OP_WAIT)
                sec->ops[j].implied = true;
    }
    return true;
}

const mech_module mech_cg_module = {
    .plan = plan,
    .print = {
        [OP_COPY] = print_copy, [OP_COMMIT] = print_commit, [OP_WAIT] = print_wait,
        [OP_BARRIER] = emit_print_barrier, [OP_COMPUTE] = emit_print_compute,
        [OP_STORE] = emit_print_store,
    },
    .setup = setup,
    .header = "pipert_cg.cuh",
};
