/* spec: what every phase after sema asks of the checked spec, derived from its fields
 * alone (the planner, the emitters and the verifier call these; sema fills the spec). */
#include "pipegen.h"

#include <string.h>

int spec_accum_into(const spec *s, int array)
{
    for (int i = 0; i < s->naccums; ++i)
        if (s->accums[i].into == array)
            return i;
    return -1;
}

int spec_accum_slot(const spec *s, int k)
{
    int slot = 0;
    for (int i = 0; i < k; ++i)
        slot += s->accums[i].extent;
    return slot;
}

int spec_accum_word(const spec_accum *acc)
{
    return ast_type_size(acc->type) == 8 ? 8 : 4;
}

/* Integer bins a copy a lane where the copies fit in this many bytes of shared memory. */
enum { SPEC_LANE_BINS_BYTES = 32 * 1024 };

bool spec_accum_lanes(const spec_accum *acc)
{
    return acc->combine == COMBINE_SUM && ast_type_class(acc->type) != TC_FLOAT
           && (long long)acc->extent * 32 * spec_accum_word(acc) <= SPEC_LANE_BINS_BYTES;
}

/* A min or max folds by atomics into one copy (exact in any order); a floating-point sum
 * into a copy a warp, added in a fixed order. */
int spec_accum_copies(const spec_accum *acc, int threads)
{
    if (acc->combine != COMBINE_SUM)
        return 1;
    if (ast_type_class(acc->type) == TC_FLOAT)
        return threads / 32;
    return spec_accum_lanes(acc) ? 32 : 1;
}

long long spec_accum_bin_bytes(const spec_accum *acc, int threads)
{
    return (long long)spec_accum_copies(acc, threads) * acc->extent * spec_accum_word(acc);
}

/* Whether every use of name in text is name[index]. */
static bool only_indexed_by(const char *text, const char *name, const char *index)
{
    const size_t len = strlen(index);
    for (const char *at = NULL; text_next_word(text, name, &at);) {
        const char *p = text_skip_blank(at + strlen(name));
        if (*p != '[')
            return false;
        p = text_skip_blank(p + 1);
        if (strncmp(p, index, len) != 0 || text_word_char(p[len]) ||
            *text_skip_blank(p + len) != ']')
            return false;
    }
    return true;
}

/* Whether text may declare or assign name again: an occurrence after a type word, a `*` or
 * an `&` (a declarator), before a single `=`, `(` or `{` (an initializer), or in a binding
 * list. Errs towards yes: `2 * c` says yes. */
static bool may_rebind(const char *text, const char *name)
{
    for (const char *at = NULL; text_next_word(text, name, &at);) {
        const char *b = at;
        while (b > text && text_blank(b[-1]))
            --b;
        const char before = b > text ? b[-1] : '\0';
        const char *after = text_skip_blank(at + strlen(name));
        if (text_word_char(before) || before == '*' || before == '&'
            || (after[0] == '=' && after[1] != '=') || after[0] == '(' || after[0] == '{'
            || (before == ',' && after[0] == ']'))
            return true;
    }
    return false;
}

bool spec_accum_by_column(const spec *s, int i)
{
    const spec_accum *acc = &s->accums[i];
    if (!acc->is_array || !s->has_compute || s->compute_kind != BODY_ELEMENTWISE
        || s->tile_rank != 2 || s->nreduces || s->tile_array < 0)
        return false;
    const ast_extent *cols = &s->arrays[s->tile_array].dims[1];
    if (cols->name || cols->value != s->tile[1] || acc->extent != s->tile[1])
        return false;
    const char *body = s->compute.text, *col = s->compute.idx[1];
    return !strchr(body, '#') && !text_names(s->prologue.text, acc->name)
           && !text_names(s->epilogue.text, acc->name) && only_indexed_by(body, acc->name, col)
           && !may_rebind(body, col);
}

long long spec_size_bound(const spec *s, const char *size)
{
    for (int d = 0; d < s->tile_rank; ++d)
        if (s->tile_bounded[d] && strcmp(s->tile_bounded[d], size) == 0)
            return s->tile[d];
    return 0;
}

bool spec_tile_at_bound(const spec *s)
{
    for (int d = 0; d < s->tile_rank; ++d)
        if (s->tile_bounded[d])
            return true;
    return false;
}

/* A staged region follows the tile in dimension d when its origin there is the tile's
 * origin plus a constant and its extent the tile's; it is fixed when its origin names no
 * tile origin. Packing scales the one and keeps the other. */
static bool region_follows(const spec *s, const spec_stage *st, int d)
{
    const affine *o = &st->origin[d];
    return o->nterms == 1 && o->coef[0] == 1 && strcmp(o->var[0], s->tile_at[d]) == 0
           && st->extent[d] == s->tile[d];
}

static bool region_fixed(const spec *s, const spec_stage *st, int d)
{
    for (int k = 0; k < st->origin[d].nterms; ++k)
        for (int t = 0; t < s->tile_rank; ++t)
            if (strcmp(st->origin[d].var[k], s->tile_at[t]) == 0)
                return false;
    return true;
}

/* Packing keeps the meaning where a work item's rows are independent and nothing names
 * the tile's origin or extent: an elementwise compute and row reductions, no steps,
 * march, accumulators, clusters, halos or host streaming. */
static bool packs_keep_meaning(const spec *s)
{
    if (s->tile_rank != 2 || !s->tile_bounded[1] || s->tile_bounded[0] || s->has_steps
        || s->march || s->host_stream || s->naccums || s->cluster > 1 || s->has_prologue
        || s->has_epilogue || (s->has_compute && s->compute_kind != BODY_ELEMENTWISE))
        return false;
    for (int t = 0; t < s->tile_rank; ++t) {
        if (s->has_compute && text_names(s->compute.text, s->tile_at[t]))
            return false;
        for (int i = 0; i < s->nreduces; ++i)
            if (text_names(s->reduces[i].expr.text, s->tile_at[t]))
                return false;
    }
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        if (st->halo)
            return false;
        for (int d = 0; d < st->rank; ++d)
            if (!region_fixed(s, st, d) && !(d < s->tile_rank && region_follows(s, st, d)))
                return false;
    }
    return true;
}

int spec_row_packs(const spec *s, long long packs[SPEC_MAX_PACKS])
{
    int n = 0;
    packs[n++] = 1;
    if (!packs_keep_meaning(s))
        return n;
    /* Rows of at least 256 elements and 16-byte multiples: each pack's slot row copies
     * in whole chunks, and its threads still see whole warps' worth of a row. */
    const int elem = ast_type_size(s->arrays[s->tile_array].type);
    for (long long p = 2; n < SPEC_MAX_PACKS; p *= 2) {
        const long long w = s->tile[1] / p;
        if (s->tile[1] % p || w < 256 || w * elem % 16)
            break;
        packs[n++] = p;
    }
    return n;
}

/* A packed kernel unrolls its loops over PACK rows and takes 92-105 registers a thread
 * where the unpacked one takes 32 (rmsnorm, 512 threads, ptxas sm_90): one block an SM
 * where shared memory holds three, 0.42 of cudaMemcpy at rows of 1024 against 1.00 at
 * 8192 (H100). Its launch bounds ask for the blocks an SM holds at the registers a
 * thread that leaves the samples' packed kernels unspilled (ptxas sm_90, rmsnorm and
 * softmax_rows): 40, three blocks of 512 threads, for every pack (packs of 2 spilled
 * 12-24 bytes at 40 until their wide rows copied without stepping state, see
 * pg_region_chunks). Three blocks against two, one process: softmax_rows at rows of 1024
 * 0.98 (0.87), rmsnorm 0.88 (0.85) (H100); at 4096 (packs of 2) softmax_rows 0.81
 * (0.64), rmsnorm 0.84 (0.73) (H200). */
static int spec_pack_blocks(int threads)
{
    const int blocks = 65536 / (threads * 40);
    return blocks > 1 ? blocks : 1;
}

spec *spec_packed(arena *a, const spec *s, long long pack)
{
    spec *p = arena_alloc(a, sizeof *p);
    *p = *s;
    p->stages = arena_alloc(a, sizeof *p->stages * (size_t)(s->nstaged ? s->nstaged : 1));
    for (int i = 0; i < s->nstaged; ++i) {
        spec_stage *st = &p->stages[i];
        *st = s->stages[i];
        if (region_follows(s, st, 0))
            st->extent[0] *= pack;
        if (region_follows(s, st, 1))
            st->extent[1] /= pack;
        st->bytes = ast_type_size(s->arrays[st->array].type);
        for (int d = 0; d < st->rank; ++d)
            st->bytes *= st->extent[d];
    }
    p->tile[0] = s->tile[0] * pack;
    p->tile[1] = s->tile[1] / pack;
    if (!s->blocks_per_sm)
        p->blocks_per_sm = spec_pack_blocks(s->threads);
    return p;
}

long long spec_tile_rows(const spec *s)
{
    long long rows = 1;
    for (int d = 0; d + 1 < s->tile_rank; ++d)
        rows *= s->tile[d];
    return rows;
}

int spec_row_group(const spec *s, int warps)
{
    const long long rows = spec_tile_rows(s);
    if (rows >= warps)
        return 1;
    return rows > 1 && warps % rows == 0 ? warps / (int)rows : 0;
}

bool spec_reduce_is_arg(const spec_reduce *r)
{
    return r->combine == COMBINE_ARGMIN || r->combine == COMBINE_ARGMAX;
}

int spec_reduce_bytes(const spec_reduce *r)
{
    return spec_reduce_is_arg(r) ? 16 : ast_type_size(r->type);
}

int spec_ring_slots(const spec *s)
{
    /* One block per tile with no inner steps runs one step per block: a ring of one. */
    bool one_step = s->grid == GRID_PER_TILE && !s->has_steps && s->march == 0;
    return one_step ? 1 : s->ring_depth;
}

bool spec_stage_border(const spec_stage *st)
{
    return st->halo && st->halo_fill != HALO_ZERO;
}

int spec_own_threads(const spec *s)
{
    return s->nthreads_offered ? s->threads_offered[0] : 256;
}

bool spec_offers_threads(const spec *s, int threads)
{
    for (int i = 0; i < s->nthreads_offered; ++i)
        if (s->threads_offered[i] == threads)
            return true;
    return !s->nthreads_offered && threads == 256;
}

bool spec_bodies_name(const spec *s, unsigned which, const char *word)
{
    const spec_body *device[] = {&s->compute, &s->prologue, &s->epilogue};
    for (size_t i = 0; (which & SPEC_DEVICE_BODIES) && i < sizeof device / sizeof device[0]; ++i)
        if (text_names(device[i]->text, word))
            return true;
    if ((which & SPEC_REFERENCE_BODY) && text_names(s->reference.text, word))
        return true;
    for (int r = 0; (which & SPEC_REDUCE_BODIES) && r < s->nreduces; ++r)
        if (text_names(s->reduces[r].expr.text, word) || text_names(s->reduces[r].op.text, word)
            || text_names(s->reduces[r].identity.text, word))
            return true;
    return false;
}

bool spec_stages_halo(const spec *s)
{
    for (int i = 0; i < s->nstaged; ++i)
        if (s->stages[i].halo)
            return true;
    return false;
}
