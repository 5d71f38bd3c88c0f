/* lint: the performance lint (-Wperf, on by default), after planning. A spec whose plan
 * has a measured cliff is said at generation, with the reason, the measurement and what
 * to change; docs/lowerings.md ("Performance lint") lists each warning with its bench
 * figures. Warnings only: the plan is correct either way. */
#include "pipegen.h"

#include <string.h>

/* Array accumulators on the per-tile grid: every block clears its bins, writes them as its
 * partial and the combine folds them, for one tile's work. */
static void lint_bins_per_tile(diag_ctx *d, const spec *s)
{
    if (s->grid != GRID_PER_TILE)
        return;
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        if (!acc->is_array)
            continue;
        diag_warning(d, W_PERF, s->grid_loc.line ? s->grid_loc : acc->loc,
                     "array accumulator '%s' on the per-tile grid: every block clears, "
                     "writes and combines all %d of its bins for one tile's work (a 256-bin "
                     "histogram: 0.19 of cudaMemcpy per tile, 0.42 persistent, H200); leave "
                     "the grid to its default for array accumulators, persistent",
                     acc->name, acc->extent);
        return;
    }
}

/* Whether the row passes (a reduction's expression or the compute) name array a. */
static bool rows_read(const spec *s, const spec_array *a)
{
    if (text_names(s->compute.text, a->name))
        return true;
    for (int i = 0; i < s->nreduces; ++i)
        if (text_names(s->reduces[i].expr.text, a->name))
            return true;
    return false;
}

/* An input the row passes read from global memory: every warp reads it again for each
 * row it walks, a load per cell beside the staged row's. */
static void lint_unstaged_in_rows(diag_ctx *d, const spec *s)
{
    for (int i = 0; s->nreduces && i < s->narrays; ++i) {
        const spec_array *a = &s->arrays[i];
        if (a->dir != DIR_IN || a->staged >= 0 || !rows_read(s, a))
            continue;
        diag_warning(d, W_PERF, a->loc, "'%s' is read from global memory in the row passes, "
                     "again for every row (layernorm reading its g and b so: 0.68 of "
                     "cudaMemcpy, staged 1.00, H100): stage it, over the region the rows "
                     "read ('stage %s[0 : N]' for a vector every row reads whole)", a->name,
                     a->name);
    }
}

/* Cells a computing thread walks of a row, below which the block's row passes measured
 * far off the copy rate. */
enum { LINT_MIN_ROW_CELLS = 8 };

/* Row reductions where the whole block, or a group of warps, walks each row with few cells
 * a thread: the passes' barriers are not hidden. A warp walking its own rows has none. The
 * computing threads are the plan's: a lowering's producer warps are not among them. */
static void lint_thin_rows(diag_ctx *d, const spec *s, const sched *sc)
{
    const int computing = sc->threads - sc->producer_threads;
    const int group = spec_row_group(s, computing / 32);
    const int walkers = group ? 32 * group : computing;
    const long long len = s->tile[s->tile_rank - 1];
    if (!s->nreduces || group == 1 || len / walkers >= LINT_MIN_ROW_CELLS)
        return;
    diag_warning(d, W_PERF, s->reduces[0].loc, "%s walks each row of %lld cells over %d "
                 "computing threads, %lld a thread: too few to hide the barriers of the row "
                 "passes (softmax, a row of 1024: over 256 threads 0.70 of cudaMemcpy, over 64 "
                 "threads 0.99, H100); give the block fewer threads (%d to 16 cells a thread) "
                 "or the tile a row for every warp", group ? "a group of warps" : "the block",
                 len, walkers, len / walkers, LINT_MIN_ROW_CELLS);
}

/* A warp's lanes, below which a floating-point accumulator's shared bins are met by
 * several lanes of one warp on most adds. */
enum { LINT_MIN_FLOAT_BINS = 32 };

/* Floating-point bins in shared memory: their adds keep a fixed order (the same bits run
 * to run), so the lanes of a warp that meet in one bin are summed in turn; with fewer
 * bins than lanes that is nearly every add. */
static void lint_few_float_bins(diag_ctx *d, const spec *s)
{
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        if (!acc->is_array || acc->combine != COMBINE_SUM
            || ast_type_class(acc->type) != TC_FLOAT || acc->extent >= LINT_MIN_FLOAT_BINS
            || spec_accum_by_column(s, i))
            continue;
        diag_warning(d, W_PERF, acc->loc, "floating-point array accumulator '%s' has %d "
                     "shared bins, fewer than a warp's %d lanes: its adds keep a fixed order, "
                     "so the lanes that meet in a bin add in turn (colstats, 8 float bins "
                     "beside two accumulators in registers: 0.11-0.13 of its same-shape "
                     "reference under cp.async and cp.async.mbarrier, H100); use an integer "
                     "type (exact, atomic adds), %d bins or more, or index it by the "
                     "compute's column ('%s[c]', kept in registers)", acc->name, acc->extent, LINT_MIN_FLOAT_BINS,
                     LINT_MIN_FLOAT_BINS, acc->name);
    }
}

/* The first place the compute tests `NAME.swizzle` (the view's swizzle span), or NULL. */
static const char *swizzle_test(const char *text, const char *name)
{
    for (const char *at = NULL; text_next_word(text, name, &at);) {
        const char *p = text_skip_blank(at + strlen(name));
        if (*p != '.')
            continue;
        p = text_skip_blank(p + 1);
        if (!strncmp(p, "swizzle", 7) && !text_word_char(p[7]))
            return at;
    }
    return NULL;
}

/* Bytes of a row (the fastest dimension) of a stage's region. */
static long long region_row_bytes(const spec *s, const spec_stage *st)
{
    return st->extent[st->rank - 1] * ast_type_size(s->arrays[st->array].type);
}

/* The lowering a stage's copies take: its own, else the spec's (auto until resolved). */
static mech stage_lowering(const spec *s, const spec_stage *st)
{
    return mech_is_auto(st->mech) ? s->mech : st->mech;
}

/* A stage's `swizzle` that the lowering chosen for it ignores, where the compute tests the
 * view's span: under that lowering the span is 0, and the body's branch for swizzled slots
 * (gemm_bf16's wgmma) never runs. auto is left alone: it takes tensor where tensor plans. */
static void lint_swizzle_ignored(diag_ctx *d, const spec *s)
{
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        const mech m = stage_lowering(s, st);
        const char *name = s->arrays[st->array].name, *at;
        if (!st->hint_loc[HINT_SWIZZLE].line || st->is_output || mech_is_auto(m) ||
            (mech_hints(m) & (1u << HINT_SWIZZLE)) ||
            !(at = swizzle_test(s->compute.text, name)))
            continue;
        diag_warning(d, W_PERF, diag_loc_in_text(s->compute.text, s->compute.loc,
                                                 (size_t)(at - s->compute.text)),
                     "the compute tests '%s.swizzle', which is 0 under the %s lowering (it "
                     "ignores 'swizzle'): the body's branch for swizzled slots never runs "
                     "(gemm_bf16's wgmma so: 0.01 of cuBLAS under cp.async.mbarrier, 0.84-1.00 "
                     "under tensor, H100); leave the lowering to auto or use tensor (sm_90 and "
                     "newer)", name, mech_name(m));
        return;
    }
}

/* Region over tile, past which a halo's re-reads measured a cliff: every cell of the
 * region is read from memory once for each tile whose region holds it. */
#define LINT_MAX_HALO_READ 1.5

/* An input staged with a halo that makes its region much larger than the tile it feeds. */
static void lint_halo_reread(diag_ctx *d, const spec *s)
{
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        if (st->halo <= 0 || st->is_output)
            continue;
        double region = 1, inner = 1;
        for (int k = 0; k < st->rank; ++k) {
            const long long interior = st->extent[k] - 2LL * st->halo;
            region *= (double)st->extent[k];
            inner *= interior > 0 ? (double)interior : 0.0;
        }
        if (inner < 1 || region / inner <= LINT_MAX_HALO_READ)
            continue;
        diag_warning(d, W_PERF, st->loc,
                     "the halo of %d makes '%s''s staged region %.2f times its interior: each "
                     "cell is read from memory %.2f times on average (a 3D 7-point stencil, "
                     "512^3, tiles of 4 x 8 x 64, 1.93 times: 0.80 of cudaMemcpy under tensor; "
                     "of 8 x 16 x 64, 1.45 times: 0.96, H100); give the tile larger extents, "
                     "above all where it is thinnest", st->halo, s->arrays[st->array].name,
                     region / inner, region / inner);
        return;
    }
}

/* An input staged with a halo under cg, whose copies are one memcpy_async call a row of
 * the region: every such spec measured far below cp.async's copies of the same chunks
 * (one group a step), with or without the re-read warning above. */
static void lint_cg_halo(diag_ctx *d, const spec *s)
{
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        if (st->halo <= 0 || st->is_output || stage_lowering(s, st) != MECH_CG)
            continue;
        diag_warning(d, W_PERF, st->loc,
                     "the cg lowering copies '%s''s region of %lld rows with its halo one "
                     "memcpy_async call a row, which measured well below cp.async's copies of "
                     "the same chunks (blur: 0.50 of cudaMemcpy under cg, 0.75 under "
                     "cp.async, 0.97 under tensor, H100; stencil27_big: 0.44 of its "
                     "same-shape reference under cg, 0.79 and 0.89, H200); use cp.async or "
                     "tensor", s->arrays[st->array].name, st->bytes / region_row_bytes(s, st));
        return;
    }
}

/* Bytes of a region's row, below which a lowering that copies a region one copy a row
 * measured a cliff inside a steps loop (in a streaming kernel a few percent: transpose
 * with rows of 128 bytes 0.94 of cudaMemcpy under bulk, of 256 bytes 0.98, H100). */
enum { LINT_MIN_ROW_COPY_BYTES = 256 };

/* An input of a steps loop copied one copy a row (bulk), its rows narrower than that:
 * every step issues a copy a row beside the step's compute, and the copies, not the
 * compute, set the pace. auto is left alone: it takes tensor (one copy a box). */
static void lint_narrow_row_copies(diag_ctx *d, const spec *s)
{
    for (int i = 0; s->has_steps && i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        const mech m = stage_lowering(s, st);
        const long long row = region_row_bytes(s, st);
        if (st->is_output || !mech_row_copies(m) || row >= LINT_MIN_ROW_COPY_BYTES)
            continue;
        diag_warning(d, W_PERF, st->loc,
                     "the %s lowering copies '%s' one copy a row: %lld copies of %lld bytes "
                     "each step, which set the pace beside the step's compute (sgemm_roles, "
                     "A's 128 rows of 128 bytes: 0.32 of cuBLAS under bulk with one producer "
                     "warp, 0.42 with two, 0.49 with four, 0.84 under tensor, H100); use "
                     "tensor (one copy a box), or rows of %d bytes or more", mech_name(m),
                     s->arrays[st->array].name, st->bytes / row, row,
                     LINT_MIN_ROW_COPY_BYTES);
        return;
    }
}

/* A staged input whose region is one contiguous run of its array (whole rows of a literal
 * length, no halo) but whose rows are not a multiple of 16 bytes: the region is copied in
 * chunks of the widest power of two that divides a row, where 16-byte chunks would tile
 * the run. */
static void lint_narrow_chunks(diag_ctx *d, const spec *s)
{
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        const spec_array *a = &s->arrays[st->array];
        const int last = st->rank - 1;
        const long long row = region_row_bytes(s, st);
        if (st->is_output || st->rank < 2 || row % 16 == 0 || st->halo || st->bytes % 16
            || a->dims[last].name || a->dims[last].value != st->extent[last])
            continue;
        diag_warning(d, W_PERF, st->loc,
                     "'%s' is copied in %lld-byte chunks (its rows are %lld bytes), though "
                     "its region is one run of %lld bytes that 16-byte chunks would "
                     "copy (uint8 [n][4] against the same bytes as uchar4 [n]: 0.85 of "
                     "cudaMemcpy against 0.98 under cp.async per tile, 0.84 against 0.99 "
                     "under sync, 0.79 against 0.96 under bulk persistent, H100); declare "
                     "the element as a vector type (uchar4, short2, float4, ...) or the "
                     "array with one dimension fewer", a->name, row & -row, row, st->bytes);
        return;
    }
}

/* A tile planned at a bound (`cols <= 8192`) under a lowering whose copies move a region
 * whole (tensor): the boxes past the array's end are zero-filled and moved as the rest, so
 * a size below the bound moves the bound's bytes every tile. auto is left alone: it takes
 * cp.async for row reductions. */
static void lint_whole_boxes_at_bound(diag_ctx *d, const spec *s)
{
    int b = 0;
    while (b < s->tile_rank && !s->tile_bounded[b])
        ++b;
    for (int i = 0; b < s->tile_rank && i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        const mech m = stage_lowering(s, st);
        if (st->is_output || !mech_whole_boxes(m))
            continue;
        const char *size = s->tile_bounded[b];
        diag_warning(d, W_PERF, st->loc,
                     "the %s lowering copies '%s''s region to the tile's bound (%s <= %lld) "
                     "whatever %s is: the boxes past the array's end are zero-filled and "
                     "moved as the rest, so a %s below the bound costs the bound's bytes every "
                     "tile (rmsnorm, rows of 1024 under a bound of 8192: 0.29 of the "
                     "same-shape reference under tensor against 1.04 under cp.async.mbarrier; "
                     "at rows of 8192, 0.99 of cudaMemcpy, H100); use a chunk-copying lowering "
                     "(cp.async) or leave it to auto, or bound the tile at the sizes it runs at",
                     mech_name(m), s->arrays[st->array].name, size, s->tile[b], size, size);
        return;
    }
}

/* The first staged input, or NULL: where a warning on the copies is said. */
static const spec_stage *first_staged_input(const spec *s)
{
    for (int i = 0; i < s->nstaged; ++i)
        if (!s->stages[i].is_output)
            return &s->stages[i];
    return NULL;
}

/* Resident threads an SM, below which a lowering that copies through registers (TRACK_SYNC:
 * each thread loads, stores and waits) measured a cliff: too few loads are in flight, and
 * with one block an SM nothing else runs during the copy. */
enum { LINT_MIN_SYNC_THREADS = 512 };

/* Synchronous copies (the sync lowering) with few threads an SM, from a block's shared
 * memory or its threads. */
static void lint_sync_few_threads(diag_ctx *d, const spec *s, sched *const *scheds, int n)
{
    const spec_stage *st = first_staged_input(s);
    for (int i = 0; st && i < n; ++i) {
        const sched *sc = scheds[i];
        const int blocks = plan_blocks_per_sm(sc);
        if (sc->track != TRACK_SYNC || blocks * sc->threads >= LINT_MIN_SYNC_THREADS)
            continue;
        diag_warning(d, W_PERF, st->loc,
                     "the %s lowering copies '%s' through registers, and sm_%d holds %d "
                     "block%s of %d threads an SM (%lld bytes of shared memory a block): "
                     "too few loads are in flight, and none overlaps the compute (gemv, one "
                     "block of 256 threads an SM: 0.34 of its best lowering under sync, 0.98 "
                     "under cp.async, H100); use an asynchronous lowering (cp.async, or leave "
                     "it to auto), or a smaller tile", mech_name(sc->mech),
                     s->arrays[st->array].name, sc->sm, blocks, blocks == 1 ? "" : "s", sc->threads,
                     sc->smem_bytes);
        return;
    }
}

/* Chunk copies a producer thread issues for one work item, at or above which producer
 * warps measured a cliff: they issue every chunk of the item's regions while the
 * computing threads wait (rmsnorm's 128 a thread; layernorm's 80 ran at 0.97 of its
 * best). */
enum { LINT_MAX_PRODUCER_CHUNKS = 96 };

/* Chunk copies issued by producer warps, many to a producer thread each work item. The
 * lowerings that copy a row or a box a copy are left alone (lint_narrow_row_copies). */
static void lint_producer_chunks(diag_ctx *d, const spec *s, sched *const *scheds, int n)
{
    for (int i = 0; i < n; ++i) {
        const sched *sc = scheds[i];
        long long chunks = 0;
        for (int j = 0; sc->producer_threads && j < s->nstaged; ++j) {
            const spec_stage *st = &s->stages[j];
            const copy_plan *cp = &sc->copy[j];
            const mech m = stage_lowering(s, st);
            if (!st->is_output && !mech_row_copies(m) && !mech_whole_boxes(m))
                chunks += cp->row_bytes * plan_region_rows(cp, st->rank) / cp->vec;
        }
        if (!sc->producer_threads || chunks / sc->producer_threads < LINT_MAX_PRODUCER_CHUNKS)
            continue;
        diag_warning(d, W_PERF, first_staged_input(s)->loc,
                     "the %s lowering's %d producer threads issue %lld chunk copies each "
                     "work item, %lld a thread, while the %d computing threads wait for "
                     "them (rmsnorm, 128 a thread: 0.38 of its best lowering under "
                     "pipeline-roles per tile at rows of 1024, 0.02 persistent, 0.64 with 4 "
                     "producer warps; layernorm, 80 a thread: 0.97; H200); give it more "
                     "producer warps ('producer_warps 4' and 96 threads more, or "
                     "--producer-warps=4), a smaller tile, or a lowering without producer "
                     "warps (cp.async, or leave it to auto)", mech_name(sc->mech),
                     sc->producer_threads, chunks, chunks / sc->producer_threads,
                     sc->threads - sc->producer_threads);
        return;
    }
}

void lint_perf(diag_ctx *d, const spec *s, sched *const *scheds, int nscheds)
{
    lint_producer_chunks(d, s, scheds, nscheds);
    lint_sync_few_threads(d, s, scheds, nscheds);
    lint_swizzle_ignored(d, s);
    lint_few_float_bins(d, s);
    lint_bins_per_tile(d, s);
    lint_unstaged_in_rows(d, s);
    if (nscheds)
        lint_thin_rows(d, s, scheds[0]);
    lint_halo_reread(d, s);
    lint_cg_halo(d, s);
    lint_narrow_row_copies(d, s);
    lint_narrow_chunks(d, s);
    lint_whole_boxes_at_bound(d, s);
}
