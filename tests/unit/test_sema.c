/* Unit tests of sema.c: the checked spec that planning works from (declarations, sizes in
 * order of first appearance, defaults, the tile, regions as affine forms, halos, stage
 * options, accumulators, bodies), the ring size, the shared-memory limits, and the exact
 * text of semantic diagnostics (message, place, notes, several errors in one run). */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* One checked spec (the harness): its arena, the spec, and the diagnostics printed. */
typedef harness checked;

static const target both = {.sm = {80, 90}, .narch = 2};

static void check_for(checked *c, const char *src, const target *t)
{
    h_start(c, "t.pipe", src);
    h_check(c, t);
    h_end(c);
}

static void check(checked *c, const char *src) { check_for(c, src, &both); }

static void checked_free(checked *c) { h_free(c); }

/* src must be accepted without any diagnostic. */
static void expect_ok(checked *c, const char *src)
{
    check(c, src);
    ck_assert_str_eq(c->diags, "");
    ck_assert(c->ok);
    ck_assert_int_eq(c->errors, 0);
}

/* src must give exactly these diagnostics and this many errors (rejected when there are
 * errors, accepted with warnings only). */
static void expect_diags_for(const char *src, const target *t, const char *want, int nerrors)
{
    checked c;
    check_for(&c, src, t);
    ck_assert_str_eq(c.diags, want);
    ck_assert_int_eq(c.errors, nerrors);
    ck_assert(c.ok == (nerrors == 0));
    checked_free(&c);
}

static void expect_diags(const char *src, const char *want, int nerrors)
{
    expect_diags_for(src, &both, want, nerrors);
}

/* An affine form must be c + sum coef*var with the terms in this order. */
static void expect_affine(const affine *a, long long c, int nterms, const long long *coef,
                          const char *const *var)
{
    ck_assert_int_eq(a->c, c);
    ck_assert_int_eq(a->nterms, nterms);
    for (int i = 0; i < nterms; ++i) {
        ck_assert_int_eq(a->coef[i], coef[i]);
        ck_assert_str_eq(a->var[i], var[i]);
    }
}

static const char *saxpy =
    "pipeline saxpy {\n"
    "  param float a;\n"
    "  in    float x[n];\n"
    "  in    float y[n];\n"
    "  out   float z[n];\n"
    "  threads 128;\n"
    "  stages  4;\n"
    "  grid    persistent;\n"
    "  tile    z[2048];\n"
    "  stage   x, y;\n"
    "  compute elementwise (i) {\n"
    "    z[i] = a * x[i] + y[i];\n"
    "  }\n"
    "  reference (i) {\n"
    "    z[i] = a * x[i] + y[i];\n"
    "  }\n"
    "}\n";

/* ------------------------------------------------------------------ the checked spec */

START_TEST(saxpy_declarations)
{
    checked c;
    expect_ok(&c, saxpy);
    const spec *s = &c.s;
    ck_assert_str_eq(s->name, "saxpy");
    ck_assert_int_eq(s->loc.line, 1);
    ck_assert_int_eq(s->loc.col, 1);
    ck_assert_int_eq(s->nparams, 1);
    ck_assert_str_eq(s->params[0].name, "a");
    ck_assert_int_eq(s->params[0].type, TY_FLOAT);
    ck_assert_int_eq(s->params[0].loc.line, 2);
    ck_assert_int_eq(s->params[0].loc.col, 15);
    ck_assert_int_eq(s->narrays, 3);
    const char *names[] = {"x", "y", "z"};
    const ast_dir dirs[] = {DIR_IN, DIR_IN, DIR_OUT};
    const int staged[] = {0, 1, -1};
    for (int i = 0; i < 3; ++i) {
        ck_assert_str_eq(s->arrays[i].name, names[i]);
        ck_assert_int_eq(s->arrays[i].dir, dirs[i]);
        ck_assert_int_eq(s->arrays[i].type, TY_FLOAT);
        ck_assert_int_eq(s->arrays[i].rank, 1);
        ck_assert_str_eq(s->arrays[i].dims[0].name, "n");
        ck_assert_int_eq(s->arrays[i].staged, staged[i]);
        ck_assert_int_eq(s->arrays[i].loc.line, 3 + i);
    }
    ck_assert_int_eq(s->nsizes, 1);
    ck_assert_str_eq(s->sizes[0], "n");
    ck_assert_int_eq(s->naccums, 0);
    checked_free(&c);
}
END_TEST

START_TEST(saxpy_schedule_items)
{
    checked c;
    expect_ok(&c, saxpy);
    const spec *s = &c.s;
    ck_assert_int_eq(s->threads, 128);
    ck_assert_int_eq(s->ring_depth, 4);
    ck_assert_int_eq(s->grid, GRID_PERSISTENT);
    ck_assert_int_eq(s->grid_loc.line, 8);
    ck_assert_int_eq(s->producer_warps, 0);
    ck_assert_int_eq(s->tile_array, 2);
    ck_assert_int_eq(s->tile_rank, 1);
    ck_assert_int_eq(s->tile[0], 2048);
    ck_assert_str_eq(s->tile_at[0], "pg_org0");
    ck_assert(!s->has_steps);
    ck_assert_int_eq(s->march, 0);
    ck_assert_int_eq(s->mech, MECH_AUTO);
    ck_assert_int_eq(spec_ring_slots(s), 4);
    checked_free(&c);
}
END_TEST

START_TEST(saxpy_stages_and_bodies)
{
    checked c;
    expect_ok(&c, saxpy);
    const spec *s = &c.s;
    ck_assert_int_eq(s->nstaged, 2);
    for (int i = 0; i < 2; ++i) {
        const spec_stage *st = &s->stages[i];
        ck_assert_int_eq(st->array, i);
        ck_assert(!st->is_output);
        ck_assert_int_eq(st->rank, 1);
        expect_affine(&st->origin[0], 0, 1, (long long[]){1}, (const char *[]){"pg_org0"});
        ck_assert_int_eq(st->extent[0], 2048);
        ck_assert_int_eq(st->bytes, 8192);
        ck_assert_int_eq(st->halo, 0);
        ck_assert_int_eq(st->mech, MECH_AUTO);
        ck_assert_int_eq(st->cache, CACHE_DEFAULT);
        ck_assert_int_eq(st->prefetch, 0);
        ck_assert_int_eq(st->evict, EVICT_DEFAULT);
        ck_assert_int_eq(st->loc.line, 10);
    }
    ck_assert_int_eq(s->stages[0].loc.col, 11);
    ck_assert_int_eq(s->stages[1].loc.col, 14);
    ck_assert(s->has_compute);
    ck_assert_int_eq(s->compute_kind, BODY_ELEMENTWISE);
    ck_assert_int_eq(s->compute.nidx, 1);
    ck_assert_str_eq(s->compute.idx[0], "i");
    ck_assert_str_eq(s->compute.text, "\n    z[i] = a * x[i] + y[i];\n  ");
    ck_assert_int_eq(s->compute.loc.line, 11);
    ck_assert_int_eq(s->compute.loc.col, 28);
    ck_assert(s->has_reference);
    ck_assert_int_eq(s->reference.nidx, 1);
    ck_assert_int_eq(s->reference.loc.line, 14);
    ck_assert(!s->has_prologue);
    ck_assert(!s->has_epilogue);
    checked_free(&c);
}
END_TEST

START_TEST(defaults)
{
    checked c;
    expect_ok(&c, "pipeline d {\n  in float x[n];\n  out float z[n];\n  tile z[100];\n"
                  "  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n");
    ck_assert_int_eq(c.s.threads, 256);
    ck_assert_int_eq(c.s.ring_depth, 2);
    ck_assert_int_eq(c.s.grid, GRID_PER_TILE);
    ck_assert_int_eq(c.s.producer_warps, 0);
    ck_assert_int_eq(c.s.march, 0);
    ck_assert_int_eq(c.s.mech, MECH_AUTO);
    ck_assert(!c.s.has_reference);
    /* One block per tile and no inner steps: a ring of one slot, whatever `stages` says. */
    ck_assert_int_eq(spec_ring_slots(&c.s), 1);
    ck_assert_int_eq(c.s.stages[0].bytes, 400);
    checked_free(&c);
}
END_TEST

START_TEST(declarations_after_use)
{
    /* Arrays may be declared after the items that use them. */
    checked c;
    expect_ok(&c, "pipeline d {\n  tile z[64];\n  stage x;\n"
                  "  compute elementwise (i) { z[i] = x[i]; }\n"
                  "  out int z[len];\n  in int x[len];\n}\n");
    ck_assert_int_eq(c.s.tile_array, 0);
    ck_assert_int_eq(c.s.stages[0].array, 1);
    ck_assert_int_eq(c.s.arrays[1].staged, 0);
    ck_assert_int_eq(c.s.stages[0].bytes, 256);
    checked_free(&c);
}
END_TEST

START_TEST(sizes_in_order_of_first_appearance)
{
    checked c;
    expect_ok(&c, "pipeline g {\n  in float a[M][K];\n  in float b[K][N];\n  out float z[M][N];\n"
                  "  in float v[7];\n  tile z[16][16];\n"
                  "  compute elementwise (i, j) { z[i][j] = a[i][0] * b[0][j]; }\n}\n");
    ck_assert_int_eq(c.s.nsizes, 3);
    ck_assert_str_eq(c.s.sizes[0], "M");
    ck_assert_str_eq(c.s.sizes[1], "K");
    ck_assert_str_eq(c.s.sizes[2], "N");
    ck_assert_ptr_null(c.s.arrays[3].dims[0].name);
    ck_assert_int_eq(c.s.arrays[3].dims[0].value, 7);
    ck_assert_int_eq(c.s.tile_rank, 2);
    ck_assert_int_eq(c.s.tile[0], 16);
    ck_assert_str_eq(c.s.tile_at[0], "pg_org0");
    ck_assert_str_eq(c.s.tile_at[1], "pg_org1");
    ck_assert_int_eq(c.s.compute.nidx, 2);
    ck_assert_str_eq(c.s.compute.idx[1], "j");
    checked_free(&c);
}
END_TEST

/* ------------------------------------------------------------------ regions */

START_TEST(regions_are_affine_forms)
{
    checked c;
    expect_ok(&c, "pipeline g {\n  in float b[M][K];\n  out float z[M][N];\n"
                  "  tile z[16][32] at (r, c);\n  steps k over K by 8;\n"
                  "  stage b[r + 2 * k - 1 : 16][3 * c - k + 4 : 4 * 8];\n"
                  "  compute elementwise (i, j) { z[i][j] = b[i][j]; }\n}\n");
    const spec *s = &c.s;
    ck_assert(s->has_steps);
    ck_assert_str_eq(s->step_var, "k");
    ck_assert_str_eq(s->step_bound.name, "K");
    ck_assert_int_eq(s->step_by, 8);
    ck_assert_str_eq(s->tile_at[0], "r");
    ck_assert_str_eq(s->tile_at[1], "c");
    const spec_stage *st = &s->stages[0];
    ck_assert_int_eq(st->rank, 2);
    expect_affine(&st->origin[0], -1, 2, (long long[]){1, 2}, (const char *[]){"r", "k"});
    expect_affine(&st->origin[1], 4, 2, (long long[]){3, -1}, (const char *[]){"c", "k"});
    ck_assert_int_eq(st->extent[0], 16);
    ck_assert_int_eq(st->extent[1], 32);
    ck_assert_int_eq(st->bytes, 16 * 32 * 4);
    /* With steps the ring has `stages` slots even with a grid of one block per tile. */
    ck_assert_int_eq(spec_ring_slots(s), 2);
    checked_free(&c);
}
END_TEST

START_TEST(region_terms_fold)
{
    /* Terms of one variable fold into one coefficient; negation and constant products. */
    checked c;
    expect_ok(&c, "pipeline g {\n  in float x[n];\n  out float z[n];\n  tile z[64] at (c);\n"
                  "  stage x[-(2 - c) * 3 + c - c * 2 : (2 + 2) * 16];\n"
                  "  compute elementwise (i) { z[i] = x[i]; }\n}\n");
    expect_affine(&c.s.stages[0].origin[0], -6, 1, (long long[]){2}, (const char *[]){"c"});
    ck_assert_int_eq(c.s.stages[0].extent[0], 64);
    checked_free(&c);
}
END_TEST

START_TEST(halo_widens_the_region)
{
    checked c;
    expect_ok(&c, "pipeline h {\n  in half u[m][n];\n  out half v[m][n];\n"
                  "  tile v[8][64] at (r, c);\n  stage u halo 2 clamp;\n"
                  "  compute elementwise (i, j) { v[i][j] = u[i][j]; }\n}\n");
    const spec_stage *st = &c.s.stages[0];
    ck_assert_int_eq(st->halo, 2);
    ck_assert_int_eq(st->halo_fill, HALO_CLAMP);
    expect_affine(&st->origin[0], -2, 1, (long long[]){1}, (const char *[]){"r"});
    expect_affine(&st->origin[1], -2, 1, (long long[]){1}, (const char *[]){"c"});
    ck_assert_int_eq(st->extent[0], 12);
    ck_assert_int_eq(st->extent[1], 68);
    ck_assert_int_eq(st->bytes, 12 * 68 * 2);
    checked_free(&c);
}
END_TEST

START_TEST(stage_options)
{
    checked c;
    expect_ok(&c, "pipeline o {\n  in double x[n];\n  in uint8 y[n];\n  out double z[n];\n"
                  "  grid persistent;\n  tile z[100];\n"
                  "  stage x using cp.async cache ca prefetch 128 evict first;\n"
                  "  stage y evict last prefetch 256;\n"
                  "  compute elementwise (i) { z[i] = x[i] + y[i]; }\n}\n");
    const spec *s = &c.s;
    ck_assert_int_eq(s->stages[0].mech, MECH_CP_ASYNC);
    ck_assert_int_eq(s->stages[0].cache, CACHE_CA);
    ck_assert_int_eq(s->stages[0].prefetch, 128);
    ck_assert_int_eq(s->stages[0].evict, EVICT_FIRST);
    ck_assert_int_eq(s->stages[0].bytes, 800);
    ck_assert_int_eq(s->stages[1].mech, MECH_AUTO);
    ck_assert_int_eq(s->stages[1].cache, CACHE_DEFAULT);
    ck_assert_int_eq(s->stages[1].prefetch, 256);
    ck_assert_int_eq(s->stages[1].evict, EVICT_LAST);
    ck_assert_int_eq(s->stages[1].bytes, 100);
    /* The pipeline's mechanism is the one a stage names, with its place. */
    ck_assert_int_eq(s->mech, MECH_CP_ASYNC);
    ck_assert_int_eq(s->mech_loc.line, 7);
    ck_assert_int_eq(s->mech_loc.col, 9);
    checked_free(&c);
}
END_TEST

START_TEST(same_mechanism_twice_is_fine)
{
    checked c;
    expect_ok(&c, "pipeline o {\n  in float x[n];\n  in float y[n];\n  out float z[n];\n"
                  "  tile z[256];\n  stage x using sync;\n  stage y using sync;\n"
                  "  compute elementwise (i) { z[i] = x[i] + y[i]; }\n}\n");
    ck_assert_int_eq(c.s.mech, MECH_SYNC);
    ck_assert_int_eq(c.s.mech_loc.line, 7);
    checked_free(&c);
}
END_TEST

START_TEST(element_sizes)
{
    static const struct { const char *type; int size; } types[] = {
        {"float", 4}, {"double", 8}, {"int", 4}, {"half", 2}, {"bfloat16", 2}, {"uint8", 1},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
        char src[256];
        snprintf(src, sizeof src, "pipeline t {\n  in %s x[n];\n  out %s z[n];\n"
                 "  tile z[96];\n  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 types[i].type, types[i].type);
        checked c;
        expect_ok(&c, src);
        ck_assert_int_eq(c.s.stages[0].bytes, 96 * types[i].size);
        ck_assert_int_eq(ast_type_size(c.s.arrays[0].type), types[i].size);
        ck_assert_str_eq(ast_type_name(c.s.arrays[0].type), types[i].type);
        checked_free(&c);
    }
}
END_TEST

/* ------------------------------------------------------------------ accumulators */

START_TEST(accumulators)
{
    checked c;
    expect_ok(&c, "pipeline r {\n  in float x[n];\n  out float s[1];\n  out int m[1];\n"
                  "  grid persistent;\n  stages 3;\n  tile x[4096];\n  stage x;\n"
                  "  accum float acc combine sum into s;\n  accum int top combine max into m;\n"
                  "  compute elementwise (i) { acc += x[i]; top = max(top, (int)x[i]); }\n}\n");
    const spec *s = &c.s;
    ck_assert_int_eq(s->naccums, 2);
    ck_assert_str_eq(s->accums[0].name, "acc");
    ck_assert_int_eq(s->accums[0].type, TY_FLOAT);
    ck_assert_int_eq(s->accums[0].combine, COMBINE_SUM);
    ck_assert_int_eq(s->accums[0].into, 1);
    ck_assert_int_eq(s->accums[0].loc.line, 9);
    ck_assert_int_eq(s->accums[0].loc.col, 15);
    ck_assert_str_eq(s->accums[1].name, "top");
    ck_assert_int_eq(s->accums[1].type, TY_INT);
    ck_assert_int_eq(s->accums[1].combine, COMBINE_MAX);
    ck_assert_int_eq(s->accums[1].into, 2);
    ck_assert_int_eq(s->tile_array, 0);
    ck_assert_int_eq(spec_ring_slots(s), 3);
    checked_free(&c);
}
END_TEST

/* ------------------------------------------------------------------ ring and budget */

START_TEST(ring_slots)
{
    static const struct { const char *items; int slots; } cases[] = {
        {"stages 5; grid per_tile;", 1},               /* one step per block */
        {"stages 5; grid persistent;", 5},
        {"stages 1; grid persistent;", 1},
        {"stages 3; march 4;", 3},                     /* march: several tiles per block */
        {"stages 16; grid persistent;", 16},
        {"grid persistent;", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char src[256];
        snprintf(src, sizeof src, "pipeline t {\n  in float x[n];\n  out float z[n];\n  %s\n"
                 "  tile z[32];\n  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 cases[i].items);
        checked c;
        expect_ok(&c, src);
        ck_assert_msg(spec_ring_slots(&c.s) == cases[i].slots, "%s: %d slots, expected %d",
                      cases[i].items, spec_ring_slots(&c.s), cases[i].slots);
        checked_free(&c);
    }
}
END_TEST

START_TEST(smem_limits)
{
    ck_assert_int_eq(arch_smem_limit(80), 163 * 1024);
    ck_assert_int_eq(arch_smem_limit(87), 163 * 1024);
    ck_assert_int_eq(arch_smem_limit(86), 99 * 1024);
    ck_assert_int_eq(arch_smem_limit(89), 99 * 1024);
    ck_assert_int_eq(arch_smem_limit(90), 227 * 1024);
    ck_assert_int_eq(arch_smem_limit(75), 48 * 1024);
}
END_TEST

START_TEST(arch_table_features)
{
    /* What each lowering and plan rule asks of an architecture, from the one table. */
    ck_assert_ptr_null(arch_find(75));
    ck_assert_ptr_null(arch_find(101));
    ck_assert(arch_has(80, false, ARCH_CP_ASYNC) && !arch_has(80, false, ARCH_TMA));
    ck_assert(arch_has(90, false, ARCH_TMA | ARCH_CLUSTERS));
    ck_assert(!arch_has(90, false, ARCH_WGMMA) && arch_has(90, true, ARCH_WGMMA));
    ck_assert(!arch_has(100, true, ARCH_WGMMA) && arch_has(100, true, ARCH_SETMAXNREG));
    ck_assert(!arch_has(89, true, ARCH_SETMAXNREG) && !arch_find(89)->has_specific);
    ck_assert(!arch_has(75, false, ARCH_CP_ASYNC));
    ck_assert_int_eq(arch_first_with(ARCH_TMA), 90);
    ck_assert_int_eq(arch_first_with(ARCH_CP_ASYNC), 80);
    ck_assert_int_eq(arch_max_threads(80), 2048);
    ck_assert_int_eq(arch_max_threads(86), 1536);
    ck_assert_int_eq(mech_min_sm(MECH_TENSOR), 90);
    ck_assert_int_eq(mech_min_sm(MECH_SYNC), 0);
    ck_assert(mech_runs_on(MECH_CP_ASYNC, 86) && !mech_runs_on(MECH_BULK, 89));
    for (int i = 1; i < arch_count(); ++i)
        ck_assert_int_lt(arch_at(i - 1)->sm, arch_at(i)->sm);
}
END_TEST

static const char *budget_src =
    "pipeline b {\n  in float x[n];\n  out float z[n];\n  stages 4;\n  grid persistent;\n"
    "  tile z[8000];\n  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n";

START_TEST(budget_per_architecture)
{
    /* 4 slots of 32000 bytes rounded to 32000 (a multiple of 128): 128000 bytes, which fit
     * sm_80 and sm_90 but not sm_86. */
    checked c;
    expect_ok(&c, budget_src);
    checked_free(&c);
    expect_diags_for(budget_src, &(target){.sm = {80, 86, 90}, .narch = 3},
                     "t.pipe:4:3: error: the pipeline needs 128000 bytes of shared memory per "
                     "block (4 slot(s) of every staged region) but sm_86 has 101376\n"
                     "  stages 4;\n  ^\n", 1);
}
END_TEST

START_TEST(budget_rounds_each_region)
{
    /* Each region is rounded up to 128 bytes (41000 -> 41088): two regions in 2 slots take
     * 164352 bytes, under the 166912 of sm_80; in 3 slots 246528, over. */
    checked c;
    expect_ok(&c, "pipeline b {\n  in uint8 x[n];\n  in uint8 y[n];\n  out uint8 z[n];\n"
                  "  grid persistent;\n  tile z[41000];\n  stage x, y;\n"
                  "  compute elementwise (i) { z[i] = x[i] + y[i]; }\n}\n");
    checked_free(&c);
    expect_diags("pipeline b {\n  in uint8 x[n];\n  in uint8 y[n];\n  out uint8 z[n];\n"
                 "  grid persistent;\n  stages 3;\n  tile z[41000];\n  stage x, y;\n"
                 "  compute elementwise (i) { z[i] = x[i] + y[i]; }\n}\n",
                 "t.pipe:6:3: error: the pipeline needs 246528 bytes of shared memory per "
                 "block (3 slot(s) of every staged region) but sm_80 has 166912\n"
                 "  stages 3;\n  ^\n", 1);
}
END_TEST

/* ------------------------------------------------------------------ diagnostics */

START_TEST(unknown_array)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  tile z[64];\n"
                 "  stage x, w;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:5:12: error: unknown array 'w'\n  stage x, w;\n           ^\n", 1);
}
END_TEST

START_TEST(duplicate_declaration_with_note)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  param int x;\n"
                 "  tile z[64];\n  compute elementwise (i) { z[i] = 0; }\n}\n",
                 "t.pipe:4:13: error: 'x' is already declared as an array\n"
                 "  param int x;\n            ^\n"
                 "t.pipe:2:12: note: declared here\n  in float x[n];\n           ^\n", 1);
}
END_TEST

START_TEST(duplicate_item_with_note)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  grid persistent;\n"
                 "  tile z[64];\n  grid per_tile;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:6:3: error: duplicate 'grid'\n  grid per_tile;\n  ^\n"
                 "t.pipe:4:3: note: first given here\n  grid persistent;\n  ^\n", 1);
}
END_TEST

START_TEST(rank_mismatch)
{
    expect_diags("pipeline p {\n  in float b[m][n];\n  out float z[n];\n  tile z[64];\n"
                 "  stage b;\n  compute elementwise (i) { z[i] = 0; }\n}\n",
                 "t.pipe:5:9: error: 'b' has rank 2 but the tile has rank 1: give its region "
                 "explicitly\n  stage b;\n        ^\n", 1);
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[m][n];\n  tile z[64];\n"
                 "  compute elementwise (i) { }\n}\n",
                 "t.pipe:4:3: error: tile has rank 1 but 'z' has rank 2\n  tile z[64];\n  ^\n",
                 1);
    /* The region's dimensions against the array's, singular and plural. */
    expect_diags("pipeline p {\n  in float b[m][n];\n  out float z[n];\n  tile z[64] at (c);\n"
                 "  stage b[c : 64];\n  compute elementwise (i) { z[i] = 0; }\n}\n",
                 "t.pipe:5:10: error: the region of 'b' has 1 dimension but the array has 2\n"
                 "  stage b[c : 64];\n         ^\n", 1);
    expect_diags("pipeline p {\n  in float b[l][m][n];\n  out float z[n];\n  tile z[64] at (c);\n"
                 "  stage b[0 : 1][c : 64];\n  compute elementwise (i) { z[i] = 0; }\n}\n",
                 "t.pipe:5:10: error: the region of 'b' has 2 dimensions but the array has 3\n"
                 "  stage b[0 : 1][c : 64];\n         ^\n", 1);
}
END_TEST

START_TEST(non_affine_region)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  tile z[64] at (c);\n"
                 "  steps k over n by 64;\n  stage x[k * c : 64];\n"
                 "  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:6:11: error: a region bound must be affine (no product of variables)\n"
                 "  stage x[k * c : 64];\n          ^\n", 1);
}
END_TEST

START_TEST(threads_rules)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 96;\n  threads 33;\n"
                 "  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:5:3: error: duplicate 'threads'\n  threads 33;\n  ^\n"
                 "t.pipe:4:3: note: first given here\n  threads 96;\n  ^\n", 1);
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 33;\n"
                 "  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:4:11: error: threads must be a multiple of 32 (a warp)\n"
                 "  threads 33;\n          ^\n", 1);
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 16;\n"
                 "  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:4:11: error: 'threads' must be between 32 and 1024\n"
                 "  threads 16;\n          ^\n", 1);
    checked c;
    expect_ok(&c, "pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 1024;\n"
                  "  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n");
    ck_assert_int_eq(c.s.threads, 1024);
    checked_free(&c);
}
END_TEST

START_TEST(stages_range)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  stages 0;\n"
                 "  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:4:10: error: 'stages' must be between 1 and 16\n"
                 "  stages 0;\n         ^\n", 1);
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  stages 17;\n"
                 "  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:4:10: error: 'stages' must be between 1 and 16\n"
                 "  stages 17;\n         ^\n", 1);
}
END_TEST

START_TEST(producer_warps_leave_consumers)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 64;\n"
                 "  producer_warps 2;\n  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:5:18: error: 2 producer warps leave no consumer warp in a block of 64 "
                 "threads\n  producer_warps 2;\n                 ^\n", 1);
    checked c;
    expect_ok(&c, "pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 64;\n"
                  "  producer_warps 1;\n  tile z[64];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n");
    ck_assert_int_eq(c.s.producer_warps, 1);
    checked_free(&c);
}
END_TEST

START_TEST(unknown_mechanism)
{
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  tile z[64];\n"
                 "  stage x using tma;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:5:17: error: unknown lowering 'tma' (pipegen --list-lowerings lists "
                 "them)\n  stage x using tma;\n                ^\n", 1);
    /* Once for a statement of several names, with the closest name. */
    expect_diags("pipeline p {\n  in float x[n];\n  in float y[n];\n  out float z[n];\n"
                 "  tile z[64];\n  stage x, y using cp_async;\n"
                 "  compute elementwise (i) { z[i] = x[i] + y[i]; }\n}\n",
                 "t.pipe:6:20: error: unknown lowering 'cp_async'; did you mean 'cp.async'?\n"
                 "  stage x, y using cp_async;\n                   ^\n", 1);
}
END_TEST

static const char *const one_stage = "pipeline p {\n  in float x[n];\n  out float z[n];\n"
    "  tile z[64];\n  stage x%s;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n";

static void expect_lowering_diags(const char *opts, const target *t, const char *want)
{
    char src[512];
    snprintf(src, sizeof src, one_stage, opts);
    expect_diags_for(src, t, want, 1);
}

START_TEST(lowering_not_implemented)
{
    /* Named by the spec: at its `using`; by --lower: the option. */
    static const mech missing[] = {MECH_BULK, MECH_TENSOR};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; ++i) {
        if (mech_implemented(missing[i]))
            continue;   /* landed since: its own tests cover it */
        char opts[64], want[512], opt[64];
        const char *name = mech_name(missing[i]);
        snprintf(opts, sizeof opts, " using %s", name);
        snprintf(want, sizeof want, "t.pipe:5:9: error: lowering '%s' is not implemented yet "
                 "(pipegen --list-lowerings)\n  stage x using %s;\n        ^\n", name, name);
        expect_lowering_diags(opts, &both, want);
        snprintf(opt, sizeof opt, "--lower=%s", name);
        snprintf(want, sizeof want, "pipegen: error: --lower=%s: lowering '%s' is not "
                 "implemented yet (pipegen --list-lowerings)\n", name, name);
        expect_lowering_diags("", &(target){.sm = {80, 90}, .narch = 2,
                                            .lower = {opt, (int)missing[i]}}, want);
    }
}
END_TEST

START_TEST(lowering_too_new)
{
    expect_lowering_diags(" using cp.async", &(target){.sm = {75}, .narch = 1},
                          "t.pipe:5:9: error: the cp.async lowering needs sm_80 or newer, but "
                          "sm_75 is a target\n  stage x using cp.async;\n        ^\n");
}
END_TEST

START_TEST(lowering_without_roles)
{
    char src[512];
    snprintf(src, sizeof src, one_stage, " using cp.async");
    expect_diags_for(src, &(target){.sm = {80}, .narch = 1,
                                    .producer_warps = {"--producer-warps=2", 2}},
                     "pipegen: error: --producer-warps=2: producer warps are planned by "
                     "pipeline-roles, cp.async.mbarrier, bulk and tensor, not by the cp.async lowering\n", 1);
    expect_lowering_diags("", &(target){.sm = {80}, .narch = 1,
                                        .lower = {"--lower=sync", MECH_SYNC},
                                        .producer_warps = {"--producer-warps=2", 2}},
                          "pipegen: error: --lower=sync: producer warps are planned by "
                          "pipeline-roles, cp.async.mbarrier, bulk and tensor, not by the sync lowering\n");
    /* auto picks a lowering with roles. */
    checked c;
    snprintf(src, sizeof src, one_stage, "");
    check_for(&c, src, &(target){.sm = {80, 90}, .narch = 2,
                                 .producer_warps = {"--producer-warps=2", 2}});
    ck_assert_str_eq(c.diags, "");
    ck_assert(c.ok);
    checked_free(&c);
}
END_TEST

START_TEST(producer_warps_override)
{
    char src[512];
    snprintf(src, sizeof src, one_stage, "");
    expect_diags_for(src, &(target){.sm = {80}, .narch = 1,
                                    .producer_warps = {"--producer-warps=8", 8}},
                     "pipegen: error: --producer-warps=8: 8 producer warps leave no consumer "
                     "warp in a block of 256 threads\n", 1);
}
END_TEST

START_TEST(warning_stages_one_slot)
{
    /* The default grid makes `stages` moot: a warning at its value. */
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  stages 3;\n"
                 "  tile z[64];\n  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:4:10: warning: 'stages 3' plans one slot: under the default grid "
                 "(per_tile) with no 'steps' or 'march' a block runs one step; write 'grid "
                 "persistent' for a ring of 3, or 'grid per_tile' for one slot [-Wstages]\n"
                 "  stages 3;\n         ^\n", 0);
    /* A grid written in the spec or on the command line says what is meant. */
    const char *src = "pipeline p {\n  in float x[n];\n  out float z[n];\n  stages 3;\n"
                      "  tile z[64];\n  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n";
    checked c;
    check_for(&c, src, &(target){.sm = {80}, .narch = 1, .grid = {"--grid=per_tile", 0}});
    ck_assert_str_eq(c.diags, "");
    checked_free(&c);
    check_for(&c, src, &(target){.sm = {80}, .narch = 1,
                                 .grid = {"--grid=persistent", GRID_PERSISTENT}});
    ck_assert_str_eq(c.diags, "");
    ck_assert_int_eq(spec_ring_slots(&c.s), 3);
    checked_free(&c);
}
END_TEST

START_TEST(warning_hints_ignored)
{
    /* Once per statement and option, for a lowering that ignores the option: sync takes no
     * hint, barrier only evict, cp.async all. */
    const char *fmt = "pipeline p {\n  in float x[n];\n  in float y[n];\n  out float z[n];\n"
                      "  tile z[64];\n  stage x, y cache ca prefetch 64 evict first using %s;\n"
                      "  compute elementwise (i) { z[i] = x[i] + y[i]; }\n}\n";
    char src[512];
    snprintf(src, sizeof src, fmt, "barrier");
    expect_diags(src,
                 "t.pipe:6:20: warning: the barrier lowering ignores 'cache' (docs/lowerings.md "
                 "lists the hints each lowering takes) [-Whints]\n"
                 "  stage x, y cache ca prefetch 64 evict first using barrier;\n"
                 "                   ^\n"
                 "t.pipe:6:32: warning: the barrier lowering ignores 'prefetch' (docs/lowerings.md "
                 "lists the hints each lowering takes) [-Whints]\n"
                 "  stage x, y cache ca prefetch 64 evict first using barrier;\n"
                 "                               ^\n", 0);
    snprintf(src, sizeof src, fmt, "cp.async");
    checked c;
    expect_ok(&c, src);
    checked_free(&c);
    ck_assert_uint_eq(mech_hints(MECH_SYNC), 0);
    ck_assert_uint_eq(mech_hints(MECH_AUTO), 0);
    ck_assert_uint_eq(mech_hints(MECH_PIPELINE), 1u << HINT_EVICT);
}
END_TEST

START_TEST(accumulator_into_in_array)
{
    expect_diags("pipeline p {\n  in float x[n];\n  in float s[1];\n  tile x[64];\n"
                 "  accum float acc combine sum into s;\n  compute elementwise (i) { acc += x[i]; }\n}\n",
                 "t.pipe:5:36: error: an accumulator combines into an 'out' array of rank 1\n"
                 "  accum float acc combine sum into s;\n                                   ^\n",
                 1);
}
END_TEST

START_TEST(missing_tile_and_compute)
{
    expect_diags("pipeline lonely {\n  in float x[n];\n}\n",
                 "t.pipe:1:10: error: pipeline 'lonely' has no 'tile' (the work item)\n"
                 "pipeline lonely {\n         ^\n", 1);
    expect_diags("pipeline p {\n  in float x[n];\n  tile x[64];\n}\n",
                 "t.pipe:1:10: error: pipeline 'p' has no compute body\n"
                 "pipeline p {\n         ^\n", 1);
    /* Staged arrays without a tile: the missing tile alone, not their regions' ranks or
     * origins (the tile's coordinates); a tile in error likewise. */
    expect_diags("pipeline p {\n  in float x[n];\n  in float b[m][n];\n  out float z[n];\n"
                 "  stage x;\n  stage b[r : 4][c : 16];\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:1:10: error: pipeline 'p' has no 'tile' (the work item)\n"
                 "pipeline p {\n         ^\n", 1);
    expect_diags("pipeline p {\n  in float x[n];\n  out float z[n];\n  tile w[64];\n  stage x;\n"
                 "  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 "t.pipe:4:8: error: unknown array 'w'\n  tile w[64];\n       ^\n", 1);
}
END_TEST

START_TEST(several_errors_in_one_run)
{
    checked c;
    check(&c, "pipeline p {\n  in float x[n];\n  out float z[n];\n  threads 40;\n  stages 99;\n"
              "  tile z[64];\n  stage q;\n  stage r;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n");
    ck_assert(!c.ok);
    ck_assert_int_eq(c.errors, 4);
    ck_assert_ptr_nonnull(strstr(c.diags, "t.pipe:4:11: error: threads must be a multiple"));
    ck_assert_ptr_nonnull(strstr(c.diags, "t.pipe:5:10: error: 'stages' must be between"));
    ck_assert_ptr_nonnull(strstr(c.diags, "t.pipe:7:9: error: unknown array 'q'"));
    ck_assert_ptr_nonnull(strstr(c.diags, "t.pipe:8:9: error: unknown array 'r'"));
    checked_free(&c);
}
END_TEST

START_TEST(null_ast_is_rejected)
{
    checked c;
    h_start(&c, "t.pipe", "");
    spec s;
    ck_assert(!sema_check(c.a, &c.d, NULL, &both, &s));
    ast_file empty = {NULL};
    ck_assert(!sema_check(c.a, &c.d, &empty, &both, &s));
    h_end(&c);
    ck_assert_str_eq(c.diags, "");
    checked_free(&c);
}
END_TEST

START_TEST(errors_counted_from_entry)
{
    /* sema's result depends on its own errors, not on errors already counted. */
    const char *src = "pipeline p {\n  in float x[n];\n  out float z[n];\n  tile z[64];\n"
                      "  compute elementwise (i) { z[i] = x[i]; }\n}\n";
    checked c;
    h_start(&c, "t.pipe", src);
    h_parse(&c);
    c.d.errors = 3;
    ck_assert(h_check(&c, &both));
    ck_assert_int_eq(c.d.errors, 3);
    checked_free(&c);
}
END_TEST

static Suite *sema_suite(void)
{
    Suite *s = suite_create("sema");
    TCase *sp = tcase_create("spec");
    tcase_add_test(sp, saxpy_declarations);
    tcase_add_test(sp, saxpy_schedule_items);
    tcase_add_test(sp, saxpy_stages_and_bodies);
    tcase_add_test(sp, defaults);
    tcase_add_test(sp, declarations_after_use);
    tcase_add_test(sp, sizes_in_order_of_first_appearance);
    tcase_add_test(sp, element_sizes);
    tcase_add_test(sp, accumulators);
    suite_add_tcase(s, sp);
    TCase *rg = tcase_create("regions");
    tcase_add_test(rg, regions_are_affine_forms);
    tcase_add_test(rg, region_terms_fold);
    tcase_add_test(rg, halo_widens_the_region);
    tcase_add_test(rg, stage_options);
    tcase_add_test(rg, same_mechanism_twice_is_fine);
    suite_add_tcase(s, rg);
    TCase *rb = tcase_create("ring and budget");
    tcase_add_test(rb, ring_slots);
    tcase_add_test(rb, smem_limits);
    tcase_add_test(rb, arch_table_features);
    tcase_add_test(rb, budget_per_architecture);
    tcase_add_test(rb, budget_rounds_each_region);
    suite_add_tcase(s, rb);
    TCase *dg = tcase_create("diagnostics");
    tcase_add_test(dg, unknown_array);
    tcase_add_test(dg, duplicate_declaration_with_note);
    tcase_add_test(dg, duplicate_item_with_note);
    tcase_add_test(dg, rank_mismatch);
    tcase_add_test(dg, non_affine_region);
    tcase_add_test(dg, threads_rules);
    tcase_add_test(dg, stages_range);
    tcase_add_test(dg, producer_warps_leave_consumers);
    tcase_add_test(dg, unknown_mechanism);
    tcase_add_test(dg, lowering_not_implemented);
    tcase_add_test(dg, lowering_too_new);
    tcase_add_test(dg, lowering_without_roles);
    tcase_add_test(dg, producer_warps_override);
    tcase_add_test(dg, warning_stages_one_slot);
    tcase_add_test(dg, warning_hints_ignored);
    tcase_add_test(dg, accumulator_into_in_array);
    tcase_add_test(dg, missing_tile_and_compute);
    tcase_add_test(dg, several_errors_in_one_run);
    tcase_add_test(dg, null_ast_is_rejected);
    tcase_add_test(dg, errors_counted_from_entry);
    suite_add_tcase(s, dg);
    return s;
}

int main(void) { return run_suite(sema_suite()); }
