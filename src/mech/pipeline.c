/* mech_pipeline: libcu++'s cuda::pipeline, three ways.
 *
 * pipeline: one pipeline of block scope (pipeline_shared_state<thread_scope_block, S> in
 * shared memory, cuda::make_pipeline(block, &state)), the unified prolog/loop/epilog of the
 * CUDA programming guide: every thread acquires, copies into and commits step t+S-1, then
 * waits for, computes and releases step t. Its stage barriers are what the IR calls the
 * full (produced) and empty (consumed) barriers: producer_acquire waits for the empty
 * barrier's phase, producer_commit arrives on the full one when the thread's copies
 * complete (cp.async.mbarrier.arrive), consumer_wait waits for the full barrier's phase and
 * consumer_release arrives on the empty one; every thread arrives on both.
 *
 * pipeline-roles: the same pipeline partitioned by cuda::pipeline_role: the first
 * producer_warps warps (1 when the spec asks for none) acquire, copy and commit; the
 * others wait, compute and release, as cp.async.mbarrier's warp-specialized schedule.
 *
 * pipeline-thread: a pipeline of thread scope per thread (cuda::make_pipeline()), which is
 * cp.async's commit groups under another name: producer_commit is commit_group,
 * pipeline_consumer_wait_prior<N> is wait_group N (as for 8 when N is larger, which only
 * waits for more), and __syncthreads publishes the step, so the schedule is cp.async's
 * (TRACK_GROUPS). Its producer_acquire and consumer_release do nothing (the slots are the
 * ring's, guarded by the barrier): acquire is printed where each step's batch opens,
 * release not at all.
 *
 * The block pipeline keeps its own head and tail: the IR's step of an acquire, commit, wait
 * or release must be the pipeline's. It is, because every thread of a role produces and
 * consumes the steps in order, one acquire and one commit per produced step and one wait
 * and one release per consumed step; a guarded step past the block's last skips its
 * acquire, copy and commit together, and no one waits for it.
 *
 * cuda::memcpy_async copies whole chunks of 4, 8 or 16 bytes (cp.async; the pipeline
 * overloads never use the bulk copies); a chunk that leaves the array is stored with plain
 * zero-filling stores (pg_cuda_chunk), complete before the thread commits. A stage's
 * `evict` policy reaches the copies as an annotated_ptr access property of the source
 * (pg_evict); the APIs take no cache operator or prefetch size: those stage options are
 * hints that these lowerings do not pass on.
 *
 * compute-sanitizer's synccheck (CUDA 13.0) reports "Missing wait" for producer_commit,
 * which arrives twice on the stage's barrier (cp.async.mbarrier.arrive without .noinc,
 * then arrive()): it reports the programming guide's own pipeline example alike, and the
 * PTX ISA's example of that instruction; the block pipelines cannot be checked by it. */
#include "mech.h"

/* ------------------------------------------------------------------ planning */

/* The stage barriers are initialised by cuda::make_pipeline (thread 0 of the block), which
 * then syncs the block: INIT, then the BARRIER it implies, in the kernel's frame. */
static void plan_init(planner *p)
{
    ir_section *init = plan_section(p, SEC_FRAME, 1);
    plan_op(p, init, OP_INIT, 0);
    plan_op(p, init, OP_BARRIER, 0)->implied = true;
}
static ir_op *role_op(planner *p, ir_section *sec, ir_op_kind kind, int step_off, ir_role role)
{
    ir_op *op = plan_op(p, sec, kind, step_off);
    op->role = role;
    return op;
}

/* producer_acquire, the copies and producer_commit of one step, skipped together past
 * the block's last step. */
static void plan_produce(planner *p, ir_section *sec, int step_off, ir_role role)
{
    ir_op *acq = role_op(p, sec, OP_ACQUIRE, step_off, role);
    acq->bar = BAR_EMPTY;
    acq->guarded = true;
    plan_copy(p, sec, step_off)->role = role;
    ir_op *commit = role_op(p, sec, OP_ARRIVE, step_off, role);
    commit->bar = BAR_FULL;
    commit->on_copies = true;
    commit->guarded = true;
}

/* consumer_wait, the compute and consumer_release of step t. Staged outputs are written
 * by the compute and stored after a barrier of the computing threads; a second barrier
 * keeps the next compute from overwriting them before every store read them. */
static void plan_consume(planner *p, ir_section *loop, ir_role role)
{
    role_op(p, loop, OP_WAIT_PARITY, 0, role)->bar = BAR_FULL;
    role_op(p, loop, OP_COMPUTE, 0, role);
    if (plan_has_outputs(p))
        role_op(p, loop, OP_BARRIER, 0, role);
    role_op(p, loop, OP_RELEASE, 0, role)->bar = BAR_EMPTY;
    if (plan_has_outputs(p)) {
        role_op(p, loop, OP_STORE, 0, role);
        role_op(p, loop, OP_BARRIER, 0, role);
    }
}

/* Every thread produces and consumes: S-1 steps ahead, so that the acquire of step t+S-1
 * waits for the release of step t-1, which every thread gave before. */
static bool plan_block(planner *p)
{
    sched *sc = p->sc;
    int S = plan_ring_slots(p);
    sc->track = TRACK_BARRIER;
    sc->full_arrivals = sc->empty_arrivals = sc->threads;
    plan_init(p);
    if (S > 1)
        plan_produce(p, plan_section(p, SEC_PROLOGUE, S - 1), 0, ROLE_ALL);
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_produce(p, loop, S - 1, ROLE_ALL);
    plan_consume(p, loop, ROLE_ALL);
    return true;
}

/* The producer warps run S steps ahead of the consumers, paced by the stage barriers. */
static bool plan_roles(planner *p)
{
    sched *sc = p->sc;
    const spec *s = p->s;
    /* sema checked that a consumer warp is left (mech_min_producer_warps) */
    sc->producer_threads = (s->producer_warps ? s->producer_warps : 1) * 32;
    plan_ring_slots(p);
    sc->track = TRACK_BARRIER;
    sc->full_arrivals = sc->producer_threads;
    sc->empty_arrivals = sc->threads - sc->producer_threads;
    plan_init(p);
    ir_section *loop = plan_section(p, SEC_LOOP, 0);
    plan_produce(p, loop, 0, ROLE_PRODUCER);
    plan_consume(p, loop, ROLE_CONSUMER);
    return true;
}

/* ------------------------------------------------------------------ printing */

/* One chunk through cuda::memcpy_async(dst, src, aligned_size_t<VEC>, pg_pipe), the
 * stage's `evict` policy an annotated_ptr property of the source. */
static void chunk(kctx *k, const spec_stage *st, const char *name)
{
    kp(k, "pg_cuda_chunk<pg_vec_%s, %s>(pg_d, pg_s, pg_v, pg_pipe, pg_evict<%d>())", name,
       emit_zero_whole(k), (int)st->evict);
}

/* The pipeline of the block (with roles: the role of this thread); its shared state is
 * a static __shared__ object, whose defaulted constructor nvcc would warn about although
 * make_pipeline initialises it. */
static void setup_block(kctx *k)
{
    kp(k, "#pragma nv_diagnostic push\n#pragma nv_diag_suppress static_var_with_dynamic_init\n"
          "__shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, %d> pg_pstate;\n"
          "#pragma nv_diagnostic pop\n", k->sc->nslots);
}

/* INIT: the pipeline over the shared state (its barriers initialised, then the block
 * synced), partitioned by role where the schedule has producer warps. */
static void print_init(kctx *k, const ir_op *op)
{
    (void)op;
    if (k->sc->producer_threads)
        kp(k, "const cuda::pipeline_role pg_role = (int)threadIdx.x < %d\n"
              "    ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;\n"
              "cuda::pipeline<cuda::thread_scope_block> pg_pipe =\n"
              "    cuda::make_pipeline(cooperative_groups::this_thread_block(), &pg_pstate, "
              "pg_role);\n", k->sc->producer_threads);
    else
        kp(k, "cuda::pipeline<cuda::thread_scope_block> pg_pipe =\n"
              "    cuda::make_pipeline(cooperative_groups::this_thread_block(), &pg_pstate);\n");
}

static void setup_thread(kctx *k)
{
    kp(k, "cuda::pipeline<cuda::thread_scope_thread> pg_pipe = cuda::make_pipeline();\n");
}

/* A call on the pipeline, in the guard of its step when the operation has one. */
static void print_call(kctx *k, const ir_op *op, const char *call)
{
    if (!op->guarded) {
        kp(k, "pg_pipe.%s();\n", call);
        return;
    }
    kp(k, "if (%s)\n    pg_pipe.%s();\n", emit_live(k, emit_step(k, op->step_off)), call);
}

static void print_acquire(kctx *k, const ir_op *op) { print_call(k, op, "producer_acquire"); }
static void print_commit(kctx *k, const ir_op *op) { print_call(k, op, "producer_commit"); }
static void print_wait(kctx *k, const ir_op *op) { print_call(k, op, "consumer_wait"); }
static void print_release(kctx *k, const ir_op *op) { print_call(k, op, "consumer_release"); }

/* A region inside its array takes pg_region_split's loop, which checks nothing per chunk:
 * checked, each chunk's row and column tests sat between the memcpy_async calls of a
 * step. H200, in turns, 3 rounds, of the same-shape reference, checked -> split: colsum
 * 0.650 -> 0.886 (persistent), blur 0.608 -> 0.677, jacobi2d 0.834 -> 0.880, stencil7
 * 0.469 -> 0.477; hash, saxpy and layernorm within 0.4%, rgba 0.800 -> 0.790. With roles
 * the producer warps copy every chunk of a step (a few threads, dozens of chunks each),
 * and for one or two warps the loop takes the row offset instead of the index math. */
static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_regions(k, op, REGION_SPLIT, chunk);
}

static void print_barrier(kctx *k, const ir_op *op)
{
    if (op->role == ROLE_ALL)
        emit_print_barrier(k, op);
    else
        kp(k, "pg_role_barrier<%d>();\n", k->sc->threads - k->sc->producer_threads);
}

/* pipeline-thread's walk: split over tiles with rows, where a checked chunk tests its row
 * as well as its column; H200, in turns, 3 rounds, of the same-shape reference, checked ->
 * split: colsum 0.678 -> 0.939, rgba 0.903 -> 0.977, jacobi2d 0.872 -> 0.926, blur 0.634
 * -> 0.693, stencil7 0.520 -> 0.523, layernorm 1.010 -> 1.004. Over rank-1 tiles the
 * check is one comparison, and split, hash ran at 0.942 against 1.024 (saxpy alike
 * either way); on the H100 hash had taken 8 more registers and spilled. */
static region_walk thread_walk(const spec *s)
{
    return s->tile_rank >= 2 ? REGION_SPLIT : REGION_CHECKED;
}

/* pipeline-thread: each step's batch opens with producer_acquire (a no-op, but the API's
 * contract), whether or not the step copies anything. */
static void print_thread_copy(kctx *k, const ir_op *op)
{
    kp(k, "pg_pipe.producer_acquire();\n");
    emit_copy_regions(k, op, thread_walk(k->s), chunk);
}

static void print_thread_commit(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "pg_pipe.producer_commit();\n");
}

static void print_thread_wait(kctx *k, const ir_op *op)
{
    kp(k, "cuda::pipeline_consumer_wait_prior<%d>(pg_pipe);\n", op->n);
}

#define PIPELINE_PRINTERS                                                                   \
    [OP_ACQUIRE] = print_acquire, [OP_ARRIVE] = print_commit,                               \
    [OP_WAIT_PARITY] = print_wait, [OP_RELEASE] = print_release,                            \
    [OP_BARRIER] = print_barrier, [OP_COMPUTE] = emit_print_compute, [OP_INIT] = print_init,  \
    [OP_STORE] = emit_print_store

const mech_module mech_pipeline_module = {
    .plan = plan_block,
    .print = {PIPELINE_PRINTERS, [OP_COPY] = print_copy},
    .setup = setup_block,
    .header = "pipert_memcpy_async.cuh",
    .hints = 1u << HINT_EVICT,   /* pg_evict: an annotated_ptr property */
};

const mech_module mech_pipeline_roles_module = {
    .plan = plan_roles,
    .print = {PIPELINE_PRINTERS, [OP_COPY] = print_copy},
    .setup = setup_block,
    .header = "pipert_memcpy_async.cuh",
    .hints = 1u << HINT_EVICT,   /* pg_evict: an annotated_ptr property */
    .roles = true,
    .min_producer_warps = 1,
};

const mech_module mech_pipeline_thread_module = {
    .plan = plan_commit_groups,
    .print = {
        [OP_COPY] = print_thread_copy, [OP_COMMIT] = print_thread_commit,
        [OP_WAIT] = print_thread_wait, [OP_BARRIER] = emit_print_barrier,
        [OP_COMPUTE] = emit_print_compute, [OP_STORE] = emit_print_store,
    },
    .setup = setup_thread,
    .header = "pipert_memcpy_async.cuh",
    .hints = 1u << HINT_EVICT,   /* pg_evict: an annotated_ptr property */
};
