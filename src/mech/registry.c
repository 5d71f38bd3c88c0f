/* mech: the registry of lowering mechanisms, by the names of docs/mechanisms.md. Each
 * implemented mechanism points at its module (mech/NAME.c). */
#include "mech.h"

#include <string.h>

static const struct {
    const char *name;
    int min_sm;
    const mech_module *module;    /* NULL: not implemented yet (auto resolves to others) */
} mech_table[MECH__COUNT] = {
    [MECH_SYNC] = {"sync", 0, &mech_sync_module},
    [MECH_CG] = {"cg", 80, &mech_cg_module},
    [MECH_BARRIER] = {"barrier", 80, &mech_barrier_module},
    [MECH_PIPELINE] = {"pipeline", 80, &mech_pipeline_module},
    [MECH_PIPELINE_ROLES] = {"pipeline-roles", 80, &mech_pipeline_roles_module},
    [MECH_PIPELINE_THREAD] = {"pipeline-thread", 80, &mech_pipeline_thread_module},
    [MECH_PRIMITIVES] = {"primitives", 80, &mech_primitives_module},
    [MECH_CP_ASYNC] = {"cp.async", 80, &mech_cp_async_module},
    [MECH_CP_ASYNC_MBARRIER] = {"cp.async.mbarrier", 80, &mech_cp_async_mbarrier_module},
    [MECH_BULK] = {"bulk", 90, &mech_bulk_module},
    [MECH_TENSOR] = {"tensor", 90, &mech_tensor_module},
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

int mech_min_sm(mech m) { return mech_table[m].min_sm; }
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

mech mech_auto(const spec *s, int sm)
{
    if (sm < 80)
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
 * H100, by far (docs/mechanisms.md): tried first on sm_90. */
static bool is_staged_product(const spec *s)
{
    int operands = 0;
    for (int i = 0; i < s->nstages && s->has_steps; ++i) {
        const spec_stage *st = &s->stages[i];
        if (st->is_output)
            continue;
        if (st->pad > 0)
            return false;
        operands += moves_with_step(s, st);
    }
    return operands >= 2;
}

mech mech_auto_first(const spec *s, int sm)
{
    if (sm >= 90 && is_staged_product(s))
        return MECH_TENSOR;
    return mech_auto(s, sm);
}

unsigned mech_auto_hints(const spec *s, int sm)
{
    return mech_hints(mech_auto_first(s, sm)) | mech_hints(mech_auto(s, sm));
}
