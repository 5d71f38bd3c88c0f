/* plan: turn a checked spec into the schedule IR for one lowering and architecture.
 *
 * The plan fixes the ring (slots), the shared-memory layout, how each staged region is
 * copied (copy width by alignment) and the list of operations per section. Each lowering
 * plans its operations in its own module (mech/NAME.c) with the helpers here; what is
 * common (layout, copy widths, the limits of this version) is planned once for all. */
#include "mech/mech.h"

#include <string.h>

/* ------------------------------------------------------------------ IR building */

ir_section *plan_section(planner *p, ir_section_kind kind, int count)
{
    sched *sc = p->sc;
    sc->secs = arena_grow(p->a, sc->secs, &sc->seccap, sc->nsecs + 1, sizeof *sc->secs);
    ir_section *sec = &sc->secs[sc->nsecs++];
    *sec = (ir_section){.kind = kind, .count = count};
    return sec;
}

ir_op *plan_op(planner *p, ir_section *sec, ir_op_kind kind, int step_off)
{
    sec->ops = arena_grow(p->a, sec->ops, &sec->cap, sec->nops + 1, sizeof *sec->ops);
    ir_op *op = &sec->ops[sec->nops++];
    *op = (ir_op){.kind = kind, .role = ROLE_ALL, .step_off = step_off, .stage = -1};
    return op;
}

ir_op *plan_copy(planner *p, ir_section *sec, int step_off)
{
    ir_op *op = plan_op(p, sec, OP_COPY, step_off);
    op->guarded = true;
    return op;
}

ir_op *plan_wait(planner *p, ir_section *sec, int n)
{
    ir_op *op = plan_op(p, sec, OP_WAIT, 0);
    op->n = n;
    return op;
}

bool plan_has_outputs(const planner *p)
{
    for (int i = 0; i < p->s->nstaged; ++i)
        if (p->s->stages[i].is_output)
            return true;
    return false;
}

void plan_store(planner *p, ir_section *sec)
{
    if (plan_has_outputs(p))
        plan_op(p, sec, OP_STORE, 0);
}

/* ------------------------------------------------------------------ common planning */

/* Greatest common divisor, for the alignment of region origins. */
static long long gcd(long long a, long long b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The step (in elements) by which a region variable moves: a tile origin moves by the
 * tile extent of its dimension, the step variable by `by`. */
static long long var_unit(const spec *s, const char *var)
{
    for (int d = 0; d < s->tile_rank; ++d)
        if (strcmp(s->tile_at[d], var) == 0)
            return s->tile[d];
    return s->step_by;
}

long long plan_origin_alignment(const spec *s, const affine *o)
{
    long long g = o->c;
    for (int i = 0; i < o->nterms; ++i)
        g = gcd(g, o->coef[i] * var_unit(s, o->var[i]));
    return g;
}

static long long round_up(long long x, long long m) { return (x + m - 1) / m * m; }

/* Widen an input region's fastest dimension to `bytes` boundaries where its variable
 * part keeps them: false where it does not. */
static bool widen_to(const spec *s, copy_plan *cp, int esz, int last, long long bytes)
{
    long long a = bytes / esz;
    if (a <= 1)
        return true;
    long long vars = 0;
    for (int i = 0; i < cp->origin[last].nterms; ++i)
        vars = gcd(vars, cp->origin[last].coef[i] * var_unit(s, cp->origin[last].var[i]));
    if (vars % a)
        return false;
    long long shift = ((cp->origin[last].c % a) + a) % a;
    cp->origin[last].c -= shift;
    cp->extent[last] = round_up(cp->extent[last] + shift, a);
    return true;
}

/* Widen to the lowering's row boundary, else to 16 bytes, so that it copies in 16-byte
 * chunks. */
static void widen(const spec *s, copy_plan *cp, int esz, int last, int row_align)
{
    if (row_align <= 16 || !widen_to(s, cp, esz, last, row_align))
        widen_to(s, cp, esz, last, 16);
}

/* The widest copy (16, 8, 4, 2, 1 bytes) that every origin and the row keep aligned,
 * given a base pointer aligned to 16. */
static int copy_width(long long row_bytes, long long origin_elems, int esz)
{
    long long g = gcd(row_bytes, origin_elems * esz);
    int vec = 16;
    while (vec > 1 && g % vec)
        vec /= 2;
    return vec;
}

/* Shared-memory rows that are a multiple of 128 bytes put a column in one bank; unless
 * the spec says (`pad N`), 16 bytes of padding spread it over 8 banks while keeping rows
 * 16-byte aligned for 16-byte copies (measured on H100: transpose 64x64 ran at 0.53 of
 * the copy rate with 4-byte padding and 4-byte copies, 0.87 with 16-byte padding). */
static long long row_pitch(long long row_bytes, int vec, const spec_stage *st, bool dense)
{
    long long pitch = round_up(row_bytes, vec);
    if (st->pad >= 0)
        return pitch + st->pad;
    /* a staged input's tensor box lands in shared memory with its rows back to back */
    if (st->rank >= 2 && pitch % 128 == 0 && !dense)
        pitch += 16;
    return pitch;
}

int plan_slot_align(const copy_plan *cp)
{
    return cp->swizzle ? SWIZZLE_ALIGN : 128;
}

long long plan_region_rows(const copy_plan *cp, int rank)
{
    long long rows = 1;
    for (int d = 0; d < rank - 1; ++d)
        rows *= cp->extent[d];
    return rows;
}

int plan_folded_extents(const copy_plan *cp, int rank, long long ext[AST_MAX_RANK])
{
    memcpy(ext, cp->extent, sizeof cp->extent);
    if (!cp->fold)
        return rank;
    ext[rank - 1] = cp->extent[rank - 1] / cp->fold;
    ext[rank] = cp->fold;
    return rank + 1;
}

void plan_lay_out_stage(planner *p, int i, int nslots, int row_align,
                        int (*swizzle_of)(const spec *s, const copy_plan *cp, int si))
{
    const spec *s = p->s;
    const spec_stage *st = &s->stages[i];
    copy_plan *cp = &p->sc->copy[i];
    const mech_module *mod = mech_module_of(p->sc->mech);
    int esz = ast_type_size(s->arrays[st->array].type), last = st->rank - 1;
    memcpy(cp->origin, st->origin, sizeof cp->origin);
    memcpy(cp->extent, st->extent, sizeof cp->extent);
    if (!st->is_output)
        widen(s, cp, esz, last, row_align);
    cp->row_bytes = cp->extent[last] * esz;
    cp->vec = copy_width(cp->row_bytes, plan_origin_alignment(s, &cp->origin[last]), esz);
    /* a staged output's rows too, where tensor stores could read them as a box */
    cp->pitch = row_pitch(cp->row_bytes, cp->vec, st,
                          mod->dense_rows && (!st->is_output || cp->vec == 16));
    while (cp->pitch % cp->vec)
        cp->vec /= 2;
    cp->swizzle = !st->is_output && swizzle_of ? swizzle_of(s, cp, i) : 0;
    cp->slot_bytes = round_up(plan_region_rows(cp, st->rank) * cp->pitch, plan_slot_align(cp));
    cp->nslots = st->is_output ? 1 : nslots;
    cp->fold = 0;
}

static void plan_stage(planner *p, int i, int nslots)
{
    const mech_module *mod = mech_module_of(p->sc->mech);
    if (mod->layout)
        mod->layout(p, i, nslots);
    else
        plan_lay_out_stage(p, i, nslots, 16, NULL);
}

/* An accumulator by column in registers: each computing thread keeps the bins of the
 * columns it walks, added in row order with no atomics and no shared memory. Measured on
 * H100, colsum (4 x 1024 float tiles), of the same-shape reference: shared bins, a copy a
 * warp, 0.63; registers 0.94 under cp.async, 0.97 under tensor (8 x 1024 tiles: 0.97,
 * 1.00). Up to this many a thread; beyond, shared bins. */
enum { PLAN_MAX_ACCUM_REGS = 8 };

/* Whether accumulator i lives in registers: decided with the fewest computing threads any
 * lowering leaves (producer warps, or the one pipeline-roles takes), before the lowering
 * says how many it has; plan_accum_registers counts them once it has. */
static bool accum_in_registers(const planner *p, int i)
{
    const spec *s = p->s;
    const int fewest = s->threads - 32 * (s->producer_warps ? s->producer_warps : 1);
    return s->accums[i].is_array && spec_accum_by_column(s, i) && fewest > 0
           && s->accums[i].extent <= (long long)PLAN_MAX_ACCUM_REGS * fewest;
}

static void plan_accum_registers(planner *p)
{
    sched *sc = p->sc;
    const int cnt = sc->threads - sc->producer_threads;
    for (int i = 0; sc->accum_off && i < p->s->naccums; ++i)
        sc->accum_regs[i] = sc->accum_off[i] < 0 ? (p->s->accums[i].extent + cnt - 1) / cnt : 0;
}

/* The array accumulators' bins, from off on; returns their end. An accumulator in
 * registers has none: its accum_off is -1. */
static long long plan_accum_bins(planner *p, long long off)
{
    const spec *s = p->s;
    sched *sc = p->sc;
    if (!sc->accum_off) {
        sc->accum_off = arena_alloc(p->a, (s->naccums + 1) * sizeof *sc->accum_off);
        sc->accum_regs = arena_alloc(p->a, (s->naccums + 1) * sizeof *sc->accum_regs);
    }
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        sc->accum_off[i] = accum_in_registers(p, i) ? -1 : 0;
        if (!acc->is_array || sc->accum_off[i] < 0)
            continue;
        off = round_up(off, 16);
        sc->accum_off[i] = off;
        off += spec_accum_bin_bytes(acc, sc->threads);
    }
    return off;
}

/* The exchange the reductions' pg_rows_reduce goes through: a value a warp and row. */
static long long plan_reduce_exchange(planner *p, long long off)
{
    const spec *s = p->s;
    long long bytes = 0;
    for (int i = 0; i < s->nreduces; ++i) {
        long long b = s->threads / 32 * spec_tile_rows(s) * spec_reduce_bytes(&s->reduces[i]);
        bytes = b > bytes ? b : bytes;
    }
    if (!bytes)
        return off;
    off = round_up(off, 16);
    p->sc->reduce_off = off;
    return off + bytes;
}

void plan_layout(planner *p, int nslots)
{
    sched *sc = p->sc;
    long long off = 0;
    sc->nslots = nslots;
    sc->smem_align = 128;
    for (int i = 0; i < p->s->nstaged; ++i) {
        plan_stage(p, i, nslots);
        const int align = plan_slot_align(&sc->copy[i]);
        sc->smem_align = align > sc->smem_align ? align : sc->smem_align;
        off = round_up(off, align);
        sc->copy[i].off = off;
        off += sc->copy[i].slot_bytes * sc->copy[i].nslots;
    }
    off = plan_accum_bins(p, off);
    off = plan_reduce_exchange(p, off);
    /* dynamic shared memory is only sure to be 16-byte aligned: room to round it up */
    sc->smem_bytes = off + (sc->smem_align > 128 ? sc->smem_align - 16 : 0);
}

int plan_ring_slots(planner *p)
{
    const spec *s = p->s;
    int slots = spec_ring_slots(s);
    plan_layout(p, slots);
    for (int i = 0; slots > 1 && i < s->nring_fallbacks
                    && p->sc->smem_bytes > arch_smem_limit(p->sc->sm); ++i) {
        slots = s->ring_fallbacks[i];
        plan_layout(p, slots);
    }
    return slots;
}

/* A guard on the loop's own step is always true (t < trips): the plan drops it, so that
 * the printed code has none. */
static void drop_vacuous_guards(sched *sc)
{
    for (int i = 0; i < sc->nsecs; ++i)
        for (int j = 0; sc->secs[i].kind == SEC_LOOP && j < sc->secs[i].nops; ++j)
            if (sc->secs[i].ops[j].step_off == 0)
                sc->secs[i].ops[j].guarded = false;
}

/* ------------------------------------------------------------------ claims */

/* A persistent grid takes its work items in the order blocks claim them (OP_CLAIM) where
 * every thread learns a claim through a block barrier: schedules without roles and
 * clusters, one step per work item and no bodies around a work item's steps. Not with
 * accumulators: which items a block folds would change from run to run, and with it the
 * bits of a floating-point result. */
static bool can_claim(const planner *p)
{
    const spec *s = p->s;
    return p->sc->grid == GRID_PERSISTENT && !s->has_steps && !s->march && !s->has_prologue
           && !s->has_epilogue && !s->naccums && p->sc->producer_threads == 0
           && p->sc->cluster == 1;
}

static int first_block_barrier(const ir_section *sec)
{
    for (int i = 0; i < sec->nops; ++i)
        if (sec->ops[i].kind == OP_BARRIER && sec->ops[i].role == ROLE_ALL)
            return i;
    return -1;
}

/* The steps ahead of the loop's own that any operation touches, plus one: what the
 * prologue claims, and how far ahead the loop claims. */
static int claim_lookahead(const sched *sc)
{
    int ahead = 1;
    for (int i = 0; i < sc->nsecs; ++i) {
        const ir_section *sec = &sc->secs[i];
        int base = sec->kind == SEC_PROLOGUE ? sec->count - 1 : 0;
        for (int j = 0; sec->kind != SEC_EPILOGUE && j < sec->nops; ++j)
            if (base + sec->ops[j].step_off + 1 > ahead)
                ahead = base + sec->ops[j].step_off + 1;
    }
    return ahead;
}

static void insert_op(planner *p, ir_section *sec, int at, ir_op_kind kind, int step_off)
{
    ir_op op = *plan_op(p, sec, kind, step_off);
    memmove(&sec->ops[at + 1], &sec->ops[at], sizeof op * (size_t)(sec->nops - 1 - at));
    sec->ops[at] = op;
}

static void insert_section(planner *p, int at, ir_section_kind kind, int count,
                           ir_op_kind op, int step_off)
{
    sched *sc = p->sc;
    ir_section sec = *plan_section(p, kind, count);
    memmove(&sc->secs[at + 1], &sc->secs[at], sizeof sec * (size_t)(sc->nsecs - 1 - at));
    sc->secs[at] = sec;
    plan_op(p, &sc->secs[at], op, step_off);
}

/* Whether a block barrier comes before any operation of a step, from section `from` on. */
static bool barrier_first(const sched *sc, int from)
{
    for (int i = from; i < sc->nsecs; ++i)
        for (int j = 0; j < sc->secs[i].nops; ++j) {
            const ir_op *op = &sc->secs[i].ops[j];
            if (op->kind == OP_BARRIER && op->role == ROLE_ALL)
                return true;
            if (op->kind != OP_INIT && op->kind != OP_FENCE)
                return false;
        }
    return false;
}

/* The prologue claims the first `ahead` steps (after the frame), published by a block
 * barrier; each trip claims the step `ahead` on, before the loop's first block
 * barrier (before the operation that performs it, where implied), which publishes it to
 * every thread a trip before any of them reads it. The ring keeps two more entries than
 * that, so that no claim overwrites an item a thread may still read (the verifier proves
 * both). */
static void plan_claims(planner *p)
{
    sched *sc = p->sc;
    int loop = -1;
    for (int i = 0; i < sc->nsecs; ++i) {
        if (sc->secs[i].kind == SEC_EPILOGUE)
            return;   /* its steps count back from trips, known only after the loop */
        if (sc->secs[i].kind == SEC_LOOP && loop < 0)
            loop = i;
    }
    int at = loop < 0 ? -1 : first_block_barrier(&sc->secs[loop]);
    if (!can_claim(p) || at < 0)
        return;
    const int ahead = claim_lookahead(sc);
    while (at > 0 && sc->secs[loop].ops[at].implied)
        --at;
    insert_op(p, &sc->secs[loop], at, OP_CLAIM, ahead);
    const int first = sc->secs[0].kind == SEC_FRAME;   /* the frame stays first */
    insert_section(p, first, SEC_PROLOGUE, ahead, OP_CLAIM, 0);
    if (!barrier_first(sc, first + 1))
        insert_section(p, first + 1, SEC_PROLOGUE, 1, OP_BARRIER, 0);
    sc->claim_ring = ahead + 2;
    sc->claim_ahead = ahead;
}

/* setmaxnreg (PTX: the arch-specific targets) moves registers from the producer warpgroups
 * to the consumers', whose accumulators want them (gemm_bf16: 160 a thread). It is planned
 * where it costs nothing: both roles are whole warpgroups, a thread could not already have
 * 255 registers, and the block holds its SM alone, its shared memory leaving no room for a
 * second one (so __launch_bounds__(threads, 1) takes no occupancy). The kernel launches
 * with what that bound gives each thread; the producers keep what a copy loop needs. */
enum { REGS_PRODUCER = 40, REGS_MAX = 256 };

static void plan_registers(sched *sc)
{
    const int producers = sc->producer_threads, consumers = sc->threads - producers;
    if (!arch_has(sc->sm, sc->specific, ARCH_SETMAXNREG) || producers == 0
        || producers % WARPGROUP_THREADS
        || consumers % WARPGROUP_THREADS || sc->threads <= 256 || sc->spec->blocks_per_sm > 1
        || 2 * sc->smem_bytes <= arch_smem_limit(sc->sm))
        return;
    const int launch = SM_REGISTERS / sc->threads / 8 * 8;
    int take = (launch * sc->threads - producers * REGS_PRODUCER) / consumers / 8 * 8;
    if (take > REGS_MAX)
        take = REGS_MAX;
    if (take <= launch)
        return;   /* the producers' spare registers add nothing a consumer can use */
    sc->regs_launch = launch;
    sc->regs_producer = REGS_PRODUCER;
    sc->regs_consumer = take;
}

int plan_column_slots(const sched *sc)
{
    for (int i = 0; sc->accum_regs && i < sc->spec->naccums; ++i)
        if (sc->accum_regs[i])
            return sc->accum_regs[i];
    return 0;
}

/* A whole rank-3 tile with a halo is walked down its planes, every plane unrolled, so that
 * what a cell reads of the planes it shares with the cell below stays in registers (emit's
 * plane walk, taken by an elementwise compute without row passes or a column walk). A
 * thread that also takes adjacent rows shares what a row reads of the next (emit unrolls
 * them two at a time): a 27-point stencil's shared-memory loads fall from 11.25 a cell to
 * 7.5. That needs rows a multiple of 32 wide, so that each warp reads 32 neighbouring
 * cells of one row (no bank conflicts, as in the deal in order), the rows' width dividing
 * the computing threads, and the threads a row takes dividing the plane's rows. */
enum { WALK_ROWS_MAX = 16 };

static void plan_walk_rows(sched *sc)
{
    const spec *s = sc->spec;
    const int cnt = sc->threads - sc->producer_threads;
    if (s->tile_rank != 3 || !spec_stages_halo(s) || s->compute_kind != BODY_ELEMENTWISE
        || s->nreduces || plan_column_slots(sc) || s->tile[2] % 32 || cnt % s->tile[2])
        return;
    const long long row_threads = cnt / s->tile[2], rows = s->tile[1] / row_threads;
    if (s->tile[1] % row_threads == 0 && rows >= 2 && rows <= WALK_ROWS_MAX)
        sc->walk_rows = (int)rows;
}

/* __launch_bounds__'s blocks an SM: one where setmaxnreg moves registers (its counts
 * assume what one block an SM gives a thread), the spec's `blocks_per_sm`, or, where a
 * thread walks rows (sched.walk_rows: ptxas gave stencil27_big 124-126 registers a
 * thread, 2 blocks an SM where its shared memory holds 3 or 4), the blocks its shared
 * memory holds, but at least WALK_MIN_REGS registers a thread; none where either allows
 * one block only. H200, of cudaMemcpy, the walk in order against this (ab.sh against
 * c1614db, 3 rounds): stencil27_big 0.785 -> 0.836 under tensor (3 blocks) and 0.702 ->
 * 0.745 under cp.async (4); stencil7_wide (512 threads, 2 blocks) 0.685 -> 0.863 under
 * tensor at 512^3 and +22 to +33% under the other lowerings, some spilling 4 to 80
 * bytes; 4 x 8 x 64 tiles +2 to +7%, but stencil27 under tensor -2% (0.573 -> 0.562: 4
 * blocks by registers where it had 5) and stencil7 under bulk -7.5%; stencil7_big within
 * 0.6%. With 4 rows unrolled at once stencil27_big spilled at 64 registers (cp.async
 * 0.50). */
enum { WALK_MIN_REGS = 64 };

static void plan_launch_blocks(sched *sc)
{
    if (sc->regs_launch) {
        sc->launch_blocks = 1;
    } else if (sc->spec->blocks_per_sm) {
        sc->launch_blocks = sc->spec->blocks_per_sm;
    } else if (sc->walk_rows) {
        const int by_regs = SM_REGISTERS / (sc->threads * WALK_MIN_REGS);
        const int blocks = plan_blocks_per_sm(sc) < by_regs ? plan_blocks_per_sm(sc) : by_regs;
        sc->launch_blocks = blocks > 1 ? blocks : 0;
    }
}

/* auto: the lowering it tries first if that plans the spec (its refusals are not the
 * user's errors: planned without diagnostics), else the one that plans every spec. */
static sched *plan_auto(arena *a, diag_ctx *d, const spec *s, int sm, bool specific)
{
    const mech first = mech_auto_first(s, sm), sure = mech_auto(s, sm);
    if (first != sure) {
        diag_ctx quiet;
        diag_init(&quiet, NULL, d->file, d->src, d->src_len);
        sched *sc = plan_schedule(a, &quiet, s, first, sm, specific);
        if (sc && !quiet.errors)
            return sc;
        if (mech_multicasts(first, sm, specific) && s->cluster > 1)
            diag_warning(d, W_HINTS, s->cluster_loc, "auto's %s kernel for sm_%d does "
                         "not plan this spec (--lower=%s says why): the %s kernel it "
                         "takes instead ignores 'cluster %d'", mech_name(first), sm,
                         mech_name(first), mech_name(sure), s->cluster);
    }
    return plan_schedule(a, d, s, sure, sm, specific);
}

sched *plan_schedule(arena *a, diag_ctx *d, const spec *s, mech m, int sm, bool specific)
{
    if (mech_is_auto(m))
        return plan_auto(a, d, s, sm, specific);
    sched *sc = arena_alloc(a, sizeof *sc);
    *sc = (sched){.spec = s, .mech = m, .sm = sm, .specific = specific, .threads = s->threads,
                  .grid = s->grid, .cluster = 1, .pack = 1};
    planner p = {.a = a, .d = d, .s = s, .sc = sc};
    /* sema_check refused a lowering that is not implemented, too new for sm or without
     * the producer warps the spec has. */
    const mech_module *mod = mech_module_of(m);
    if (!mod->plan(&p))
        return NULL;
    drop_vacuous_guards(sc);
    plan_accum_registers(&p);
    plan_claims(&p);
    plan_registers(sc);
    if (sc->smem_bytes > arch_smem_limit(sm)) {
        diag_error(d, s->loc, "the %s schedule needs %lld bytes of shared memory per block; "
                   "sm_%d has %lld", mech_name(m), sc->smem_bytes, sm, arch_smem_limit(sm));
        return NULL;
    }
    plan_walk_rows(sc);
    plan_launch_blocks(sc);
    return sc;
}

/* ------------------------------------------------------------------ printing */

static const char *const op_names[OP__COUNT] = {
    [OP_COPY] = "copy", [OP_COMMIT] = "commit", [OP_WAIT] = "wait", [OP_ACQUIRE] = "acquire",
    [OP_RELEASE] = "release", [OP_ARRIVE_TX] = "arrive_tx", [OP_WAIT_PARITY] = "wait_parity",
    [OP_INIT] = "init", [OP_FENCE] = "fence", [OP_BARRIER] = "barrier", [OP_COMPUTE] = "compute",
    [OP_STORE] = "store", [OP_ARRIVE] = "arrive", [OP_CLAIM] = "claim",
};

const char *ir_op_name(ir_op_kind k) { return op_names[k]; }

static bool uses_barrier_set(ir_op_kind k)
{
    return k == OP_ARRIVE || k == OP_ARRIVE_TX || k == OP_WAIT_PARITY || k == OP_ACQUIRE
           || k == OP_RELEASE;
}

/* Role prefix, operation, and every field that matters for it. */
void ir_op_print(strbuf *sb, const ir_op *op, const char *var)
{
    static const char *const roles[] = {"", "producer: ", "consumer: "};
    static const char *const fences[] = {"", " proxy_async", " mbarrier_init"};
    sb_printf(sb, "%s%s", roles[op->role], op_names[op->kind]);
    if (op->kind == OP_WAIT) {
        sb_printf(sb, " %d", op->n);
        return;
    }
    if (op->kind == OP_FENCE)
        sb_puts(sb, fences[op->fence]);
    if (op->implied)
        sb_puts(sb, " implied");
    if (op->cluster)
        sb_puts(sb, " cluster");
    if (op->kind == OP_BARRIER || op->kind == OP_FENCE || op->kind == OP_INIT)
        return;
    if (op->step_off)
        sb_printf(sb, " step=%s%+d", var, op->step_off);
    else
        sb_printf(sb, " step=%s", var);
    if (uses_barrier_set(op->kind))
        sb_puts(sb, op->bar == BAR_EMPTY ? " bar=empty" : " bar=full");
    if (op->kind == OP_ARRIVE_TX)
        sb_printf(sb, " bytes=%lld", op->bytes);
    if (op->on_copies)
        sb_puts(sb, " on_copies");
    if (op->all_arrive)
        sb_puts(sb, " all_arrive");
    if (op->stores)
        sb_puts(sb, " stores");
    if (op->dealt)
        sb_puts(sb, " dealt");
    if (op->per_warp)
        sb_puts(sb, " per_warp");
    if (op->parity_flip)
        sb_puts(sb, " parity_flipped");
    if (op->kind == OP_STORE && op->fence != FENCE_NONE)
        sb_puts(sb, fences[op->fence]);
    if (op->guarded)
        sb_puts(sb, " if<trips");
}

int plan_blocks_per_sm(const sched *sc)
{
    const long long per_sm = arch_smem_limit(sc->sm) + 1024;
    const long long by_smem = per_sm / (sc->smem_bytes + 1024);
    int blocks = arch_max_threads(sc->sm) / sc->threads;
    if (by_smem < blocks)
        blocks = (int)by_smem;
    return blocks < arch_max_blocks(sc->sm) ? blocks : arch_max_blocks(sc->sm);
}

static const char *section_var(ir_section_kind k)
{
    return k == SEC_FRAME ? "0" : k == SEC_PROLOGUE ? "p" : k == SEC_LOOP ? "t" : "trips";
}

void ir_dump(FILE *out, const sched *sc)
{
    arena *a = arena_new();
    strbuf sb;
    sb_init(&sb, a);
    sb_printf(&sb, "schedule %s mech=%s sm_%d slots=%d smem=%lld threads=%d grid=%s",
              sc->spec->name, mech_name(sc->mech), sc->sm, sc->nslots, sc->smem_bytes,
              sc->threads, sc->grid == GRID_PERSISTENT ? "persistent" : "per_tile");
    if (sc->cluster > 1)
        sb_printf(&sb, " cluster=%d", sc->cluster);
    if (sc->claim_ring)
        sb_printf(&sb, " claim_ring=%d", sc->claim_ring);
    if (sc->pack > 1)
        sb_printf(&sb, " pack=%lld tile=%lldx%lld", sc->pack, sc->spec->tile[0],
                  sc->spec->tile[1]);
    sb_puts(&sb, "\n");
    if (sc->chosen_by)
        sb_printf(&sb, "wisdom: %s:%d (%s, %s)\n", sc->wisdom_path, sc->chosen_by->line,
                  sc->chosen_by->gpu, sc->chosen_by->size);
    if (sc->own_size_blocks)
        sb_printf(&sb, "block size: auto, %d blocks an SM (the spec's own %d threads: %d)\n",
                  plan_blocks_per_sm(sc), spec_own_threads(sc->spec), sc->own_size_blocks);
    for (int i = 0; i < sc->spec->nstaged; ++i)
        if (sc->copy[i].multicast)
            sb_printf(&sb, "multicast %s\n", sc->spec->arrays[sc->spec->stages[i].array].name);
    if (sc->track == TRACK_BARRIER)
        sb_printf(&sb, "barriers: full %d arrivals, empty %d arrivals, producers %d threads\n",
                  sc->full_arrivals, sc->empty_arrivals, sc->producer_threads);
    if (sc->walk_rows)
        sb_printf(&sb, "plane walk: %d adjacent rows a thread\n", sc->walk_rows);
    if (sc->launch_blocks)
        sb_printf(&sb, "launch bounds: %d threads, %d block%s an SM\n", sc->threads,
                  sc->launch_blocks, sc->launch_blocks > 1 ? "s" : "");
    if (sc->regs_launch)
        sb_printf(&sb, "registers: launch %d, producers keep %d, consumers take %d\n",
                  sc->regs_launch, sc->regs_producer, sc->regs_consumer);
    for (int i = 0; sc->accum_off && i < sc->spec->naccums; ++i)
        if (sc->accum_regs[i])
            sb_printf(&sb, "accum %s: by column, %d registers a computing thread\n",
                      sc->spec->accums[i].name, sc->accum_regs[i]);
        else if (sc->spec->accums[i].is_array) {
            const spec_accum *acc = &sc->spec->accums[i];
            const int copies = spec_accum_copies(acc, sc->threads);
            sb_printf(&sb, "accum %s: bins at shared +%lld, %s\n", acc->name, sc->accum_off[i],
                      spec_accum_lanes(acc) ? "a copy a lane, interleaved"
                      : copies == 1 ? "1 copy" : arena_printf(a, "%d copies, a warp each", copies));
        }
    for (int i = 0; i < sc->nsecs; ++i) {
        const ir_section *sec = &sc->secs[i];
        if (sec->kind == SEC_FRAME)
            sb_puts(&sb, "frame:\n");
        else if (sec->kind == SEC_PROLOGUE)
            sb_printf(&sb, "prologue p in [0,%d):\n", sec->count);
        else
            sb_puts(&sb, sec->kind == SEC_LOOP ? "loop t in [0,trips):\n" : "epilogue:\n");
        for (int j = 0; j < sec->nops; ++j) {
            sb_puts(&sb, "  ");
            ir_op_print(&sb, &sec->ops[j], section_var(sec->kind));
            sb_puts(&sb, "\n");
        }
    }
    fputs(sb.data, out);
    arena_free(a);
}
