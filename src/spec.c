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

int spec_accum_copies(const spec_accum *acc, int threads)
{
    return ast_type_class(acc->type) == TC_FLOAT ? threads / 32 : 1;
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
