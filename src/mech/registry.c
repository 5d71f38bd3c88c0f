/* mech: the registry of lowerings, by the names of docs/lowerings.md. Each
 * implemented lowering points at its module (mech/NAME.c). */
#include "mech.h"

#include <string.h>

static const struct {
    const char *name;
    unsigned needs;               /* the ARCH_* features its code needs */
    const mech_module *module;    /* NULL: not implemented yet (auto resolves to others) */
} mech_table[MECH__COUNT] = {
#define LOWERING(id, name, needs, module) [MECH_##id] = {name, needs, &module},
#include "lowerings.h"
#undef LOWERING
    [MECH_AUTO] = {"auto", 0, NULL},
};

mech mech_from_name(const char *name)
{
    for (int m = 0; m < MECH__COUNT; ++m)
        if (strcmp(mech_table[m].name, name) == 0)
            return (mech)m;
    return MECH__COUNT;
}

const char *mech_name(mech m) { return mech_table[m].name; }

static const char *name_at(int i) { return mech_table[i].name; }
const char *mech_suggest(const char *word) { return diag_closest(word, name_at, MECH__COUNT); }

bool mech_known(mech m) { return m < MECH__COUNT; }
bool mech_is_auto(mech m) { return m == MECH_AUTO; }
int mech_count(void) { return MECH__COUNT; }
bool mech_runs_on(mech m, int sm) { return arch_has(sm, false, mech_table[m].needs); }
int mech_min_sm(mech m) { return mech_table[m].needs ? arch_first_with(mech_table[m].needs) : 0; }
bool mech_implemented(mech m) { return m == MECH_AUTO || mech_table[m].module; }
const mech_module *mech_module_of(mech m) { return mech_table[m].module; }
bool mech_roles(mech m) { return mech_table[m].module && mech_table[m].module->roles; }
int mech_min_producer_warps(mech m)
{
    return mech_table[m].module ? mech_table[m].module->min_producer_warps : 0;
}
unsigned mech_hints(mech m) { return mech_table[m].module ? mech_table[m].module->hints : 0; }
bool mech_dense_rows(mech m)
{
    return mech_table[m].module && mech_table[m].module->dense_rows;
}

bool mech_row_copies(mech m)
{
    return mech_table[m].module && mech_table[m].module->row_copies;
}

bool mech_whole_boxes(mech m)
{
    return mech_table[m].module && mech_table[m].module->whole_boxes;
}

bool mech_host_steps(mech m)
{
    return mech_table[m].module && (mech_table[m].module->plan_grid
                                    || mech_table[m].module->plan_host);
}

bool mech_takes_cluster(mech m)
{
    return mech_table[m].module && mech_table[m].module->multicast;
}

/* Multicast is planned for the arch-specific target only: for the plain one ptxas warns
 * that it may be slow. */
bool mech_multicasts(mech m, int sm, bool specific)
{
    return mech_takes_cluster(m) && specific && arch_has(sm, true, ARCH_CLUSTERS);
}

const char *mech_names_where(arena *a, bool (*pred)(mech))
{
    int n = 0, count = 0;
    for (int m = 0; m < MECH__COUNT; ++m)
        count += pred((mech)m);
    const char *list = "";
    for (int m = 0; m < MECH__COUNT; ++m)
        if (pred((mech)m))
            list = arena_printf(a, "%s%s%s", list, n++ == 0 ? "" : n == count ? " and " : ", ",
                                mech_table[m].name);
    return list;
}

mech mech_auto(const spec *s, int sm)
{
    if (!mech_runs_on(MECH_CP_ASYNC, sm))
        return MECH_SYNC;
    /* Producer warps need a lowering that plans roles: cp.async refuses them. */
    return s->producer_warps ? MECH_CP_ASYNC_MBARRIER : MECH_CP_ASYNC;
}

static bool moves_with_step(const spec *s, const spec_stage *st)
{
    for (int d = 0; d < st->rank; ++d)
        for (int t = 0; t < st->origin[d].nterms; ++t)
            if (strcmp(st->origin[d].var[t], s->step_var) == 0)
                return true;
    return false;
}

/* A product of staged operands (a `steps` loop over two or more staged inputs whose
 * regions move with the step, no `pad`: the matmuls) ran fastest under tensor on the
 * H100, by far (docs/lowerings.md): tried first on sm_90. */
static bool is_staged_product(const spec *s)
{
    int operands = 0;
    for (int i = 0; i < s->nstaged && s->has_steps; ++i) {
        const spec_stage *st = &s->stages[i];
        if (st->is_output)
            continue;
        if (st->pad > 0)
            return false;
        operands += moves_with_step(s, st);
    }
    return operands >= 2;
}

/* An elementwise compute over a staged tile of rank 2 or more, no row reductions, no
 * producer warps: tensor ran these at or above cp.async on the H100, one process each
 * (docs/lowerings.md): blur 0.82 against 0.72 per tile, rgba 1.00 against 0.90, colsum
 * 0.97 against 0.94; jacobi2d and transpose within 1-2% either way. The row reductions
 * ran slower under tensor (layernorm 0.96 against 1.01), rank-1 streams alike or slower
 * (a histogram of bytes 0.53 against 0.56). */
static bool is_tiled_elementwise(const spec *s)
{
    return s->compute_kind == BODY_ELEMENTWISE && s->tile_rank >= 2 && !s->nreduces
           && !s->producer_warps && s->nstaged > 0;
}

/* Row reductions over a tile of several rows, no producer warps: tensor ran these at or
 * above cp.async, H100, one process (2026-11-27): gemv (8 rows of 4096, against the
 * same-shape reference) 0.978 against 0.903, rowstats (6 rows of 128, rank 3) 0.522
 * against 0.362, rowmax (8 rows of 512) 0.993 against 0.986, layernorm (8 rows of 1024)
 * 0.990 against 0.989; on an H200 each by 1-13%. A tile of one row stays with cp.async
 * (softmax at rows of 1024, 4096, 8192: 0.999, 1.001, 0.989 under tensor against 1.001,
 * 1.005, 1.006), and its packed kernels with it. */
static bool is_multirow_reduction(const spec *s)
{
    return s->nreduces && spec_tile_rows(s) > 1 && !s->producer_warps;
}

/* Row reductions over a tile of one row that tensor copies in one box (rows of a literal
 * length wider than a box, folded: mech_tensor_folds): H200, in turns, 3 rounds, of the
 * same-shape reference, softmax8k 0.962 against 0.884 under cp.async (unfolded 0.831).
 * On the H100, before the fold, every lowering of softmax at rows of 1024, 4096 and 8192
 * lay within 2% of the best (tests/gpu/h100.wisdom). A run-time row length stays with
 * cp.async (softmax_rows; rmsnorm, whose tile is planned at a bound). */
static bool is_folded_row_reduction(const spec *s)
{
    bool any = false;
    if (!s->nreduces || s->producer_warps)
        return false;
    for (int i = 0; i < s->nstaged; ++i) {
        if (s->stages[i].is_output)
            continue;
        if (!mech_tensor_folds(s, i))
            return false;
        any = true;
    }
    return any;
}

/* A stream whose compute adds into shared bins (a histogram: an array accumulator not by
 * column) spends its threads on shared atomics; bulk copies leave the copying to the
 * copy engine. Of the same-shape reference, H100, one process: histogram of bytes bulk
 * 0.954 against cp.async 0.824 (tensor 0.823), histogram of uchar4 bulk 0.984 against
 * cp.async 0.977 (tensor 0.993). */
static bool is_binned_stream(const spec *s)
{
    if (s->tile_rank != 1 || s->producer_warps)
        return false;
    for (int i = 0; i < s->naccums; ++i)
        if (s->accums[i].is_array && !spec_accum_by_column(s, i))
            return true;
    return false;
}

mech mech_auto_first(const spec *s, int sm)
{
    if (mech_runs_on(MECH_TENSOR, sm)
        && (is_staged_product(s) || is_tiled_elementwise(s) || is_multirow_reduction(s)
            || is_folded_row_reduction(s)))
        return MECH_TENSOR;
    if (mech_runs_on(MECH_BULK, sm) && is_binned_stream(s))
        return MECH_BULK;
    return mech_auto(s, sm);
}

mech mech_resolve(const spec *s, mech m, int sm)
{
    return m == MECH_AUTO ? mech_auto(s, sm) : m;
}

mech mech_resolve_first(const spec *s, mech m, int sm)
{
    return m == MECH_AUTO ? mech_auto_first(s, sm) : m;
}

unsigned mech_auto_hints(const spec *s, int sm)
{
    return mech_hints(mech_auto_first(s, sm)) | mech_hints(mech_auto(s, sm));
}
