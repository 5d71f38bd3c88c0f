/* mech_barrier: cuda::memcpy_async bound to a cuda::barrier<thread_scope_block> per slot.
 *
 * Thread 0 initialises the S barriers in shared memory (one arrival per thread), fences
 * the initialisation for the async proxy and a block barrier publishes it. Step s's
 * copies are cuda::memcpy_async(dst, src, aligned_size_t<VEC>, bar[s % S]) calls
 * (pg_bar_region): the copies hold the barrier's current phase until they complete. With
 * cp.async (sm_80, or chunks under 16 bytes) each thread calls once per chunk and libcu++
 * adds cp.async.mbarrier.arrive; on sm_90 with 16-byte chunks libcu++ makes every call one
 * bulk copy with expect_tx, so there one thread calls once per row (a call per chunk would
 * be a bulk copy per 16 bytes: saxpy at 0.41 of cudaMemcpy against 1.01). Consumers
 * arrive on the slot's barrier and wait for the phase of the step's use (arrive() and
 * wait_parity(), arrive_and_wait split so that each is one IR operation): in the IR an
 * ARRIVE on_copies and a WAIT_PARITY on the full barrier at consume time.
 *
 * With S >= 2 slots, S-1 steps are copied ahead; the loop waits for step t, copies step
 * t+S-1 into the slot of step t-1 and computes step t. No other barrier frees that slot:
 * every thread arrived at step t's barrier after its compute of step t-1, so passing the
 * wait proves that all of them are done with it. Likewise a staged output, stored after a
 * block barrier, is overwritten only by the next step's compute, after its wait. With one
 * slot a block barrier after the compute frees the slot for the next copy.
 *
 * Chunks that leave the array (and chunks below 4 bytes; on the row path, every chunk a
 * row's call does not cover) are plain zero-filling stores, complete before the thread
 * arrives. A stage's `evict` policy reaches the copies as an
 * annotated_ptr access property of the source (pg_evict); the API takes no cache operator
 * or prefetch size: those stage options are hints this lowering does not pass on.
 *
 * compute-sanitizer's synccheck (CUDA 13.0) reports "Missing wait" when a thread arrives
 * on a barrier twice in one phase, which memcpy_async does by design where it copies with
 * cp.async (cp.async.mbarrier.arrive without .noinc per call, then arrive()): it reports the
 * programming guide's own cuda::barrier example alike; this lowering cannot be checked
 * by it. */
#include "mech.h"

/* arrive(), then wait_parity() for the phase of step t's use of its slot. */
static void plan_arrive_wait(planner *p, ir_section *loop)
{
    ir_op *arrive = plan_op(p, loop, OP_ARRIVE, 0);
    arrive->bar = BAR_FULL;
    arrive->on_copies = true;
    arrive->guarded = true;
    plan_op(p, loop, OP_WAIT_PARITY, 0)->bar = BAR_FULL;
}

static bool plan(planner *p)
{
    sched *sc = p->sc;
    int S = plan_ring_slots(p);
    sc->track = TRACK_BARRIER;
    sc->full_arrivals = sc->threads;
    plan_mbar_init(p);
    ir_section *loop;
    if (S == 1) {
        loop = plan_section(p, SEC_LOOP, 0);
        plan_copy(p, loop, 0);
        plan_arrive_wait(p, loop);
    } else {
        plan_copy(p, plan_section(p, SEC_PROLOGUE, S - 1), 0);
        loop = plan_section(p, SEC_LOOP, 0);
        plan_arrive_wait(p, loop);
        plan_copy(p, loop, S - 1);
    }
    plan_op(p, loop, OP_COMPUTE, 0);
    if (S == 1 || plan_has_outputs(p))
        plan_op(p, loop, OP_BARRIER, 0);
    plan_store(p, loop);
    return true;
}

/* ------------------------------------------------------------------ printing */

/* The barriers are static __shared__ objects, whose defaulted constructor nvcc would warn
 * about although init() is what initialises them. */
static void setup(kctx *k)
{
    kp(k, "#pragma nv_diagnostic push\n#pragma nv_diag_suppress static_var_with_dynamic_init\n"
          "__shared__ cuda::barrier<cuda::thread_scope_block> pg_bar[%d];\n"
          "#pragma nv_diagnostic pop\n", k->sc->nslots);
}

static void print_init(kctx *k, const ir_op *op)
{
    (void)op;
    if (k->sc->nslots == 1)
        kp(k, "if (threadIdx.x == 0)\n    init(&pg_bar[0], %d);\n", k->sc->full_arrivals);
    else
        kp(k, "if (threadIdx.x == 0) {\n    for (int pg_i = 0; pg_i < %d; ++pg_i)\n"
              "        init(&pg_bar[pg_i], %d);\n}\n", k->sc->nslots, k->sc->full_arrivals);
}

/* The slot's barrier and the stage's L2 policy (pg_evict: an annotated_ptr property). */
static void copy_args(kctx *k, const spec_stage *st, const char *name)
{
    (void)name;
    kp(k, "pg_bar[%s], pg_evict<%d>()", emit_slot(k, true), (int)st->evict);
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_region_calls(k, op, "pg_bar_region", copy_args);
}

static void print_arrive(kctx *k, const ir_op *op)
{
    emit_slot_open(k, op);
    kp(k, "(void)pg_bar[%s].arrive();\n", emit_slot(k, false));
    emit_step_close(k, op);
}

static void print_wait(kctx *k, const ir_op *op)
{
    emit_slot_open(k, op);
    const char *fmt = k->sc->nslots > 1 ? "pg_bar[%s].wait_parity(((%s) & 1) != %d);\n"
                                        : "pg_bar[%s].wait_parity((%s & 1) != %d);\n";
    kp(k, fmt, emit_slot(k, false), emit_use(k), op->parity_flip);
    emit_step_close(k, op);
}

const mech_module mech_barrier_module = {
    .plan = plan,
    .print = {
        [OP_INIT] = print_init, [OP_FENCE] = emit_mbar_fence, [OP_COPY] = print_copy, [OP_ARRIVE] = print_arrive,
        [OP_WAIT_PARITY] = print_wait, [OP_BARRIER] = emit_print_barrier,
        [OP_COMPUTE] = emit_print_compute, [OP_STORE] = emit_print_store,
    },
    .setup = setup,
    .header = "pipert_memcpy_async.cuh",
    .hints = 1u << HINT_EVICT,   /* pg_evict: an annotated_ptr property */
};
