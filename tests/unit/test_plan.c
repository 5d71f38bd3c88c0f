/* Unit tests of plan.c and the mechanism planners (mech/sync.c, mech/cp_async.c,
 * mech/cp_async_mbarrier.c, mech/bulk.c): the IR of each schedule (sections, operation
 * kinds, step offsets, guards, wait counts, expected bytes) for stages 1..5 and both
 * grids, the ring size, the shared-memory layout, the copy width of each stage (plan_vec
 * through sched.copy[i].vec), auto resolution, the IR's text form, and the exact
 * diagnostics for what the planner does not lower. */
#include "mech/mech.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* One planned spec (the harness): the spec, the schedule, the diagnostics printed. */
typedef harness planned;

static const target both = {.sm = {80, 90}, .narch = 2};

/* Parse and check src (it must be valid), then plan it for m on sm. */
static void plan_src(planned *p, const char *src, mech m, int sm)
{
    h_start(p, "t.pipe", src);
    bool ok = h_check(p, &both);
    ck_assert_msg(ok, "the test's source does not check: %s", h_diags(p));
    h_plan(p, m, sm);
    h_end(p);
}

static void planned_free(planned *p) { h_free(p); }

static void expect_dump(const sched *sc, const char *want)
{
    char *got = ir_text(sc);
    ck_assert_str_eq(got, want);
    free(got);
}

/* A rank-1 spec: one staged `in` array per entry of types (x0, x1, ...), tile of `tile`
 * elements, extra items (stages, grid, ...). */
static const char *spec_src(char *buf, size_t n, const char *type, int narr, long tile,
                            const char *items)
{
    int k = snprintf(buf, n, "pipeline t {\n");
    for (int i = 0; i < narr; ++i)
        k += snprintf(buf + k, n - k, "  in %s x%d[n];\n", type, i);
    k += snprintf(buf + k, n - k, "  out %s z[n];\n  %s\n  tile z[%ld];\n  stage x0", type,
                  items, tile);
    for (int i = 1; i < narr; ++i)
        k += snprintf(buf + k, n - k, ", x%d", i);
    snprintf(buf + k, n - k, ";\n  compute elementwise (i) { z[i] = x0[i]; }\n}\n");
    return buf;
}

static void plan_simple(planned *p, const char *type, int narr, long tile, const char *items,
                        mech m, int sm)
{
    char src[1024];
    plan_src(p, spec_src(src, sizeof src, type, narr, tile, items), m, sm);
    ck_assert_msg(p->sc != NULL, "planning failed: %s", p->diags);
    ck_assert_str_eq(p->diags, "");
}

static void expect_op(const ir_op *op, ir_op_kind kind, int step_off, bool guarded)
{
    ck_assert_msg(op->kind == kind, "op %s, expected %s", ir_op_name(op->kind),
                  ir_op_name(kind));
    ck_assert_int_eq(op->step_off, step_off);
    ck_assert_int_eq(op->guarded, guarded);
    ck_assert_int_eq(op->role, ROLE_ALL);
}

/* ------------------------------------------------------------------ packed rows */

/* rmsnorm's shape: rows of up to BOUND under tile x[1][cols <= BOUND], g staged whole;
 * extra items and the compute's body vary. */
static const char *rows_src(char *buf, size_t n, int bound, const char *items,
                            const char *body)
{
    snprintf(buf, n, "pipeline t {\n  in float x[rows][cols];\n  in float g[cols];\n"
                     "  out float y[rows][cols];\n  threads 256;\n  %s\n"
                     "  tile x[1][cols <= %d] at (r0, c0);\n  stage g[0 : %d];\n"
                     "  reduce float ss combine sum (r, c) { x[r][c] * x[r][c] }\n"
                     "  compute elementwise (r, c) { %s }\n}\n",
             items, bound, bound, body);
    return buf;
}

static int packs_of(const char *items, int bound, const char *body, long long packs[])
{
    char src[1024];
    planned p;
    h_start(&p, "t.pipe", rows_src(src, sizeof src, bound, items, body));
    ck_assert_msg(h_check(&p, &both), "the test's source does not check: %s", h_diags(&p));
    h_end(&p);
    const int n = spec_row_packs(&p.s, packs);
    planned_free(&p);
    return n;
}

static const char *scaled = "y[r][c] = x[r][c] * rsqrtf(ss / cols) * g[c];";

START_TEST(row_packs_where_nothing_sees_the_item)
{
    long long packs[SPEC_MAX_PACKS];
    ck_assert_int_eq(packs_of("stage x;", 8192, scaled, packs), 4);
    ck_assert(packs[0] == 1 && packs[1] == 2 && packs[2] == 4 && packs[3] == 8);
    /* rows of at least 256 elements: 512 packs once */
    ck_assert_int_eq(packs_of("stage x;", 512, scaled, packs), 2);
    /* a region that follows the tile, written out */
    ck_assert_int_eq(packs_of("stage x[r0 : 1][c0 : 8192];", 8192, scaled, packs), 4);
}
END_TEST

START_TEST(row_packs_refused)
{
    long long packs[SPEC_MAX_PACKS];
    /* the body names the tile's origin */
    ck_assert_int_eq(packs_of("stage x;", 8192, "y[r][c] = x[r][c] + r0;", packs), 1);
    /* a region narrower than the tile, and one that moves with it but is not it */
    ck_assert_int_eq(packs_of("stage x[r0 : 1][c0 : 4096];", 8192, scaled, packs), 1);
    /* march mode */
    ck_assert_int_eq(packs_of("stage x; grid persistent; march 2;", 8192, scaled, packs), 1);
}
END_TEST

START_TEST(packed_spec_scales_what_follows_the_tile)
{
    char src[1024];
    planned p;
    h_start(&p, "t.pipe", rows_src(src, sizeof src, 8192, "stage x;", scaled));
    ck_assert(h_check(&p, &both));
    h_end(&p);
    const spec *k = spec_packed(p.a, &p.s, 8);
    ck_assert_int_eq(k->tile[0], 8);
    ck_assert_int_eq(k->tile[1], 1024);
    for (int i = 0; i < k->nstaged; ++i) {
        const spec_stage *st = &k->stages[i];
        const bool is_x = strcmp(k->arrays[st->array].name, "x") == 0;
        ck_assert_int_eq(st->extent[0], is_x ? 8 : 8192);
        if (is_x)
            ck_assert_int_eq(st->extent[1], 1024);
        ck_assert_int_eq(st->bytes, 4 * 8192);
    }
    ck_assert_int_eq(p.s.tile[1], 8192);   /* the written spec stays */
    /* 256 threads at 40 registers each: six blocks an SM, whatever the pack */
    ck_assert_int_eq(k->blocks_per_sm, 6);
    ck_assert_int_eq(spec_packed(p.a, &p.s, 2)->blocks_per_sm, 6);
    ck_assert_int_eq(p.s.blocks_per_sm, 0);
    planned_free(&p);
}
END_TEST

START_TEST(packed_spec_keeps_written_occupancy)
{
    char src[1024];
    planned p;
    h_start(&p, "t.pipe", rows_src(src, sizeof src, 8192, "stage x; blocks_per_sm 1;", scaled));
    ck_assert_msg(h_check(&p, &both), "the test's source does not check: %s", h_diags(&p));
    h_end(&p);
    ck_assert_int_eq(spec_packed(p.a, &p.s, 4)->blocks_per_sm, 1);
    planned_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ sync */

START_TEST(sync_schedule)
{
    /* The same one-slot schedule for every `stages` and both grids. */
    static const char *items[] = {
        "stages 1;", "stages 2; grid per_tile;", "stages 3; grid per_tile;",
        "stages 4; grid per_tile;", "stages 5; grid per_tile;", "stages 1; grid persistent;",
        "stages 3; grid persistent;", "stages 5; grid persistent;",
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i) {
        planned p;
        plan_simple(&p, "float", 2, 2048, items[i], MECH_SYNC, 80);
        const sched *sc = p.sc;
        ck_assert_int_eq(sc->mech, MECH_SYNC);
        ck_assert_int_eq(sc->sm, 80);
        ck_assert_int_eq(sc->nslots, 1);
        ck_assert_int_eq(sc->track, TRACK_SYNC);
        ck_assert_int_eq(sc->threads, 256);
        ck_assert_int_eq(sc->grid, strstr(items[i], "persistent") ? GRID_PERSISTENT
                                                                  : GRID_PER_TILE);
        ck_assert_int_eq(sc->smem_bytes, 16384);
        for (int k = 0; k < 2; ++k) {
            ck_assert_int_eq(sc->copy[k].off, 8192 * k);
            ck_assert_int_eq(sc->copy[k].slot_bytes, 8192);
            ck_assert_int_eq(sc->copy[k].nslots, 1);
            ck_assert_int_eq(sc->copy[k].row_bytes, 8192);
            ck_assert_int_eq(sc->copy[k].vec, 16);
        }
        /* A persistent grid claims its work items: step 0 first (and a barrier), then
         * step t+1 before the loop's first barrier. */
        const int c = sc->grid == GRID_PERSISTENT;
        ck_assert_int_eq(sc->nsecs, 1 + 2 * c);
        ck_assert_int_eq(sc->claim_ring, 3 * c);
        const ir_section *loop = &sc->secs[2 * c];
        ck_assert_int_eq(loop->kind, SEC_LOOP);
        ck_assert_int_eq(loop->nops, 4 + c);
        expect_op(&loop->ops[0], OP_COPY, 0, false);   /* t < trips: no guard */
        ck_assert_int_eq(loop->ops[0].stage, -1);
        if (c)
            expect_op(&loop->ops[1], OP_CLAIM, 1, false);
        expect_op(&loop->ops[1 + c], OP_BARRIER, 0, false);
        expect_op(&loop->ops[2 + c], OP_COMPUTE, 0, false);
        expect_op(&loop->ops[3 + c], OP_BARRIER, 0, false);
        planned_free(&p);
    }
}
END_TEST

START_TEST(sync_dump)
{
    planned p;
    plan_simple(&p, "float", 1, 1000, "threads 128; grid persistent;", MECH_SYNC, 90);
    expect_dump(p.sc, "schedule t mech=sync sm_90 slots=1 smem=4096 threads=128 grid=persistent claim_ring=3\n"
                      "prologue p in [0,1):\n"
                      "  claim step=p\n"
                      "prologue p in [0,1):\n"
                      "  barrier\n"
                      "loop t in [0,trips):\n"
                      "  copy step=t\n"
                      "  claim step=t+1\n"
                      "  barrier\n"
                      "  compute step=t\n"
                      "  barrier\n");
    planned_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ cp.async */

START_TEST(cp_async_ring_schedules)
{
    /* Persistent grid: S slots; S-1 copies in flight before the loop, wait S-2 in it. */
    for (int S = 2; S <= 5; ++S) {
        char items[64];
        snprintf(items, sizeof items, "stages %d; grid persistent;", S);
        planned p;
        plan_simple(&p, "float", 2, 2048, items, MECH_CP_ASYNC, 80);
        const sched *sc = p.sc;
        ck_assert_int_eq(sc->nslots, S);
        ck_assert_int_eq(sc->track, TRACK_GROUPS);
        ck_assert_int_eq(sc->smem_bytes, 16384LL * S);
        ck_assert_int_eq(sc->copy[0].off, 0);
        ck_assert_int_eq(sc->copy[1].off, 8192LL * S);
        ck_assert_int_eq(sc->copy[1].slot_bytes, 8192);
        ck_assert_int_eq(sc->copy[1].nslots, S);
        /* The claims of steps 0..S-1 and their barrier come first; the loop claims t+S
         * before its barrier. */
        ck_assert_int_eq(sc->nsecs, 4);
        ck_assert_int_eq(sc->claim_ring, S + 2);
        ck_assert_int_eq(sc->secs[0].count, S);
        expect_op(&sc->secs[0].ops[0], OP_CLAIM, 0, false);
        expect_op(&sc->secs[1].ops[0], OP_BARRIER, 0, false);
        const ir_section *pro = &sc->secs[2], *loop = &sc->secs[3];
        ck_assert_int_eq(pro->kind, SEC_PROLOGUE);
        ck_assert_int_eq(pro->count, S - 1);
        ck_assert_int_eq(pro->nops, 2);
        expect_op(&pro->ops[0], OP_COPY, 0, true);
        expect_op(&pro->ops[1], OP_COMMIT, 0, false);
        ck_assert_int_eq(loop->kind, SEC_LOOP);
        ck_assert_int_eq(loop->nops, 6);
        expect_op(&loop->ops[0], OP_WAIT, 0, false);
        ck_assert_int_eq(loop->ops[0].n, S - 2);
        expect_op(&loop->ops[1], OP_CLAIM, S, false);
        expect_op(&loop->ops[2], OP_BARRIER, 0, false);
        expect_op(&loop->ops[3], OP_COPY, S - 1, true);
        expect_op(&loop->ops[4], OP_COMMIT, S - 1, false);
        expect_op(&loop->ops[5], OP_COMPUTE, 0, false);
        planned_free(&p);
    }
}
END_TEST

START_TEST(cp_async_one_slot)
{
    /* One slot: stages 1 with a persistent grid, and any `stages` with one block per tile. */
    static const char *items[] = {
        "stages 1; grid persistent;", "stages 1;", "stages 2; grid per_tile;",
        "stages 3; grid per_tile;", "stages 4; grid per_tile;", "stages 5; grid per_tile;",
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i) {
        planned p;
        plan_simple(&p, "float", 1, 2048, items[i], MECH_CP_ASYNC, 90);
        const sched *sc = p.sc;
        ck_assert_int_eq(sc->nslots, 1);
        ck_assert_int_eq(sc->smem_bytes, 8192);
        const int c = sc->grid == GRID_PERSISTENT;   /* claims, as in sync_schedule */
        ck_assert_int_eq(sc->nsecs, 1 + 2 * c);
        const ir_section *loop = &sc->secs[2 * c];
        ck_assert_int_eq(loop->kind, SEC_LOOP);
        ck_assert_int_eq(loop->nops, 6 + c);
        expect_op(&loop->ops[0], OP_COPY, 0, false);   /* t < trips: no guard */
        expect_op(&loop->ops[1], OP_COMMIT, 0, false);
        expect_op(&loop->ops[2], OP_WAIT, 0, false);
        ck_assert_int_eq(loop->ops[2].n, 0);
        if (c)
            expect_op(&loop->ops[3], OP_CLAIM, 1, false);
        expect_op(&loop->ops[3 + c], OP_BARRIER, 0, false);
        expect_op(&loop->ops[4 + c], OP_COMPUTE, 0, false);
        expect_op(&loop->ops[5 + c], OP_BARRIER, 0, false);
        planned_free(&p);
    }
}
END_TEST

START_TEST(cp_async_dump)
{
    planned p;
    plan_simple(&p, "float", 2, 2048, "stages 3; grid persistent;", MECH_CP_ASYNC, 80);
    expect_dump(p.sc,
                "schedule t mech=cp.async sm_80 slots=3 smem=49152 threads=256 grid=persistent claim_ring=5\n"
                "prologue p in [0,3):\n"
                "  claim step=p\n"
                "prologue p in [0,1):\n"
                "  barrier\n"
                "prologue p in [0,2):\n"
                "  copy step=p if<trips\n"
                "  commit step=p\n"
                "loop t in [0,trips):\n"
                "  wait 1\n"
                "  claim step=t+3\n"
                "  barrier\n"
                "  copy step=t+2 if<trips\n"
                "  commit step=t+2\n"
                "  compute step=t\n");
    planned_free(&p);
}
END_TEST

START_TEST(layout_rounds_to_128)
{
    /* 100 floats = 400 bytes, each slot of each stage rounded to 512. */
    planned p;
    plan_simple(&p, "float", 3, 100, "stages 3; grid persistent;", MECH_CP_ASYNC, 80);
    for (int k = 0; k < 3; ++k) {
        ck_assert_int_eq(p.sc->copy[k].off, 1536 * k);
        ck_assert_int_eq(p.sc->copy[k].slot_bytes, 512);
        ck_assert_int_eq(p.sc->copy[k].nslots, 3);
        ck_assert_int_eq(p.sc->copy[k].row_bytes, 400);
        ck_assert_int_eq(p.sc->copy[k].pitch, 400);
    }
    ck_assert_int_eq(p.sc->smem_bytes, 4608);
    planned_free(&p);
}
END_TEST

START_TEST(auto_resolution)
{
    planned p;
    plan_simple(&p, "float", 1, 256, "grid persistent;", MECH_AUTO, 80);
    ck_assert_int_eq(p.sc->mech, MECH_CP_ASYNC);
    planned_free(&p);
    /* plan_schedule resolves auto as the command line does: producer warps need
     * cp.async.mbarrier. */
    plan_simple(&p, "float", 1, 256, "threads 160; grid persistent; producer_warps 1;",
                MECH_AUTO, 90);
    ck_assert_ptr_nonnull(p.sc);
    ck_assert_int_eq(p.sc->mech, MECH_CP_ASYNC_MBARRIER);
    planned_free(&p);
}
END_TEST

START_TEST(auto_one_row_reductions_by_their_fold)
{
    /* A row reduction over a tile of one row goes to tensor on sm_90 where tensor copies
     * the row in one folded box (a literal row wider than a box), else to cp.async. */
    static const struct { const char *cols; mech want; } cases[] = {
        {"8192", MECH_TENSOR}, {"1024", MECH_TENSOR}, {"cols", MECH_CP_ASYNC},
        {"200", MECH_CP_ASYNC}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char src[512];
        const char *n = cases[i].cols;
        snprintf(src, sizeof src,
                 "pipeline s {\n  in float x[rows][%s];\n  out float y[rows][%s];\n"
                 "  grid per_tile;\n  tile x[1][%s] at (r0, c0);\n  stage x;\n"
                 "  reduce float m combine max (r, c) { x[r][c] }\n"
                 "  compute elementwise (r, c) { y[r][c] = x[r][c] - m; }\n}\n",
                 n, n, strcmp(n, "cols") ? n : "cols <= 4096");
        planned p;
        plan_src(&p, src, MECH_AUTO, 90);
        ck_assert_msg(p.sc != NULL, "case %zu: %s", i, p.diags);
        ck_assert_msg(p.sc->mech == cases[i].want, "case %zu: %s", i, mech_name(p.sc->mech));
        planned_free(&p);
    }
}
END_TEST

START_TEST(auto_leaves_tensor_where_maps_cannot_copy)
{
    /* auto's rules would take tensor for these (an elementwise tile of rank 2, a tile of
     * several rows reduced), but a map's elements are at most 8 bytes and its boxes land
     * rows back to back: float4 and a padded stage go to cp.async. Tried as tensor,
     * float4's boxes delivered half the bytes the barrier expected, and the padded
     * rows' 8-row box failed pipert's static_assert under nvcc. */
    static const char *const specs[] = {
        "pipeline v {\n  in float4 a[m][n];\n  out float4 b[m][n];\n"
        "  tile b[4][64] at (r0, c0);\n  stage a;\n"
        "  compute elementwise (r, c) { b[r][c] = a[r][c]; }\n}\n",
        "pipeline p {\n  in float x[rows][256];\n  out float y[rows];\n  grid per_tile;\n"
        "  tile x[8][256] at (r0, c0);\n  stage x pad 16;\n"
        "  reduce float m combine max (r, c) { x[r][c] }\n"
        "  compute elementwise (r, c) { if (c == 0) y[r] = m; }\n}\n",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        planned p;
        plan_src(&p, specs[i], MECH_AUTO, 90);
        ck_assert_msg(p.sc != NULL, "spec %zu: %s", i, p.diags);
        ck_assert_msg(p.sc->mech == MECH_CP_ASYNC, "spec %zu: %s", i, mech_name(p.sc->mech));
        planned_free(&p);
    }
}
END_TEST

START_TEST(auto_with_producer_warps)
{
    /* cp.async plans no producer warps: auto picks cp.async.mbarrier, which does. */
    planned p;
    plan_simple(&p, "float", 1, 256, "grid persistent;", MECH_AUTO, 80);
    ck_assert_int_eq(mech_auto(&p.s, 80), MECH_CP_ASYNC);
    ck_assert_int_eq(mech_auto(&p.s, 90), MECH_CP_ASYNC);
    ck_assert_int_eq(mech_auto(&p.s, 75), MECH_SYNC);
    planned_free(&p);
    plan_simple(&p, "float", 1, 256, "threads 160; grid persistent; producer_warps 1;",
                MECH_CP_ASYNC_MBARRIER, 80);
    ck_assert_int_eq(mech_auto(&p.s, 80), MECH_CP_ASYNC_MBARRIER);
    ck_assert_int_eq(mech_auto(&p.s, 90), MECH_CP_ASYNC_MBARRIER);
    ck_assert(mech_module_of(mech_auto(&p.s, 90))->roles);
    planned_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ copy widths */

static int vec_of(const char *type, long tile, mech m)
{
    planned p;
    plan_simple(&p, type, 1, tile, "grid persistent;", m, 80);
    int v = p.sc->copy[0].vec;
    planned_free(&p);
    return v;
}

START_TEST(copy_widths)
{
    static const struct { const char *type; long tile; int vec; } cases[] = {
        {"float", 2048, 16}, {"float", 4096, 16}, {"float", 7, 4}, {"float", 6, 8},
        {"float", 1, 4},     {"float", 4, 16},    {"double", 7, 8}, {"double", 1, 8},
        {"double", 2, 16},   {"double", 3, 8},    {"int", 6, 8},    {"int", 12, 16},
        {"half", 8, 16},     {"half", 4, 8},      {"half", 2, 4},   {"half", 3, 2},
        {"bfloat16", 5, 2},  {"bfloat16", 24, 16}, {"uint8", 5, 1}, {"uint8", 6, 2},
        {"uint8", 12, 4},    {"uint8", 16, 16},   {"uint8", 40, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        for (int m = 0; m < 2; ++m) {
            int got = vec_of(cases[i].type, cases[i].tile, m ? MECH_CP_ASYNC : MECH_SYNC);
            ck_assert_msg(got == cases[i].vec, "%s tile %ld: vec %d, expected %d",
                          cases[i].type, cases[i].tile, got, cases[i].vec);
        }
    }
}
END_TEST

START_TEST(copy_width_per_stage)
{
    planned p;
    plan_src(&p, "pipeline w {\n  in float a[n];\n  in double b[n];\n  in uint8 c[n];\n"
                 "  out float z[n];\n  grid persistent;\n  tile z[10];\n  stage a, b, c;\n"
                 "  compute elementwise (i) { z[i] = a[i] + b[i] + c[i]; }\n}\n",
             MECH_CP_ASYNC, 80);
    ck_assert_ptr_nonnull(p.sc);
    ck_assert_int_eq(p.sc->copy[0].vec, 8);     /* 40 bytes */
    ck_assert_int_eq(p.sc->copy[1].vec, 16);    /* 80 bytes */
    ck_assert_int_eq(p.sc->copy[2].vec, 2);     /* 10 bytes */
    ck_assert_int_eq(p.sc->copy[1].off, 256);   /* 40 -> 128, times 2 slots */
    ck_assert_int_eq(p.sc->copy[2].off, 512);
    ck_assert_int_eq(p.sc->smem_bytes, 768);
    planned_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ regions, rank 2, outputs */

START_TEST(rank2_rows_padded)
{
    /* 32 floats = 128-byte rows: 16 bytes of padding spread a column over the banks and
     * keep 16-byte copies; `pad N` replaces it. */
    static const struct { const char *opt; long long pitch; int vec; long long slot; } cases[] = {
        {"", 144, 16, 2304},          /* 16 rows of 144 bytes = 2304, a multiple of 128 */
        {" pad 0", 128, 16, 2048},
        {" pad 4", 132, 4, 2176},     /* 2112 rounded up to 128 */
        {" pad 8", 136, 8, 2176},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char src[512];
        snprintf(src, sizeof src, "pipeline r {\n  in float x[m][n];\n  out float z[m][n];\n"
                 "  grid persistent;\n  tile z[16][32];\n  stage x%s;\n"
                 "  compute elementwise (j, i) { z[j][i] = x[j][i]; }\n}\n", cases[i].opt);
        planned p;
        plan_src(&p, src, MECH_CP_ASYNC, 90);
        ck_assert_ptr_nonnull(p.sc);
        const copy_plan *cp = &p.sc->copy[0];
        ck_assert_msg(cp->pitch == cases[i].pitch, "'%s': pitch %lld", cases[i].opt, cp->pitch);
        ck_assert_int_eq(cp->row_bytes, 128);
        ck_assert_int_eq(cp->vec, cases[i].vec);
        ck_assert_int_eq(cp->slot_bytes, cases[i].slot);
        ck_assert_int_eq(cp->extent[0], 16);
        ck_assert_int_eq(cp->extent[1], 32);
        ck_assert_int_eq(p.sc->smem_bytes, 2 * cases[i].slot);
        planned_free(&p);
    }
}
END_TEST

START_TEST(input_regions_widened_to_16_bytes)
{
    /* An input region's fastest dimension moves down to a 16-byte boundary (its extent
     * grows to match) when its variable part keeps that alignment; the spec's region is
     * unchanged. */
    planned p;
    plan_src(&p, "pipeline w {\n  in float x[n];\n  in float h[n];\n  in float o[n];\n"
                 "  out float z[n];\n  grid persistent;\n  tile z[64] at (c);\n"
                 "  stage x[c + 1 : 64];\n  stage h halo 1;\n  stage o[c + 1 : 63];\n"
                 "  compute elementwise (i) { z[i] = x[i + 1] + h[i] + o[i]; }\n}\n",
             MECH_CP_ASYNC, 80);
    ck_assert_ptr_nonnull(p.sc);
    const copy_plan *x = &p.sc->copy[0], *h = &p.sc->copy[1], *o = &p.sc->copy[2];
    ck_assert_int_eq(p.s.stages[0].origin[0].c, 1);
    ck_assert_int_eq(p.s.stages[0].extent[0], 64);
    ck_assert_int_eq(x->origin[0].c, 0);
    ck_assert_int_eq(x->origin[0].nterms, 1);
    ck_assert_str_eq(x->origin[0].var[0], "c");
    ck_assert_int_eq(x->extent[0], 68);
    ck_assert_int_eq(x->vec, 16);
    /* halo 1: [c - 1, c + 65) widens to [c - 4, c + 68) */
    ck_assert_int_eq(p.s.stages[1].origin[0].c, -1);
    ck_assert_int_eq(p.s.stages[1].extent[0], 66);
    ck_assert_int_eq(h->origin[0].c, -4);
    ck_assert_int_eq(h->extent[0], 72);
    ck_assert_int_eq(h->vec, 16);
    ck_assert_int_eq(o->extent[0], 64);
    ck_assert_int_eq(o->vec, 16);
    planned_free(&p);
    /* A tile of 7 floats moves its origin by 28 bytes: no widening, 4-byte copies. */
    plan_src(&p, "pipeline w {\n  in float x[n];\n  out float z[n];\n  tile z[7] at (c);\n"
                 "  stage x[c + 1 : 7];\n  compute elementwise (i) { z[i] = x[i + 1]; }\n}\n",
             MECH_SYNC, 80);
    ck_assert_int_eq(p.sc->copy[0].origin[0].c, 1);
    ck_assert_int_eq(p.sc->copy[0].extent[0], 7);
    ck_assert_int_eq(p.sc->copy[0].vec, 4);
    planned_free(&p);
}
END_TEST

/* A rank-1 spec under tensor for sm_90: tiles of `tile` floats of z, h staged as `stage`. */
static void plan_tensor_stage(planned *p, int tile, const char *stage)
{
    char src[512];
    snprintf(src, sizeof src,
             "pipeline w {\n  in float h[n];\n  out float z[n];\n  tile z[%d] at (c);\n"
             "  stage %s;\n  compute elementwise (i) { z[i] = h[i]; }\n}\n",
             tile, stage);
    plan_src(p, src, MECH_TENSOR, 90);
    ck_assert_msg(p->sc != NULL, "%s", p->diags);
}

START_TEST(tensor_regions_widened_to_32_bytes)
{
    /* Tensor boxes start on 32-byte sectors where the origins keep them (jacobi2d's halo:
     * 0.956 of the copy rate on 16 bytes, 0.978 on 32): [c - 1, c + 65) widens to
     * [c - 8, c + 72). Tiles of 4 floats keep 16 bytes only: [c - 4, c + 8) as before.
     * [c + 4, c + 260) would be [c, c + 264), which no boxes tile: it stays. */
    static const struct { int tile; const char *stage; long long c, extent; } cases[] = {
        {64, "h halo 1", -8, 80}, {4, "h halo 1", -4, 12}, {256, "h[c + 4 : 256]", 4, 256}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        planned p;
        plan_tensor_stage(&p, cases[i].tile, cases[i].stage);
        ck_assert_int_eq(p.sc->copy[0].origin[0].c, cases[i].c);
        ck_assert_int_eq(p.sc->copy[0].extent[0], cases[i].extent);
        ck_assert_int_eq(p.sc->copy[0].vec, 16);
        planned_free(&p);
    }
}
END_TEST

START_TEST(tensor_rows_keep_their_swizzle)
{
    /* 128-byte rows from c0 + 4 swizzle by 128 bytes; on 32 bytes they would be 160 bytes
     * and could not: they stay on 16, swizzled, whether the spec or the planner asks. */
    static const char *const swizzles[] = {" swizzle 128", ""};
    for (size_t i = 0; i < sizeof swizzles / sizeof swizzles[0]; ++i) {
        char src[512];
        snprintf(src, sizeof src,
                 "pipeline w {\n  in float a[m][n];\n  out float z[n][m];\n"
                 "  tile z[32][32] at (c0, r0);\n  stage a[r0 : 32][c0 + 4 : 32]%s;\n"
                 "  compute elementwise (c, r) { z[c][r] = a[r][c + 4]; }\n}\n",
                 swizzles[i]);
        planned p;
        plan_src(&p, src, MECH_TENSOR, 90);
        ck_assert_msg(p.sc != NULL, "%s", p.diags);
        ck_assert_int_eq(p.sc->copy[0].origin[1].c, 4);
        ck_assert_int_eq(p.sc->copy[0].extent[1], 32);
        ck_assert_int_eq(p.sc->copy[0].swizzle, 128);
        planned_free(&p);
    }
}
END_TEST

START_TEST(tensor_rows_fold_where_exact)
{
    /* Rows wider than a box fold into rows of the box's width where every launch and tile
     * keeps that exact: rows of a literal multiple of it, origins along them multiples of
     * it. A run-time row length, a halo, an origin 128 elements in, or rows no wider than
     * a box keep the array's rank. */
    static const struct { const char *arr, *tile, *stage; int fold; } cases[] = {
        {"x[rows][1024]", "y[8][1024]", "x", 256},
        {"x[rows][2048]", "y[8][1024]", "x", 256},
        {"x[rows][320]", "y[2][320]", "x", 160},
        {"x[rows][cols]", "y[8][1024]", "x", 0},
        {"x[rows][1024]", "y[8][256]", "x", 0},
        {"x[rows][1024]", "y[8][1016]", "x halo 4", 0},
        {"x[rows][1280]", "y[8][1024]", "x[r0 : 8][c0 + 128 : 1024]", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char src[512];
        snprintf(src, sizeof src,
                 "pipeline f {\n  in float %s;\n  out float y[rows][1024];\n"
                 "  grid per_tile;\n  tile %s at (r0, c0);\n  stage %s;\n"
                 "  compute elementwise (r, c) { y[r][c] = x[r][c]; }\n}\n",
                 cases[i].arr, cases[i].tile, cases[i].stage);
        planned p;
        plan_src(&p, src, MECH_TENSOR, 90);
        ck_assert_msg(p.sc != NULL, "case %zu: %s", i, p.diags);
        ck_assert_msg(p.sc->copy[0].fold == cases[i].fold, "case %zu: fold %d, want %d", i,
                      p.sc->copy[0].fold, cases[i].fold);
        planned_free(&p);
    }
}
END_TEST

/* The launcher plan as --dump-ir prints it (free it). */
static char *host_text(const host_plan *hp, sched *const *scheds)
{
    memfile m;
    host_dump(mem_open(&m), hp, scheds);
    return mem_close(&m);
}

START_TEST(tensor_map_promotion_from_prefetch)
{
    /* A staged input's `prefetch` is its tensor map's L2 promotion; without one, the
     * default (128, which the dump leaves out). */
    static const struct { const char *stage, *map; } cases[] = {
        {"h", "encode-tensor-map h box=256\n"},
        {"h prefetch 64", "encode-tensor-map h box=256 l2-promotion=64\n"},
        {"h prefetch 256", "encode-tensor-map h box=256 l2-promotion=256\n"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        planned p;
        plan_tensor_stage(&p, 1024, cases[i].stage);
        char *text = host_text(plan_host(p.a, &p.s, &p.sc, 1), &p.sc);
        ck_assert_int_eq(count(text, "  encode-tensor-map "), 1);
        ck_assert_msg(strstr(text, cases[i].map), "%s: no '%s' in\n%s", cases[i].stage,
                      cases[i].map, text);
        free(text);
        planned_free(&p);
    }
}
END_TEST

START_TEST(tensor_output_map_takes_no_prefetch)
{
    /* A staged output's map only stores: its stage's `prefetch` is ignored (-Whints). */
    planned p;
    plan_src(&p, "pipeline t {\n  in float a[r][c];\n  out float b[c][r];\n"
                 "  tile b[32][32] at (c0, r0);\n  stage a[r0 : 32][c0 : 32] prefetch 256;\n"
                 "  stage b prefetch 64;\n"
                 "  compute elementwise (j, i) { b[j][i] = a[i][j]; }\n}\n",
             MECH_TENSOR, 90);
    ck_assert_msg(p.sc != NULL, "%s", p.diags);
    char *text = host_text(plan_host(p.a, &p.s, &p.sc, 1), &p.sc);
    ck_assert_msg(strstr(text, "encode-tensor-map a box=32x32 swizzle=128 l2-promotion=256\n"), "%s", text);
    ck_assert_msg(strstr(text, "encode-tensor-map b box=32x32\n"), "%s", text);
    free(text);
    planned_free(&p);
}
END_TEST

START_TEST(tensor_stores_only_map_elements)
{
    /* A staged float4 output goes back by bulk's row stores: a map's elements are at most
     * 8 bytes, and a float4 map's box stores would write half of each row. Its float2
     * twin goes by tensor stores. */
    static const struct { const char *type; bool map; } cases[] = {{"float4", false},
                                                                   {"float2", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char src[512];
        snprintf(src, sizeof src,
                 "pipeline t {\n  in float a[m][n];\n  out %s b[m][n];\n"
                 "  tile b[4][64] at (r0, c0);\n  stage a;\n  stage b;\n"
                 "  compute elementwise (r, c) { b[r][c].x = a[r][c]; }\n}\n",
                 cases[i].type);
        planned p;
        plan_src(&p, src, MECH_TENSOR, 90);
        ck_assert_msg(p.sc != NULL, "%s", p.diags);
        char *text = host_text(plan_host(p.a, &p.s, &p.sc, 1), &p.sc);
        ck_assert_msg((strstr(text, "encode-tensor-map b ") != NULL) == cases[i].map, "%s: %s",
                      cases[i].type, text);
        free(text);
        planned_free(&p);
    }
}
END_TEST

static const char *outputs_src =
    "pipeline t {\n  in float a[r][c];\n  out float b[c][r];\n  stages 3;\n"
    "  grid persistent;\n  tile b[32][32] at (c0, r0);\n  stage a[r0 : 32][c0 : 32];\n"
    "  stage b;\n  compute elementwise (j, i) { b[j][i] = a[i][j]; }\n}\n";

START_TEST(staged_output_sync)
{
    planned p;
    plan_src(&p, outputs_src, MECH_SYNC, 80);
    ck_assert_ptr_nonnull(p.sc);
    expect_dump(p.sc, "schedule t mech=sync sm_80 slots=1 smem=9216 threads=256 grid=persistent claim_ring=3\n"
                      "prologue p in [0,1):\n"
                      "  claim step=p\n"
                      "prologue p in [0,1):\n"
                      "  barrier\n"
                      "loop t in [0,trips):\n"
                      "  copy step=t\n"
                      "  claim step=t+1\n"
                      "  barrier\n"
                      "  compute step=t\n"
                      "  barrier\n"
                      "  store step=t\n");
    ck_assert_int_eq(p.sc->copy[1].nslots, 1);
    ck_assert_int_eq(p.sc->copy[1].off, 4608);
    planned_free(&p);
}
END_TEST

START_TEST(staged_output_cp_async)
{
    /* The input has a ring of 3 slots (32 rows of 144 bytes each), the output one slot. */
    planned p;
    plan_src(&p, outputs_src, MECH_CP_ASYNC, 80);
    ck_assert_ptr_nonnull(p.sc);
    expect_dump(p.sc, "schedule t mech=cp.async sm_80 slots=3 smem=18432 threads=256 grid=persistent claim_ring=5\n"
                      "prologue p in [0,3):\n"
                      "  claim step=p\n"
                      "prologue p in [0,1):\n"
                      "  barrier\n"
                      "prologue p in [0,2):\n"
                      "  copy step=p if<trips\n"
                      "  commit step=p\n"
                      "loop t in [0,trips):\n"
                      "  wait 1\n"
                      "  claim step=t+3\n"
                      "  barrier\n"
                      "  copy step=t+2 if<trips\n"
                      "  commit step=t+2\n"
                      "  compute step=t\n"
                      "  barrier\n"
                      "  store step=t\n");
    ck_assert_int_eq(p.sc->copy[0].nslots, 3);
    ck_assert_int_eq(p.sc->copy[0].slot_bytes, 4608);
    ck_assert_int_eq(p.sc->copy[1].nslots, 1);
    ck_assert_int_eq(p.sc->copy[1].off, 3 * 4608);
    ck_assert_int_eq(p.sc->copy[1].pitch, 144);
    planned_free(&p);
}
END_TEST

START_TEST(lowered_features)
{
    /* What earlier versions refused now plans with sync and cp.async alike. */
    static const char *srcs[] = {
        "pipeline p {\n  in float x[n];\n  out float z[n];\n  march 2;\n  tile z[64];\n"
        "  stage x;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n",
        "pipeline p {\n  in float a[m][k];\n  out float z[m];\n  tile z[32] at (r);\n"
        "  steps s over k by 16;\n  stage a[r : 32][s : 16];\n  prologue { float t = 0; }\n"
        "  compute step { t += 1; }\n  epilogue { z[r] = t; }\n}\n",
        "pipeline p {\n  in double u[a][b][c];\n  out double v[a][b][c];\n  tile v[2][4][8];\n"
        "  stage u halo 1;\n  compute elementwise (i, j, k) { v[i][j][k] = u[i][j][k]; }\n}\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; ++i)
        for (int m = 0; m < 2; ++m) {
            planned p;
            plan_src(&p, srcs[i], m ? MECH_CP_ASYNC : MECH_SYNC, 80);
            ck_assert_msg(p.sc != NULL, "spec %zu, %s: %s", i, m ? "cp.async" : "sync", p.diags);
            ck_assert_str_eq(p.diags, "");
            planned_free(&p);
        }
}
END_TEST

/* ------------------------------------------------------------------ cp.async.mbarrier */

/* A ring tracked by mbarriers: their arrival counts and the producers' threads. */
static void expect_mbarriers(const sched *sc, int full, int empty, int producers)
{
    ck_assert_int_eq(sc->track, TRACK_BARRIER);
    ck_assert_int_eq(sc->full_arrivals, full);
    ck_assert_int_eq(sc->empty_arrivals, empty);
    ck_assert_int_eq(sc->producer_threads, producers);
}

START_TEST(cp_async_mbarrier_shared)
{
    planned p;
    plan_simple(&p, "float", 1, 1024, "stages 3; grid persistent;", MECH_CP_ASYNC_MBARRIER, 90);
    ck_assert_int_eq(p.sc->nslots, 3);
    expect_mbarriers(p.sc, 256, 0, 0);
    /* Barrier initialisation first, in the frame: init, a fence and a block barrier. */
    ck_assert_int_ge(p.sc->nsecs, 2);
    ck_assert_int_eq(p.sc->secs[0].kind, SEC_FRAME);
    ck_assert_int_eq(p.sc->secs[0].ops[0].kind, OP_INIT);
    ck_assert_int_eq(p.sc->secs[0].ops[1].kind, OP_FENCE);
    ck_assert_int_eq(p.sc->secs[0].ops[1].fence, FENCE_MBARRIER_INIT);
    ck_assert_int_eq(p.sc->secs[0].ops[2].kind, OP_BARRIER);
    planned_free(&p);
}
END_TEST

START_TEST(cp_async_mbarrier_roles)
{
    planned p;
    plan_simple(&p, "float", 1, 1024, "threads 160; stages 3; grid persistent; producer_warps 1;",
                MECH_CP_ASYNC_MBARRIER, 90);
    expect_mbarriers(p.sc, 32, 128, 32);
    int producer = 0, consumer = 0;
    for (int i = 0; i < p.sc->nsecs; ++i)
        for (int j = 0; j < p.sc->secs[i].nops; ++j) {
            const ir_op *op = &p.sc->secs[i].ops[j];
            producer += op->role == ROLE_PRODUCER;
            consumer += op->role == ROLE_CONSUMER;
            if (op->kind == OP_COPY || op->kind == OP_ACQUIRE)
                ck_assert_int_eq(op->role, ROLE_PRODUCER);
            if (op->kind == OP_COMPUTE || op->kind == OP_RELEASE)
                ck_assert_int_eq(op->role, ROLE_CONSUMER);
        }
    ck_assert_int_gt(producer, 0);
    ck_assert_int_gt(consumer, 0);
    planned_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ bulk */

/* The elected thread's ARRIVE_TX of step off, expecting both staged regions' bytes, then
 * the copy (guarded unless the step is the loop's own). */
static void expect_fill(const ir_op *ops, int off, bool guarded)
{
    expect_op(&ops[0], OP_ARRIVE_TX, off, guarded);
    ck_assert_int_eq(ops[0].bar, BAR_FULL);
    ck_assert_int_eq(ops[0].bytes, 2 * 1024 * 4);
    ck_assert(!ops[0].all_arrive);
    expect_op(&ops[1], OP_COPY, off, guarded);
    ck_assert(ops[1].stores);
}

START_TEST(bulk_ring)
{
    planned p;
    plan_simple(&p, "float", 2, 1024, "stages 3; grid persistent;", MECH_BULK, 90);
    expect_mbarriers(p.sc, 1, 0, 0);
    ck_assert_int_eq(p.sc->nsecs, 6);
    ck_assert_int_eq(p.sc->secs[0].ops[1].fence, FENCE_MBARRIER_INIT);
    /* After the frame, the claims of steps 0..3 and their barrier; S steps armed and
     * copied ahead, then one barrier publishes their stored edges. */
    expect_op(&p.sc->secs[1].ops[0], OP_CLAIM, 0, false);
    ck_assert_int_eq(p.sc->secs[1].count, 4);
    expect_op(&p.sc->secs[2].ops[0], OP_BARRIER, 0, false);
    const ir_section *pro = &p.sc->secs[3], *pub = &p.sc->secs[4], *loop = &p.sc->secs[5];
    ck_assert_int_eq(pro->count, 3);
    expect_fill(pro->ops, 0, true);
    ck_assert_int_eq(pub->count, 1);
    ck_assert_int_eq(pub->nops, 1);
    expect_op(&pub->ops[0], OP_BARRIER, 0, false);
    ck_assert_int_eq(loop->nops, 6);
    expect_op(&loop->ops[0], OP_WAIT_PARITY, 0, false);
    expect_op(&loop->ops[1], OP_COMPUTE, 0, false);
    expect_op(&loop->ops[2], OP_CLAIM, 4, false);
    expect_op(&loop->ops[3], OP_BARRIER, 0, false);
    expect_fill(&loop->ops[4], 3, true);
    planned_free(&p);
}
END_TEST

START_TEST(bulk_one_slot)
{
    planned p;
    plan_simple(&p, "float", 2, 1024, "grid per_tile;", MECH_BULK, 90);
    ck_assert_int_eq(p.sc->nslots, 1);
    ck_assert_int_eq(p.sc->nsecs, 2);
    const ir_section *loop = &p.sc->secs[1];
    ck_assert_int_eq(loop->nops, 6);
    expect_fill(loop->ops, 0, false);
    expect_op(&loop->ops[2], OP_BARRIER, 0, false);
    expect_op(&loop->ops[3], OP_WAIT_PARITY, 0, false);
    expect_op(&loop->ops[4], OP_COMPUTE, 0, false);
    expect_op(&loop->ops[5], OP_BARRIER, 0, false);
    planned_free(&p);
}
END_TEST

START_TEST(bulk_roles)
{
    /* The producers acquire and copy (bulk copies and their own stores), then every one
     * of them arrives on the full barrier, which counts them all; the consumers wait,
     * compute and release. */
    planned p;
    plan_simple(&p, "float", 2, 1024, "threads 160; stages 3; grid persistent; producer_warps 1;",
                MECH_BULK, 90);
    expect_mbarriers(p.sc, 32, 128, 32);
    const ir_section *loop = &p.sc->secs[p.sc->nsecs - 1];
    static const struct { ir_op_kind kind; ir_role role; } want[] = {
        {OP_ACQUIRE, ROLE_PRODUCER}, {OP_COPY, ROLE_PRODUCER}, {OP_ARRIVE_TX, ROLE_PRODUCER},
        {OP_WAIT_PARITY, ROLE_CONSUMER}, {OP_COMPUTE, ROLE_CONSUMER},
        {OP_RELEASE, ROLE_CONSUMER},
    };
    ck_assert_int_eq(loop->nops, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < loop->nops; ++i) {
        ck_assert_int_eq(loop->ops[i].kind, want[i].kind);
        ck_assert_int_eq(loop->ops[i].role, want[i].role);
    }
    ck_assert(loop->ops[1].stores);
    ck_assert(loop->ops[2].all_arrive);
    ck_assert_int_eq(loop->ops[2].bytes, 2 * 1024 * 4);
    planned_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ registers */

/* plan_simple's spec under bulk for sm_90, as the arch-specific target when specific. */
static sched *plan_bulk90(planned *p, long tile, const char *items, bool specific)
{
    char src[1024];
    h_start(p, "t.pipe", spec_src(src, sizeof src, "float", 2, tile, items));
    ck_assert_msg(h_check(p, &both), "the test's source does not check: %s", h_diags(p));
    p->sc = plan_schedule(p->a, &p->d, &p->s, MECH_BULK, 90, specific);
    h_end(p);
    ck_assert_msg(p->sc != NULL, "planning failed: %s", p->diags);
    return p->sc;
}

START_TEST(registers_rebalanced)
{
    /* 2 x 4 slots of 16 KiB: the block holds the SM alone; 384 threads launch with 168
     * registers each, the producer warpgroup keeps 40 and the two consumer warpgroups
     * take (168 x 384 - 40 x 128) / 256 = 232. */
    planned p;
    const char *items = "threads 384; stages 4; grid persistent; producer_warps 4;";
    sched *sc = plan_bulk90(&p, 4096, items, true);
    ck_assert_int_eq(sc->regs_launch, 168);
    ck_assert_int_eq(sc->regs_producer, 40);
    ck_assert_int_eq(sc->regs_consumer, 232);
    ck_assert(h_verify(&p, sc));
    char *dump = ir_text(sc);
    ck_assert_ptr_nonnull(strstr(dump, "registers: launch 168, producers keep 40, consumers take 232\n"));
    free(dump);
    planned_free(&p);
    /* 640 threads launch with 65536 / 640 = 102, down to 96; the consumers take
     * (96 x 640 - 40 x 128) / 512 = 110, down to 104. 8 producer warps for one consumer
     * warpgroup would free (168 x 384 - 40 x 256) / 128 = 424: PTX's most is 256. */
    static const struct { const char *items; int launch, take; } cases[] = {
        {"threads 640; stages 4; grid persistent; producer_warps 4;", 96, 104},
        {"threads 384; stages 4; grid persistent; producer_warps 8;", 168, 256},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        sc = plan_bulk90(&p, 4096, cases[i].items, true);
        ck_assert_int_eq(sc->regs_launch, cases[i].launch);
        ck_assert_int_eq(sc->regs_producer, 40);
        ck_assert_int_eq(sc->regs_consumer, cases[i].take);
        ck_assert(h_verify(&p, sc));
        planned_free(&p);
    }
}
END_TEST

START_TEST(registers_left_alone)
{
    /* Not on plain sm_90 (setmaxnreg is for the arch-specific target), not where a second
     * block fits beside this one, not for a producer warp that is not a warpgroup, not
     * where 256 threads already have 255 registers each, not under `blocks_per_sm 2`, not
     * where either role is not whole warpgroups (the other being so). */
    static const struct { long tile; const char *items; bool specific; } cases[] = {
        {4096, "threads 384; stages 4; grid persistent; producer_warps 4;", false},
        {1024, "threads 384; stages 4; grid persistent; producer_warps 4;", true},
        {4096, "threads 384; stages 4; grid persistent; producer_warps 1;", true},
        {4096, "threads 256; stages 4; grid persistent; producer_warps 4;", true},
        {4096, "threads 384; stages 4; grid persistent; producer_warps 4; blocks_per_sm 2;", true},
        {4096, "threads 448; stages 4; grid persistent; producer_warps 4;", true},
        {4096, "threads 320; stages 4; grid persistent; producer_warps 2;", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        planned p;
        const sched *sc = plan_bulk90(&p, cases[i].tile, cases[i].items, cases[i].specific);
        ck_assert_msg(sc->regs_launch == 0, "case %zu: setmaxnreg planned", i);
        planned_free(&p);
    }
}
END_TEST

/* ------------------------------------------------------------------ what is not lowered */

/* src checks, and planning it for m on sm fails with exactly want. */
static void expect_sorry(const char *src, mech m, int sm, const char *want)
{
    planned p;
    plan_src(&p, src, m, sm);
    ck_assert_ptr_null(p.sc);
    ck_assert_str_eq(p.diags, want);
    ck_assert_int_eq(p.errors, 1);
    planned_free(&p);
}

START_TEST(border_halos_plan_everywhere)
{
    /* A clamped or mirrored halo is the views' (pg_bview), not the copies': every lowering
     * plans it, with the layout of a zero halo. */
    for (int m = 0; m < mech_count(); ++m) {
        if (mech_is_auto((mech)m) || !mech_implemented((mech)m))
            continue;
        for (int fill = 0; fill < 2; ++fill) {
            planned p;
            plan_src(&p, fill ? "pipeline p {\n  in float u[m][n];\n  out float v[m][n];\n"
                                "  tile v[8][32];\n  stage u halo 2 mirror;\n"
                                "  compute elementwise (j, i) { v[j][i] = u[j][i]; }\n}\n"
                              : "pipeline p {\n  in float u[m][n];\n  out float v[m][n];\n"
                                "  tile v[8][32];\n  stage u halo 2 clamp;\n"
                                "  compute elementwise (j, i) { v[j][i] = u[j][i]; }\n}\n",
                     (mech)m, 90);
            ck_assert_msg(p.sc != NULL, "%s: %s", mech_name((mech)m), p.diags);
            ck_assert_int_eq(p.sc->copy[0].extent[0], 12);
            planned_free(&p);
        }
    }
}
END_TEST

START_TEST(schedule_over_the_architecture_limit)
{
    /* Checked for sm_80 and sm_90 (fits), planned for sm_86 (99 KiB): 4 slots of 32000. */
    expect_sorry("pipeline p {\n  in float x[n];\n  out float z[n];\n  stages 4;\n"
                 "  grid persistent;\n  tile z[8000];\n  stage x;\n"
                 "  compute elementwise (i) { z[i] = x[i]; }\n}\n",
                 MECH_CP_ASYNC, 86,
                 "t.pipe:1:1: error: the cp.async schedule needs 128000 bytes of shared memory "
                 "per block; sm_86 has 101376\npipeline p {\n^\n");
}
END_TEST

/* ------------------------------------------------------------------ the IR's text */

START_TEST(op_names_and_printing)
{
    static const char *names[OP__COUNT] = {
        "copy", "commit", "wait", "acquire", "release", "arrive", "arrive_tx", "wait_parity",
        "init", "fence", "barrier", "compute", "store", "claim",
    };
    for (int k = 0; k < OP__COUNT; ++k)
        ck_assert_str_eq(ir_op_name((ir_op_kind)k), names[k]);

    arena *a = arena_new();
    static const struct { ir_op op; const char *var; const char *text; } cases[] = {
        {{.kind = OP_COPY, .step_off = 3, .guarded = true}, "t", "copy step=t+3 if<trips"},
        {{.kind = OP_COPY, .step_off = 0, .guarded = true}, "p", "copy step=p if<trips"},
        {{.kind = OP_COMMIT, .step_off = -1}, "t", "commit step=t-1"},
        {{.kind = OP_WAIT, .n = 7, .step_off = 2}, "t", "wait 7"},
        {{.kind = OP_BARRIER, .step_off = 1}, "t", "barrier"},
        {{.kind = OP_FENCE}, "t", "fence"},
        {{.kind = OP_ARRIVE_TX, .bytes = 4096, .step_off = 1}, "t",
         "arrive_tx step=t+1 bar=full bytes=4096"},
        {{.kind = OP_COMPUTE}, "trips", "compute step=trips"},
        {{.kind = OP_FENCE, .fence = FENCE_MBARRIER_INIT}, "p", "fence mbarrier_init"},
        {{.kind = OP_COPY, .role = ROLE_PRODUCER, .guarded = true}, "t",
         "producer: copy step=t if<trips"},
        {{.kind = OP_WAIT_PARITY, .role = ROLE_CONSUMER, .bar = BAR_EMPTY, .parity_flip = true},
         "t", "consumer: wait_parity step=t bar=empty parity_flipped"},
        {{.kind = OP_ARRIVE, .bar = BAR_FULL, .on_copies = true, .guarded = true, .step_off = 2},
         "t", "arrive step=t+2 bar=full on_copies if<trips"},
        {{.kind = OP_RELEASE, .role = ROLE_CONSUMER, .bar = BAR_EMPTY}, "t",
         "consumer: release step=t bar=empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        strbuf sb;
        sb_init(&sb, a);
        ir_op_print(&sb, &cases[i].op, cases[i].var);
        ck_assert_str_eq(sb.data, cases[i].text);
    }
    arena_free(a);
}
END_TEST

START_TEST(plans_are_deterministic)
{
    planned p, q;
    plan_simple(&p, "half", 2, 300, "stages 4; grid persistent;", MECH_CP_ASYNC, 90);
    plan_simple(&q, "half", 2, 300, "stages 4; grid persistent;", MECH_CP_ASYNC, 90);
    char *a = ir_text(p.sc), *b = ir_text(q.sc);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    planned_free(&p);
    planned_free(&q);
}
END_TEST

static Suite *plan_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *sy = tcase_create("sync");
    tcase_add_test(sy, sync_schedule);
    tcase_add_test(sy, sync_dump);
    suite_add_tcase(s, sy);
    TCase *ca = tcase_create("cp.async");
    tcase_add_test(ca, cp_async_ring_schedules);
    tcase_add_test(ca, cp_async_one_slot);
    tcase_add_test(ca, cp_async_dump);
    tcase_add_test(ca, layout_rounds_to_128);
    tcase_add_test(ca, auto_resolution);
    tcase_add_test(ca, auto_with_producer_warps);
    tcase_add_test(ca, auto_one_row_reductions_by_their_fold);
    tcase_add_test(ca, auto_leaves_tensor_where_maps_cannot_copy);
    suite_add_tcase(s, ca);
    TCase *cw = tcase_create("copy widths");
    tcase_add_test(cw, copy_widths);
    tcase_add_test(cw, copy_width_per_stage);
    suite_add_tcase(s, cw);
    TCase *rg = tcase_create("regions and outputs");
    tcase_add_test(rg, rank2_rows_padded);
    tcase_add_test(rg, input_regions_widened_to_16_bytes);
    tcase_add_test(rg, tensor_regions_widened_to_32_bytes);
    tcase_add_test(rg, tensor_rows_keep_their_swizzle);
    tcase_add_test(rg, tensor_rows_fold_where_exact);
    tcase_add_test(rg, tensor_map_promotion_from_prefetch);
    tcase_add_test(rg, tensor_output_map_takes_no_prefetch);
    tcase_add_test(rg, tensor_stores_only_map_elements);
    tcase_add_test(rg, staged_output_sync);
    tcase_add_test(rg, staged_output_cp_async);
    tcase_add_test(rg, lowered_features);
    suite_add_tcase(s, rg);
    TCase *mb = tcase_create("cp.async.mbarrier");
    tcase_add_test(mb, cp_async_mbarrier_shared);
    tcase_add_test(mb, cp_async_mbarrier_roles);
    tcase_add_test(mb, bulk_ring);
    tcase_add_test(mb, bulk_one_slot);
    tcase_add_test(mb, bulk_roles);
    tcase_add_test(mb, registers_rebalanced);
    tcase_add_test(mb, registers_left_alone);
    suite_add_tcase(s, mb);
    TCase *so = tcase_create("sorry");
    tcase_add_test(so, border_halos_plan_everywhere);
    tcase_add_test(so, schedule_over_the_architecture_limit);
    suite_add_tcase(s, so);
    TCase *pk = tcase_create("packed rows");
    tcase_add_test(pk, row_packs_where_nothing_sees_the_item);
    tcase_add_test(pk, row_packs_refused);
    tcase_add_test(pk, packed_spec_scales_what_follows_the_tile);
    tcase_add_test(pk, packed_spec_keeps_written_occupancy);
    suite_add_tcase(s, pk);
    TCase *ir = tcase_create("ir text");
    tcase_add_test(ir, op_names_and_printing);
    tcase_add_test(ir, plans_are_deterministic);
    suite_add_tcase(s, ir);
    return s;
}

int main(void) { return run_suite(plan_suite()); }
