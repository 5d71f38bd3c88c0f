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
    return ast_type_class(acc->type) != TC_FLOAT
           && (long long)acc->extent * 32 * spec_accum_word(acc) <= SPEC_LANE_BINS_BYTES;
}

int spec_accum_copies(const spec_accum *acc, int threads)
{
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

long long spec_tile_rows(const spec *s)
{
    long long rows = 1;
    for (int d = 0; d + 1 < s->tile_rank; ++d)
        rows *= s->tile[d];
    return rows;
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
