/* mech/mech.h: what the lowering modules share with the planner and the kernel printer.
 *
 * Internal to src/: plan.c, emit*.c and the modules of this folder include it; the
 * phases that do not print or plan a lowering see only pipegen.h. */
#ifndef PIPEGEN_MECH_H
#define PIPEGEN_MECH_H

#include "pipegen.h"

/* ================================================================= lowerings
 *
 * A lowering (the code's `mech`) is one module (mech/NAME.c): a planner that fills the
 * schedule IR and one printer per IR operation it uses. What every lowering shares is in
 * plan.c (the plan_* helpers) and emit_kernel.c (the kctx helpers); the registry is
 * mech/registry.c. */

typedef struct planner {
    arena *a;
    diag_ctx *d;
    const spec *s;
    sched *sc;
    bool bulk_stores;            /* staged outputs go back by bulk stores (the async proxy):
                                    plan_mbar_consume and plan_mbar_consume_role plan the
                                    proxy fence, the commit and the wait for their reads */
} planner;

ir_section *plan_section(planner *p, ir_section_kind kind, int count);
ir_op *plan_op(planner *p, ir_section *sec, ir_op_kind kind, int step_off);
/* A guarded copy of every staged input of step loopvar+step_off. */
ir_op *plan_copy(planner *p, ir_section *sec, int step_off);
ir_op *plan_wait(planner *p, ir_section *sec, int n);
/* Whether the spec stages outputs, and a STORE of the step (when it does). Staged outputs
 * have one slot: written by COMPUTE, read by STORE, each separated from the other by a
 * BARRIER. */
bool plan_has_outputs(const planner *p);
void plan_store(planner *p, ir_section *sec);
/* Lay out staged region si for nslots slots, an input's fastest dimension widened to
 * row_align bytes (16 or more) where its origins keep that, swizzled by the span
 * swizzle_of gives (NULL: none): the default layout, and what a module's own
 * (mech_module.layout) is built from. */
void plan_lay_out_stage(planner *p, int si, int nslots, int row_align,
                        int (*swizzle_of)(const spec *s, const copy_plan *cp, int si));
/* Fix the ring size, the shared-memory layout and each stage's copy width. */
void plan_layout(planner *p, int nslots);
/* plan_layout with the ring's slots on the schedule's architecture (`stages N, M, ...`:
 * the first depth whose layout fits its shared memory); returns them. */
int plan_ring_slots(planner *p);

struct emit_unit;
/* How a region's chunks are walked: REGION_CHECKED (pg_region: each chunk checked against
 * the array), or REGION_SPLIT (pg_region_split: a region inside its array checks nothing)
 * where a lowering's chunk copy has a costly path for a chunk at an array's end, where
 * producer warps copy every chunk, or where the checks sit between async calls
 * (pipeline; pipeline-thread over tiles with rows): pipert_device.cuh says which measured
 * faster. */
typedef enum { REGION_CHECKED, REGION_SPLIT } region_walk;

/* The state of printing one kernel. */
typedef struct kctx {
    strbuf *out;
    const struct emit_unit *u;
    const spec *s;
    const sched *sc;
    const char *var;             /* the current section's loop variable */
    int ind;                     /* indentation of the current block, in spaces */
    ir_role role;                /* the role being printed (ROLE_ALL: no role branches) */
    int sm;                      /* the architecture the kernel is printed for */
    bool origin_hoisted;         /* the loop's trip declared its own step's tile origin and
                                    slot: its operations of that step use them */
    region_walk walk;            /* the walk of the region copy being printed */
} kctx;

/* Print at the current indentation; every line of the text is indented. */
void kp(kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An optional declaration of `name`, one line: the kernel keeps it only where a later
 * line of its scope names it (emit_kernel prunes the others), so that the generated code
 * declares what it uses and needs no casts to void. */
void kdecl(kctx *k, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Open and close the scope of one step: pg_step, its guard, its tile origin and slot
 * (emit_slot_open: pg_step and its guard only, for barrier operations; the origin and slot
 * of the loop's own step where the trip computed them once for all its operations). */
void emit_slot_open(kctx *k, const ir_op *op);
/* The ring slot of a step scope's pg_step, as a C expression: pg_slot (emit_step_open's,
 * slot_var) or pg_step % S, and which use of its slot the step is: pg_step / S; "0" and
 * "pg_step" where the ring has one slot. */
const char *emit_slot(kctx *k, bool slot_var);
const char *emit_use(kctx *k);
/* The step of an operation as a C expression: the section's loop variable plus step_off,
 * or a constant in a section of one step. */
const char *emit_step(kctx *k, int step_off);
void emit_step_open(kctx *k, const ir_op *op);
/* Whether a step (a C expression) is one of the block's: below pg_trips, or, where the
 * schedule claims its work items, its claimed item below pg_ntiles. */
const char *emit_live(kctx *k, const char *step);
void emit_step_close(kctx *k, const ir_op *op);
/* How a lowering moves one chunk of a region: a statement over pg_d (destination),
 * pg_s (source) and pg_v (valid bytes). */
typedef void (*chunk_printer)(kctx *k, const spec_stage *st, const char *name);
/* Copy every staged input the operation names, chunk by chunk, in a step scope. */
void emit_copy_regions(kctx *k, const ir_op *op, region_walk walk, chunk_printer chunk);
/* An async chunk printer's ZERO_WHOLE argument (pg_copy_chunk_sync's): "true" where its
 * checked chunks are few (REGION_SPLIT: the tiles at an edge) or many of them lie wholly
 * past the array's end (a tile planned at a bound); "false" where every chunk of every
 * tile takes the check (pipert_device.cuh has the measurements). */
const char *emit_zero_whole(const kctx *k);
/* COPY for a lowering whose copies are calls per region rather than per chunk:
 * FN<VEC, P, R, ROWBYTES, PITCH, NT>(slot, array, o0, o1, o2b, n0, n1, n2b, threadIdx.x,
 * ARGS) for each staged input of op (pg_region's shape and place; NT the copying threads),
 * ARGS printed by args. */
void emit_copy_region_calls(kctx *k, const ir_op *op, const char *fn, chunk_printer args);
/* The same calls in the caller's step scope (emit_step_open). */
void emit_region_calls(kctx *k, const ir_op *op, const char *fn, chunk_printer args);
/* A staged region's template arguments <VEC, P, R, ROWBYTES, PITCH, nthreads>. */
void emit_region_shape(kctx *k, int si, int nthreads);
/* The threads that copy: the producer warps, or the whole block (a copying thread's index
 * is threadIdx.x). */
int emit_copy_threads(const kctx *k);

typedef void (*op_printer)(kctx *k, const ir_op *op);
/* Printers every lowering may use. */
void emit_print_barrier(kctx *k, const ir_op *op);
void emit_print_compute(kctx *k, const ir_op *op);
void emit_print_store(kctx *k, const ir_op *op);
/* STORE as FN<VEC, P, R, ROWBYTES, PITCH, NT>(array, slot, o0, o1, o2b, n0, n1, n2b, TID)
 * for each staged output (pg_store_region's shape and place; NT the computing threads, TID
 * a thread's index among them). */
void emit_store_calls(kctx *k, const ir_op *op, const char *fn);
/* One such call for staged output si, left open after TID (for more arguments). */
void emit_store_call(kctx *k, int si, const char *fn);

/* The state of printing the launcher (emit.c); a module's host_step prints with it. */
typedef struct hctx {
    strbuf *out;
    const struct emit_unit *u;
    const spec *s;
} hctx;

typedef struct mech_module {
    bool (*plan)(planner *p);
    op_printer print[OP__COUNT];
    void (*setup)(kctx *k);      /* kernel-scope declarations (barriers); may be NULL */
    const char *header;          /* the runtime's device header its printed code needs beyond
                                    pipert_device.cuh ("pipert_cp_async.cuh"); may be NULL */
    /* Add the module's host steps (plan_host_step) to the launcher's plan, for the
     * schedule of one variant: plan_grid's right after the grid is sized (they may size it
     * anew), plan_host's before the launch, with the kernel parameters they make; each
     * may be NULL. */
    void (*plan_grid)(host_planner *h, const sched *sc);
    void (*plan_host)(host_planner *h, const sched *sc);
    bool roles;                  /* plans producer warps (spec producer_warps > 0) */
    bool multicast;              /* `cluster N`: multicasts copies to the blocks of a
                                    cluster on an arch-specific target (mech_multicasts) */
    int min_producer_warps;      /* the producer warps it plans when the spec asks for none */
    bool l2_policy;              /* its copies take a stage's `evict` L2 policy (pg_pol_NAME,
                                    emit_chunk_cp_async); other lowerings make none */
    unsigned hints;              /* the stage hints its copies take (1 << stage_hint); the
                                    others are accepted and ignored (-Whints) */
    bool dense_rows;             /* its copies write a region's rows back to back (a tensor
                                    box): no automatic padding of shared rows, no `pad` */
    bool row_copies;             /* its copies move a region one copy a row (a bulk copy of
                                    the row's middle): narrow rows are many copies a step */
    bool whole_boxes;            /* its copies move a region whole, boxes past the array's
                                    end zero-filled by the copy engine and moved as the rest
                                    (the chunk copies store such chunks as zeros) */
    /* Lay out staged region si in shared memory (plan_lay_out_stage with the module's
     * row alignment and swizzle, or a choice among such layouts); NULL: the default. */
    void (*layout)(planner *p, int si, int nslots);
} mech_module;

#define LOWERING(id, name, needs, module) extern const mech_module module;
#include "lowerings.h"
#undef LOWERING

/* The schedule of commit-group counting (TRACK_GROUPS), cp.async's: S-1 steps copied
 * ahead, one group committed per step (empty past the block's last step), a wait for the
 * oldest then a block barrier. Shared by cp.async, primitives, pipeline-thread and cg
 * (mech/cp_async.c). Where an API's wait saturates (__pipeline_wait_prior(N) and
 * pipeline_consumer_wait_prior<N> wait as for 8 when N is larger), the code waits for
 * more than the IR's WAIT allows to pend, never less: what the verifier proves holds. */
bool plan_commit_groups(planner *p);
/* One chunk through cp.async with the stage's cache operator, prefetch and policy
 * (mech/cp_async.c), shared with cp.async.mbarrier. */
void emit_chunk_cp_async(kctx *k, const spec_stage *st, const char *name);
/* The mbarrier ring (mech/cp_async_mbarrier.c), shared with barrier and bulk: the frame's
 * barrier initialisation (INIT, its FENCE mbarrier_init for the async proxy, the block
 * BARRIER that publishes it), the pg_full/pg_empty arrays (setup), their initialisation by
 * thread 0, the init fence, parity waits (WAIT_PARITY, ACQUIRE; pg_mbar_wait with the
 * watchdog), arrivals, and block or role barriers (named barrier 1 for the consumer warps,
 * 2 for the producer warps). */
void plan_mbar_init(planner *p);
/* Every thread waits for the step's full barrier, computes, and a block barrier frees the
 * slot (a staged output stored after another). */
void plan_mbar_consume(planner *p, ir_section *loop);
/* An operation of one role, of the step (producer warps). */
ir_op *plan_role_op(planner *p, ir_section *sec, ir_op_kind kind, ir_role role);
/* With producer warps: every producer thread arrives on the full barrier, every consumer
 * thread on the empty one; the loop, its first operation the producers' wait for the
 * slot's empty barrier. */
ir_section *plan_mbar_roles_loop(planner *p);
/* With producer warps: the consumer warps wait for the full barrier, compute and release
 * the slot on its empty barrier (a staged output stored between two consumer barriers). */
void plan_mbar_consume_role(planner *p, ir_section *loop);
/* bulk's schedule (mech/bulk.c), shared with tensor, whose box copies complete the same
 * way: an elected thread arms the slot's full barrier with expect_tx and issues the
 * copies, every thread stores what they cannot move (all of it where the launch's copy
 * width is under 16 bytes), a block barrier or the producers' arrivals publish that. */
bool plan_bulk(planner *p);
/* Whether tensor folds stage si's rows into one box's (copy_plan.fold), as the spec
 * writes its region: what auto's rule asks of a spec (mech/tensor.c). */
bool mech_tensor_folds(const spec *s, int si);
/* What the elected thread expects for the step's regions, as a C expression, after any
 * statements that compute it; fault is the IR's bytes less the regions' (0 but for an
 * injected fault, printed with --no-verify), added to it. */
typedef const char *(*tx_expect)(kctx *k, const ir_op *op, long long fault);
/* bulk's ARRIVE_TX: the elected thread expects what `expect` gives in the step's scope,
 * then arrives (with all_arrive the role's others arrive too). */
void emit_bulk_arrive_tx(kctx *k, const ir_op *op, tx_expect expect);
/* bulk's last arguments of a region's copy: the slot's full barrier and the stage's L2
 * policy (pg_pol_NAME where it has one). */
void emit_bulk_copy_args(kctx *k, const spec_stage *st, const char *name);
/* bulk's write-back of staged outputs (plan_bulk sets bulk_stores), tensor's too: FENCE
 * (the init fence, or fence.proxy.async after the compute's writes), COMMIT of the
 * thread's bulk group (its row or box stores), WAIT for its reads. */
void emit_bulk_fence(kctx *k, const ir_op *op);
void emit_bulk_commit(kctx *k, const ir_op *op);
void emit_bulk_wait(kctx *k, const ir_op *op);
/* The printer table bulk and tensor share; each adds its OP_COPY, OP_ARRIVE_TX and OP_STORE. */
#define MECH_BULK_PRINTERS                                                                  \
    [OP_INIT] = emit_mbar_init, [OP_FENCE] = emit_bulk_fence, [OP_WAIT_PARITY] = emit_mbar_wait, \
    [OP_ACQUIRE] = emit_mbar_wait, [OP_RELEASE] = emit_mbar_arrive,                          \
    [OP_BARRIER] = emit_mbar_barrier, [OP_COMPUTE] = emit_print_compute,                     \
    [OP_COMMIT] = emit_bulk_commit, [OP_WAIT] = emit_bulk_wait
void emit_mbar_setup(kctx *k);
void emit_mbar_init(kctx *k, const ir_op *op);
void emit_mbar_fence(kctx *k, const ir_op *op);
void emit_mbar_wait(kctx *k, const ir_op *op);
/* ARRIVE and RELEASE: pg_mbar_arrive (on_copies: pg_cp_async_mbar_arrive). */
void emit_mbar_arrive(kctx *k, const ir_op *op);
void emit_mbar_barrier(kctx *k, const ir_op *op);
/* The module of a lowering; NULL while it is not implemented (and for auto). */
const mech_module *mech_module_of(mech m);

#endif
