/* emit_test: the standalone drivers that --emit-test and --emit-bench write.
 *
 * The test driver runs the generated launcher on random, non-constant inputs over the
 * sizes and trip counts that break pipelines (0, 1, tile-1, tile, tile+1, a prime, sizes
 * in multiples of 16 elements past the ring, a size of at least 2^26 elements; forced grids that give blocks 0, 1, < stages and > stages
 * trips; pointers misaligned to each copy width, each array by its own element size),
 * checks every output element against the spec's own host reference, checks that nothing
 * was written outside an output, and that accumulators are deterministic. The bench driver times the launcher against
 * cudaMemcpy device-to-device and against a plain kernel reading and writing as many bytes
 * as it (the same-shape reference), in the same process. */
#include "pipegen.h"

#include <string.h>

/* Host-side type of a reference accumulator: wider than the device's where that is free
 * (float, int: the other integers keep their type, whose sums wrap as the device's do).
 * half and bfloat16 keep their own type, whose host operators (cuda_fp16.h,
 * cuda_bf16.h) take the compute body's text as it is (a double would not: converting a
 * __half to double is ambiguous); they only combine min and max (sema), which are exact in
 * any type. */
static const char *ref_accum_ctype(elem_type t)
{
    switch (t) {
    case TY_FLOAT: case TY_DOUBLE: return "double";
    case TY_INT: return "long long";
    default: return ast_type_ctype(t);
    }
}

/* The identity of a reference accumulator or reduction, as the device's (emit_accum_identity) once the
 * result is converted to the accumulator's type: an integer's min starts at its type's
 * greatest value, not at INFINITY (whose conversion to an integer is undefined). */
static const char *ref_identity(elem_type t, ast_combine combine)
{
    bool is_float = ast_type_class(t) == TC_FLOAT;
    switch (combine) {
    case COMBINE_MIN: case COMBINE_ARGMIN: return is_float ? "INFINITY" : ast_type_max(t);
    case COMBINE_MAX: case COMBINE_ARGMAX: return is_float ? "-INFINITY" : ast_type_min(t);
    default: return "0";
    }
}

static void emit_common(strbuf *o, const emit_unit *u, const char *what)
{
    emit_banner(o, u->spec);
    sb_printf(o, "// %s driver for %s.\n", what, u->spec->name);
    sb_printf(o, "#include \"%s\"\n", u->opts.header_name);
    emit_stamp_check(o, &u->opts);
    sb_puts(o, "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
               "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
               "#include <algorithm>\n#include <chrono>\n#include <vector>\n\n");
    sb_puts(o, "#include \"pipert_device.cuh\"\n");
    sb_puts(o, "\n#define PG_CHECK(call) do { cudaError_t pg_e = (call); if (pg_e != cudaSuccess) { "
               "\\\n    fprintf(stderr, \"%s:%d: %s: %s\\n\", __FILE__, __LINE__, #call, "
               "pipert_error_string(pg_e)); \\\n    exit(2); } } while (0)\n\n");
    sb_puts(o, "static unsigned long long pg_rng = 0x9e3779b97f4a7c15ULL;\n"
               "[[maybe_unused]] static double pg_uniform(void) /* [0, 1) */\n{\n"
               "    pg_rng ^= pg_rng << 13; pg_rng ^= pg_rng >> 7; pg_rng ^= pg_rng << 17;\n"
               "    return (double)(pg_rng >> 11) * (1.0 / 9007199254740992.0);\n}\n\n");
}

/* ------------------------------------------------------------------ reference */

/* Arrays of rank 2 and 3 are views with origin 0 over the host array, so that the
 * reference indexes them as the compute body does; a staged array whose halo clamps or
 * mirrors reads through the same border (pg_bview), over the whole array. */
static void emit_host_array(strbuf *o, const spec *s, const spec_array *arr)
{
    const char *c = arr->dir == DIR_IN ? "const " : "", *t = ast_type_ctype(arr->type);
    const spec_stage *st = arr->staged >= 0 ? &s->stages[arr->staged] : NULL;
    const bool border = st && spec_stage_border(st);
    if (arr->rank == 1 && !border) {
        sb_printf(o, "    %s%s *const %s = (%s%s *)pg_h->%s;\n", c, t, arr->name, c, t,
                  arr->name);
        sb_printf(o, "    (void)%s;\n", arr->name);
        return;
    }
    sb_puts(o, "    const ");
    if (border)
        emit_border_open(o, st);
    sb_printf(o, "pg_view%d<%s%s>%s %s{%s(%s%s *)pg_h->%s, 0", arr->rank, c, t,
              border ? ">" : "", arr->name, border ? "{" : "", c, t, arr->name);
    for (int d = 1; d < arr->rank; ++d)
        sb_puts(o, ", 0");
    for (int d = 1; d < arr->rank; ++d) {
        sb_puts(o, ", ");
        for (int e = d; e < arr->rank; ++e) {
            sb_puts(o, e > d ? " * " : "");
            emit_extent(o, &arr->dims[e], "");
        }
    }
    sb_puts(o, "}");
    for (int d = 0; d < arr->rank && border; ++d) {
        sb_puts(o, ", ");
        emit_extent(o, &arr->dims[d], "");
    }
    sb_printf(o, "%s;\n    (void)%s;\n", border ? "}" : "", arr->name);
}

static void emit_reference_loop(strbuf *o, const spec *s, int d)
{
    const char *i = s->reference.idx[d];
    sb_printf(o, "    for (int64_t %s = 0; %s < ", i, i);
    emit_extent(o, &s->arrays[s->tile_array].dims[d], "");
    sb_printf(o, "; ++%s)\n", i);
}

/* A reduction along the reference's row, in order: a float sum in double, as the
 * accumulators' (argmin and argmax: the first index of the best value). */
static void emit_reference_reduce(strbuf *o, const emit_unit *u, const spec_reduce *r)
{
    const spec *s = u->spec;
    const char *row = s->reference.idx[s->reference.nidx - 1], *t = ast_type_ctype(r->type);
    const bool arg = spec_reduce_is_arg(r), custom = r->combine == COMBINE_CUSTOM;
    if (arg) {
        sb_printf(o, "        struct { %s value; long long index; } %s = {%s, -1};\n", t,
                  r->name, ref_identity(r->type, r->combine));
    } else if (custom) {
        sb_printf(o, "        %s %s = (%s)(\n", t, r->name, t);
        emit_body(o, &r->identity, &u->opts, "");
        sb_printf(o, "        );\n        {\n        const auto pg_custom_fold = [&](const %s %s, "
                     "const %s %s) -> %s {\n            return (%s)(\n", t, r->op_arg[0], t,
                  r->op_arg[1], t, t);
        emit_body(o, &r->op, &u->opts, "");
        sb_puts(o, "            );\n        };\n");
    } else {
        sb_printf(o, "        %s %s = %s;\n", ref_accum_ctype(r->type), r->name,
                  ref_identity(r->type, r->combine));
    }
    sb_printf(o, "        for (int64_t %s = 0; %s < ", row, row);
    emit_extent(o, &s->arrays[s->tile_array].dims[s->tile_rank - 1], "");
    sb_printf(o, "; ++%s) {\n            const %s pg_v = (%s)(\n", row, t, t);
    emit_body(o, &r->expr, &u->opts, "");
    if (arg)
        sb_printf(o, "            );\n            if (%s.index < 0 || pg_v %s %s.value) {\n"
                     "                %s.value = pg_v;\n                %s.index = %s;\n"
                     "            }\n", r->name, r->combine == COMBINE_ARGMAX ? ">" : "<",
                  r->name, r->name, r->name, row);
    else {
        sb_printf(o, "            );\n            %s = ", r->name);
        emit_fold(o, r->combine, r->name, "pg_v");
        sb_puts(o, ";\n");
    }
    sb_puts(o, custom ? "        }\n        }\n" : "        }\n");
}

/* An accumulator of the reference, at its identity; an array one static, since it may be
 * larger than a stack should hold. */
static void emit_reference_accum(strbuf *o, const spec_accum *acc)
{
    const char *t = ref_accum_ctype(acc->type), *id = ref_identity(acc->type, acc->combine);
    if (!acc->is_array) {
        sb_printf(o, "    %s %s = %s;\n", t, acc->name, id);
        return;
    }
    sb_printf(o, "    static %s %s[%d];\n    for (int pg_e = 0; pg_e < %d; ++pg_e)\n"
                 "        %s[pg_e] = %s;\n", t, acc->name, acc->extent, acc->extent, acc->name, id);
}

static void emit_reference(strbuf *o, const emit_unit *u)
{
    const spec *s = u->spec;
    emit_body_types(o, s, true);   /* (emit_common includes them) */
    sb_printf(o, "static void pg_reference(const struct %s_args *pg_h)\n{\n", s->name);
    for (int i = 0; i < s->nparams; ++i)
        sb_printf(o, "    const %s %s = pg_h->%s;\n    (void)%s;\n",
                  ast_type_ctype(s->params[i].type), s->params[i].name, s->params[i].name,
                  s->params[i].name);
    for (int i = 0; i < s->nsizes; ++i)
        sb_printf(o, "    const int64_t %s = pg_h->%s;\n    (void)%s;\n", s->sizes[i],
                  s->sizes[i], s->sizes[i]);
    for (int i = 0; i < s->narrays; ++i)
        emit_host_array(o, s, &s->arrays[i]);
    for (int i = 0; i < s->naccums; ++i)
        emit_reference_accum(o, &s->accums[i]);
    /* With index names: once per element of the tile array, in order, each row folding the
     * reductions first; without: once. */
    const int nidx = s->reference.nidx, loops = s->nreduces && nidx ? nidx - 1 : nidx;
    for (int d = 0; d < loops; ++d)
        emit_reference_loop(o, s, d);
    sb_puts(o, "    {\n");
    for (int i = 0; i < s->nreduces && nidx; ++i)
        emit_reference_reduce(o, u, &s->reduces[i]);
    if (loops < nidx) {
        emit_reference_loop(o, s, nidx - 1);
        sb_puts(o, "    {\n");
    }
    emit_body(o, &s->reference, &u->opts, "        ");
    sb_puts(o, loops < nidx ? "    }\n    }\n" : "    }\n");
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        const char *out = s->arrays[acc->into].name, *t = ast_type_ctype(acc->type);
        if (acc->is_array)
            sb_printf(o, "    for (int pg_e = 0; pg_e < %d; ++pg_e)\n        %s[pg_e] = (%s)%s[pg_e];\n",
                      acc->extent, out, t, acc->name);
        else
            sb_printf(o, "    %s[0] = (%s)%s;\n", out, t, acc->name);
    }
    sb_puts(o, "}\n\n");
}

/* ------------------------------------------------------------------ buffers */

/* Every array gets a host copy, a reference copy (outputs) and a device buffer with room
 * for a misaligning offset and a poisoned guard zone past its end. */
static void emit_buffers(strbuf *o, const spec *s)
{
    sb_puts(o, "enum { PG_GUARD = 256 };\n\nstruct pg_buffers {\n");
    for (int i = 0; i < s->narrays; ++i)
        sb_printf(o, "    std::vector<unsigned char> h_%s, r_%s;\n    unsigned char *d_%s;\n"
                     "    size_t n_%s;\n", s->arrays[i].name, s->arrays[i].name,
                  s->arrays[i].name, s->arrays[i].name);
    sb_puts(o, "};\n\n");
}

static bool has_sum_accum(const spec *s)
{
    for (int i = 0; i < s->naccums; ++i)
        if (s->accums[i].combine == COMBINE_SUM)
            return true;
    return false;
}

/* A random lane of type t: floats in [lo, 1) (lo 0 where a sum accumulator would otherwise
 * cancel and hide a missing tile, else -1), int in [-100, 100) (its sums stay exact in the
 * reference's long long), int64 in [-2^32, 2^32) (likewise), every other integer type over
 * its whole range (their sums wrap alike in the kernel and the reference). */
static void emit_random_lane(strbuf *o, elem_type t, double lo)
{
    const char *c = ast_type_ctype(t);
    switch (t) {
    case TY_INT: sb_puts(o, "(int)(pg_uniform() * 200.0) - 100"); return;
    case TY_INT64: sb_puts(o, "(long long)(pg_uniform() * 8589934592.0) - 4294967296LL"); return;
    case TY_UINT64:
        sb_puts(o, "(unsigned long long)(pg_uniform() * 4294967296.0) << 32 | "
                   "(unsigned long long)(pg_uniform() * 4294967296.0)");
        return;
    case TY_HALF: sb_printf(o, "__float2half((float)(%g + pg_uniform() * %g))", lo, -lo + 1); return;
    case TY_BF16:
        sb_printf(o, "__float2bfloat16((float)(%g + pg_uniform() * %g))", lo, -lo + 1);
        return;
    default: break;
    }
    if (ast_type_class(t) == TC_FLOAT)
        sb_printf(o, "(%s)(%g + pg_uniform() * %g)", c, lo, -lo + 1);
    else   /* the whole range: min + u * 2^bits */
        sb_printf(o, "(%s)(%s + (long long)(pg_uniform() * %.0f))", c, ast_type_min(t),
                  (double)(1ull << (8 * ast_type_size(t))));
}

/* Random elements, lane by lane (a vector's lanes each a random value of its type). */
static void emit_random_fill(strbuf *o, const spec *s, const spec_array *arr)
{
    const elem_type lane = ast_type_lane(arr->type);
    const char *t = ast_type_ctype(lane);
    sb_printf(o, "    {\n        %s *p = (%s *)b.h_%s.data();\n", t, t, arr->name);
    sb_printf(o, "        for (size_t e = 0; e < b.n_%s * %d; ++e)\n            p[e] = ", arr->name,
              ast_type_lanes(arr->type));
    emit_random_lane(o, lane, has_sum_accum(s) ? 0.0 : -1.0);
    sb_puts(o, ";\n    }\n");
}

/* An array's element count and its device buffer, with room for a misaligning offset and
 * the guard zone. */
static void emit_alloc_device(strbuf *o, const spec_array *arr)
{
    sb_printf(o, "    b.n_%s = (size_t)(", arr->name);
    emit_elems(o, arr, "sz.");
    sb_printf(o, ");\n    PG_CHECK(cudaMalloc(&b.d_%s, b.n_%s * %d + 16 + PG_GUARD));\n", arr->name,
              arr->name, ast_type_size(arr->type));
}

static void emit_alloc(strbuf *o, const spec *s)
{
    sb_printf(o, "static void pg_alloc(pg_buffers &b, const struct %s_args &sz)\n{\n", s->name);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        emit_alloc_device(o, arr);
        sb_printf(o, "    b.h_%s.resize(b.n_%s * %d);\n", arr->name, arr->name,
                  ast_type_size(arr->type));
        if (arr->dir != DIR_OUT)
            emit_random_fill(o, s, arr);
    }
    sb_puts(o, "}\n\n");
}

static void emit_free(strbuf *o, const spec *s)
{
    sb_puts(o, "static void pg_free(pg_buffers &b)\n{\n");
    for (int i = 0; i < s->narrays; ++i)
        sb_printf(o, "    PG_CHECK(cudaFree(b.d_%s));\n", s->arrays[i].name);
    sb_puts(o, "}\n\n");
}

/* The bench's inputs, random lanes as the test's but made on the device, each element's
 * generator seeded by a hash of its index and its array's (no array a shifted copy of
 * another): the bench compares nothing with a host copy, and
 * filling a GiB or two on the host took longer than the measurements. Outputs start zeroed. */
static void emit_bench_alloc(strbuf *o, const spec *s)
{
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (arr->dir == DIR_OUT)
            continue;
        const char *t = ast_type_ctype(ast_type_lane(arr->type));
        sb_printf(o, "__global__ void pg_fill_%s(%s *p, size_t n)\n{\n"
                     "    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;\n"
                     "         e += (size_t)gridDim.x * blockDim.x) {\n"
                     "        unsigned long long z = (e * %d + %d) * 0x9e3779b97f4a7c15ULL;\n"
                     "        z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ULL;\n"
                     "        z = (z ^ z >> 27) * 0x94d049bb133111ebULL;\n"
                     "        unsigned long long pg_rng = (z ^ z >> 31) | 1;\n"
                     "        auto pg_uniform = [&pg_rng]() {\n"
                     "            pg_rng ^= pg_rng << 13; pg_rng ^= pg_rng >> 7; pg_rng ^= pg_rng << 17;\n"
                     "            return (double)(pg_rng >> 11) * (1.0 / 9007199254740992.0);\n"
                     "        };\n        p[e] = ", arr->name, t, s->narrays, i + 1);
        emit_random_lane(o, ast_type_lane(arr->type), has_sum_accum(s) ? 0.0 : -1.0);
        sb_puts(o, ";\n    }\n}\n\n");
    }
    sb_printf(o, "static void pg_bench_alloc(pg_buffers &b, const struct %s_args &sz)\n{\n", s->name);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        emit_alloc_device(o, arr);
        if (arr->dir == DIR_OUT)
            sb_printf(o, "    PG_CHECK(cudaMemset(b.d_%s, 0, b.n_%s * %d));\n", arr->name, arr->name,
                      ast_type_size(arr->type));
        else
            sb_printf(o, "    if (b.n_%s)\n        pg_fill_%s<<<1024, 256>>>((%s *)b.d_%s, b.n_%s * %d);\n",
                      arr->name, arr->name, ast_type_ctype(ast_type_lane(arr->type)), arr->name,
                      arr->name, ast_type_lanes(arr->type));
    }
    sb_puts(o, "    PG_CHECK(cudaGetLastError());\n    PG_CHECK(cudaDeviceSynchronize());\n}\n\n");
}

/* Upload: each array at its offset off[i] bytes (a row of pg_offsets); the bytes around
 * the data are garbage (inputs) or poison 0xff (outputs, checked afterwards). */
static void emit_upload(strbuf *o, const spec *s)
{
    sb_printf(o, "static void pg_upload(pg_buffers &b, struct %s_args &a, const size_t *off)\n{\n",
              s->name);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        const char *n = arr->name;
        int esz = ast_type_size(arr->type);
        sb_printf(o, "    {\n        const size_t o = off[%d];\n"
                     "        std::vector<unsigned char> img(b.n_%s * %d + 16 + PG_GUARD);\n"
                     "        for (size_t e = 0; e < img.size(); ++e)\n"
                     "            img[e] = %s;\n", i, n, esz,
                  arr->dir != DIR_IN ? "0xff" : "(unsigned char)(pg_uniform() * 256.0)");
        if (arr->dir != DIR_OUT)
            sb_printf(o, "        if (b.n_%s)\n            memcpy(img.data() + o, b.h_%s.data(), "
                         "b.h_%s.size());\n", n, n, n);
        sb_printf(o, "        PG_CHECK(cudaMemcpy(b.d_%s, img.data(), img.size(), "
                     "cudaMemcpyHostToDevice));\n", n);
        sb_printf(o, "        a.%s = (%s%s *)(b.d_%s + o);\n    }\n", n,
                  arr->dir == DIR_IN ? "const " : "",
                  emit_host_ctype(arr->type), n);
    }
    sb_puts(o, "}\n\n");
}

/* ------------------------------------------------------------------ misalignment */

/* The pointer offsets of the misaligned cases: a row per case, a column per array, each
 * the bytes past the 256-byte boundary of cudaMalloc, so that the pointer is aligned to
 * exactly that many bytes. The launcher requires every array's element alignment, so each
 * array moves by multiples of its own element size, never of another array's:
 *   - for each A of 1, 2, 4, 8 from the smallest element size on: every array aligned to
 *     exactly max(A, its element size); the first such row puts every array at exactly
 *     its element size, the next ones at 2, 4 and 8 bytes where that is more;
 *   - with several arrays, two staggered rows: array i aligned to its element size times
 *     2^((i + phase) mod m), m the number of alignments below 16 bytes it can have, so
 *     that the arrays of one launch differ (the launcher's copy width is the narrowest).
 * A row equal to an earlier one is left out. Returns the rows, each narrays offsets. */
enum { MISALIGN_ROWS = 6 };

static int misalign_rows(arena *a, const spec *s, int *rows[MISALIGN_ROWS])
{
    int min_esz = 16, n = 0;
    for (int i = 0; i < s->narrays; ++i)
        if (ast_type_size(s->arrays[i].type) < min_esz)
            min_esz = ast_type_size(s->arrays[i].type);
    size_t row_bytes = sizeof(int) * (size_t)s->narrays;
    for (int r = 0; r < MISALIGN_ROWS; ++r) {
        int align = 1 << r;   /* rows 0-3: 1, 2, 4, 8 bytes; rows 4 and 5: the staggers */
        if (r < 4 && align < min_esz)
            continue;
        if (r >= 4 && s->narrays < 2)
            break;
        int *row = arena_alloc(a, row_bytes);
        for (int i = 0; i < s->narrays; ++i) {
            int esz = ast_type_size(s->arrays[i].type), m = 0;
            for (int w = esz; w < 16; w *= 2)
                ++m;
            /* a 16-byte element (float4, int4) has no stagger below 16 */
            row[i] = r < 4 ? (align > esz ? align : esz) : m ? esz << ((i + r - 4) % m) : esz;
        }
        bool seen = false;
        for (int k = 0; k < n && !seen; ++k)
            seen = !memcmp(rows[k], row, row_bytes);
        if (!seen)
            rows[n++] = row;
    }
    return n;
}

static void emit_offsets(strbuf *o, const spec *s)
{
    int *rows[MISALIGN_ROWS];
    int n = misalign_rows(o->arena, s, rows);
    sb_puts(o, "/* The pointer offsets of the cases: bytes past cudaMalloc's 256-byte alignment, per\n"
               " * array, so that each pointer is aligned to exactly that (its element size or\n"
               " * more; 0: 256). Row 0 is the aligned case, the others the misaligned ones. */\n");
    sb_printf(o, "enum { PG_NARRAYS = %d, PG_NOFFSETS = %d };\n"
                 "static const size_t pg_offsets[PG_NOFFSETS][PG_NARRAYS] = {\n",
              s->narrays, n + 1);
    for (int r = -1; r < n; ++r) {
        sb_puts(o, "    {");
        for (int i = 0; i < s->narrays; ++i)
            sb_printf(o, "%s%d", i ? ", " : "", r < 0 ? 0 : rows[r][i]);
        sb_puts(o, "},\n");
    }
    sb_puts(o, "};\nstatic const char *const pg_array_names[PG_NARRAYS] = {");
    for (int i = 0; i < s->narrays; ++i)
        sb_printf(o, "%s\"%s\"", i ? ", " : "", s->arrays[i].name);
    sb_puts(o, "};\n\n");
}

/* ------------------------------------------------------------------ comparison */

static void emit_compare_fn(strbuf *o)
{
    sb_puts(o,
        "/* |got - want| <= tol * (|want| + scale), scale the root mean square of the\n"
        " * reference array: rounding differences (a device sum in another order) stay far\n"
        " * below it, while a wrong element is off by about the scale. NaN never passes; equal\n"
        " * infinities do (a min or max over no element is its identity, +-inf). */\n"
        "[[maybe_unused]] static bool pg_close(double got, double want, double tol, double scale)\n{\n"
        "    if (isnan(got) || isnan(want))\n        return false;\n"
        "    if (got == want)\n        return true;\n"
        "    return fabs(got - want) <= tol * (fabs(want) + scale);\n}\n\n"
        "static int pg_failures = 0, pg_passes = 0, pg_left_out = 0;\n\n");
}

/* The GPU suite sets PG_TEST_MAX_WORK where a sanitizer would take too long over the large
 * cases: a case whose sizes multiply to more than it is left out and counted, never
 * passed (unset or empty: no cap). "ring" caps at the larger of the case the forced grids
 * run (three tiles and 7 in each size) and the sizes past the ring (whole 16-byte rows
 * around it), so that every trip count around the ring stays, 16-byte copies included, and
 * the primes go. Any other value than a number above 0 is refused: read as 0, it would
 * leave every case out and pass. */
static void emit_cap_fn(strbuf *o, const spec *s)
{
    sb_printf(o, "static double pg_work(const int64_t *pg_v)\n{\n"
                 "    double work = 1;\n"
                 "    for (int i = 0; i < %d; ++i)\n"
                 "        work *= pg_v[i] > 1 ? (double)pg_v[i] : 1.0;\n"
                 "    return work;\n}\n\n", s->nsizes);
    sb_puts(o, "static double pg_max_work(void)\n{\n"
               "    const char *cap = getenv(\"PG_TEST_MAX_WORK\");\n"
               "    if (!cap || !*cap)\n        return INFINITY;\n"
               "    if (!strcmp(cap, \"ring\"))\n"
               "        return fmax(pg_work(pg_cases[5]), pg_work(pg_cases[8]));\n"
               "    char *end;\n    const double max = strtod(cap, &end);\n"
               "    if (*end || !(max > 0)) {\n"
               "        fprintf(stderr, \"PG_TEST_MAX_WORK='%s' is neither a number above 0 nor "
               "'ring'\\n\", cap);\n        exit(2);\n    }\n    return max;\n}\n\n"
               "static bool pg_left_out_case(const int64_t *pg_v)\n{\n"
               "    if (pg_work(pg_v) <= pg_max_work())\n        return false;\n"
               "    ++pg_left_out;\n    return true;\n}\n\n");
}

static const char *to_double(elem_type t)
{
    switch (t) {
    case TY_HALF: return "(double)__half2float";
    case TY_BF16: return "(double)__bfloat162float";
    default: return "(double)";
    }
}

/* Relative to |want| + rms(reference). Floats: a float sum of K terms in another order
 * differs by about sqrt(K) * 6e-8 of the scale, far below 1e-4; a sum accumulator
 * compares its single value (scale = |want|) at 1e-5, so that one tile more or less in a
 * sum of 2^26 values is still caught. Integers compare exactly. */
static const char *tolerance(elem_type t, bool accum)
{
    switch (t) {
    case TY_FLOAT: return accum ? "1e-5" : "1e-4";
    case TY_DOUBLE: return "1e-12";
    case TY_HALF: case TY_BF16: return "1e-2";
    default: return "0";
    }
}

/* How a lane of type t prints in a failure: its printf format and the value it takes. */
static const char *lane_format(elem_type t)
{
    type_class c = ast_type_class(t);
    return c == TC_FLOAT ? "%.9g" : c == TC_SIGNED ? "%lld" : "%llu";
}

static const char *lane_value(elem_type t)
{
    type_class c = ast_type_class(t);
    return c == TC_FLOAT ? to_double(t) : c == TC_SIGNED ? "(long long)" : "(unsigned long long)";
}

/* Compare output array i's lanes, got[] against want[] (lane pointers the caller declared),
 * and report the first that differs: integers exactly (an int64 does not fit a double),
 * floating lanes within the tolerance of pg_close, scaled by the reference's root mean
 * square where scaled (else 1). */
static void emit_lane_compare(strbuf *o, const spec *s, int i, bool scaled)
{
    const spec_array *arr = &s->arrays[i];
    const elem_type lane = ast_type_lane(arr->type);
    const int lanes = ast_type_lanes(arr->type);
    const char *n = arr->name, *d = lane_value(lane), *fmt = lane_format(lane);
    const bool exact = ast_type_class(lane) != TC_FLOAT;
    if (scaled && !exact)
        sb_printf(o, "        double scale = 0;\n"
                     "        for (size_t e = 0; e < b.n_%s * %d; ++e)\n"
                     "            scale += %s(want[e]) * %s(want[e]);\n"
                     "        scale = b.n_%s ? sqrt(scale / (double)(b.n_%s * %d)) : 0.0;\n",
                  n, lanes, d, d, n, n, lanes);
    sb_printf(o, "        for (size_t e = 0; ok && e < b.n_%s * %d; ++e)\n", n, lanes);
    if (exact)
        sb_puts(o, "            if (got[e] != want[e]) {\n");
    else
        sb_printf(o, "            if (!pg_close(%s(got[e]), %s(want[e]), %s, %s)) {\n", d, d,
                  tolerance(lane, spec_accum_into(s, i) >= 0), scaled ? "scale" : "1.0");
    if (lanes == 1)
        sb_printf(o, "                fprintf(stderr, \"FAIL %%s: %s[%%zu] = %s, reference %s\\n\",\n"
                     "                        what, e, %s(got[e]), %s(want[e]));\n", n, fmt, fmt,
                  d, d);
    else
        sb_printf(o, "                fprintf(stderr, \"FAIL %%s: %s[%%zu] lane %%zu = %s, "
                     "reference %s\\n\",\n                        what, e / %d, e %% %d, "
                     "%s(got[e]), %s(want[e]));\n", n, fmt, fmt, lanes, lanes, d, d);
    sb_puts(o, "                ok = false;\n            }\n");
}

static void emit_check_outputs(strbuf *o, const spec *s)
{
    sb_puts(o, "/* Download the outputs, compare with the reference, check the guard zones. */\n"
               "static bool pg_check(pg_buffers &b, const size_t *off, const char *what)\n{\n"
               "    bool ok = true;\n");
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (arr->dir == DIR_IN)
            continue;
        const char *n = arr->name, *t = ast_type_ctype(ast_type_lane(arr->type));
        int esz = ast_type_size(arr->type);
        sb_printf(o, "    {\n        const size_t off_%s = off[%d];\n"
                     "        std::vector<unsigned char> img(b.n_%s * %d + 16 + PG_GUARD);\n"
                     "        PG_CHECK(cudaMemcpy(img.data(), b.d_%s, img.size(), "
                     "cudaMemcpyDeviceToHost));\n", n, i, n, esz, n);
        sb_printf(o, "        const %s *got = (const %s *)(img.data() + off_%s);\n"
                     "        const %s *want = (const %s *)b.r_%s.data();\n", t, t, n, t, t, n);
        emit_lane_compare(o, s, i, true);
        sb_printf(o, "        for (size_t e = 0; ok && e < off_%s; ++e)\n"
                     "            if (img[e] != 0xff) {\n"
                     "                fprintf(stderr, \"FAIL %%s: byte %%zu before the start of %s was "
                     "written\\n\", what, off_%s - e);\n                ok = false;\n"
                     "            }\n", n, n, n);
        sb_printf(o, "        for (size_t e = off_%s + b.n_%s * %d; ok && e < img.size(); ++e)\n"
                     "            if (img[e] != 0xff) {\n"
                     "                fprintf(stderr, \"FAIL %%s: byte %%zu past the end of %s was "
                     "written\\n\", what, e - off_%s - b.n_%s * %d);\n                ok = false;\n"
                     "            }\n    }\n", n, n, esz, n, n, n, esz);
    }
    sb_puts(o, "    return ok;\n}\n\n");
}

/* ------------------------------------------------------------------ cases */

static void emit_set_sizes(strbuf *o, const spec *s)
{
    sb_printf(o, "static struct %s_args pg_sized(const int64_t *pg_v)\n{\n    struct %s_args a;\n"
                 "    memset(&a, 0, sizeof a);\n    (void)pg_v;\n", s->name, s->name);
    for (int i = 0; i < s->nsizes; ++i)
        sb_printf(o, "    a.%s = pg_v[%d];\n", s->sizes[i], i);
    for (int i = 0; i < s->nparams; ++i) {
        const spec_param *p = &s->params[i];
        /* small positive values: integers in [1, 10], floating ones in [0.5, 1.5) */
        if (ast_type_class(p->type) != TC_FLOAT)
            sb_printf(o, "    a.%s = (%s)(pg_uniform() * 10.0) + 1;\n", p->name,
                      ast_type_ctype(p->type));
        else if (p->type == TY_HALF || p->type == TY_BF16)
            sb_printf(o, "    a.%s = __float2%s((float)(0.5 + pg_uniform()));\n", p->name,
                      p->type == TY_HALF ? "half" : "bfloat16");
        else
            sb_printf(o, "    a.%s = 0.5 + pg_uniform();\n", p->name);
    }
    sb_puts(o, "    return a;\n}\n\n");
}

static void emit_work_items(strbuf *o, const spec *s)
{
    sb_printf(o, "static int64_t pg_work_items(const struct %s_args &a)\n{\n    return ", s->name);
    emit_ntiles(o, s, "a.");
    sb_puts(o, ";\n}\n\n");
}

/* The unit of a size symbol: the tile extent of the tile array's dimension it sizes, the
 * step of the `steps` loop it bounds, or 1. Test sizes sit around multiples of it. */
static long long size_unit(const spec *s, const char *name)
{
    const spec_array *ta = &s->arrays[s->tile_array];
    for (int d = 0; d < ta->rank; ++d)
        if (ta->dims[d].name && strcmp(ta->dims[d].name, name) == 0)
            return s->tile[d];
    if (s->has_steps && s->step_bound.name && strcmp(s->step_bound.name, name) == 0)
        return s->step_by;
    return 1;
}

/* The side of the large case: about 2^26 elements in the tile array (2^20 with an inner
 * steps loop, whose reference costs a product more). */
static long long large_side(const spec *s)
{
    long long want = s->has_steps ? 1LL << 20 : 1LL << 26, side = 2, total = 1;
    if (s->tile_rank == 1)
        return want;
    do {
        side *= 2;
        total = side;
        for (int d = 1; d < s->tile_rank; ++d)
            total *= side;
    } while (total < want);
    return side;
}

/* One row of sizes per case: 0, 1, unit-1, unit, unit+1, uneven sizes, primes, sizes
 * past the ring in multiples of 16 elements, and the large case last (PG_TEST_QUICK
 * leaves it out). The others give some size that is odd, so rows of 16 bytes and with
 * them bulk and tensor copies (and what a body does only on those, gemm_bf16's wgmma)
 * would meet only trip counts below the ring's slots without the eighth row. */
static void emit_size_cases(strbuf *o, const spec *s)
{
    static const long long primes[3][3] = {{1000003}, {1009, 1013}, {101, 103, 107}};
    int n = s->nsizes ? s->nsizes : 1;
    long long past_ring = s->ring_depth + 1;
    sb_printf(o, "static const int64_t pg_cases[][%d] = {\n", n);
    for (int c = 0; c < 10; ++c) {
        sb_puts(o, "    {");
        for (int i = 0; i < n; ++i) {
            long long u = s->nsizes ? size_unit(s, s->sizes[i]) : 1;
            long long big = u > 1 && !(s->has_steps && u == s->step_by) ? large_side(s) + 3 + 2 * i
                            : s->has_steps ? 515 : 64 + i;
            long long v = c == 0 ? 0 : c == 1 ? 1 : c == 2 ? u - 1 : c == 3 ? u : c == 4 ? u + 1
                        : c == 5 ? 3 * u + 7 + 2 * i : c == 6 ? 2 * u - 1 + i
                        : c == 7 ? primes[s->tile_rank - 1][i % s->tile_rank]
                        : c == 8 ? (u + 15) / 16 * 16 * past_ring + 16 * (i + 1) : big;
            const long long bound = s->nsizes ? spec_size_bound(s, s->sizes[i]) : 0;
            if (bound && v > bound)
                v = bound;   /* the launcher refuses more (emit_bound_refusals) */
            sb_printf(o, "%s%lld", i ? ", " : "", v < 1 && c ? 1 : v);
        }
        sb_puts(o, "},\n");
    }
    sb_puts(o, "};\n\n");
}

/* One case: sizes, pointer offsets (a row of pg_offsets), forced grid (0: planned). Runs
 * the reference once, the launcher twice where there are accumulators (the second run
 * must give the same bits). The case is named by its sizes, the offsets that are not 0 and
 * the grid. */
/* The reference's view of an array (h): the input as generated, or a copy of an output
 * (r_NAME) that the reference writes. */
static void emit_reference_array(strbuf *o, const spec_array *arr)
{
    const char *n = arr->name;
    if (arr->dir != DIR_IN)
        sb_printf(o, "    b.r_%s = b.h_%s;\n    b.r_%s.resize(b.h_%s.size());\n", n, n, n, n);
    sb_printf(o, "    h.%s = (decltype(h.%s))(b.%c_%s.data());\n", n, n,
              arr->dir == DIR_IN ? 'h' : 'r', n);
}

/* The launch captured in a CUDA graph on a stream of its own (the launcher's promise: it
 * neither allocates nor synchronizes), the graph run twice with the arrays uploaded
 * afresh between: the second run must redo all the work, so nothing a run leaves behind
 * (a tile counter) may stand in for what the launch sets up itself. The stream does not
 * wait for the legacy stream, whose pageable uploads may still be landing after
 * cudaMemcpy returned: the device is synchronized first. */
static void emit_graph_twice(strbuf *o, const spec *s)
{
    sb_printf(o, "static void pg_graph_twice(pg_buffers &b, struct %s_args &a, const size_t *off,\n"
                 "                           const pipert_launch_opts &opts)\n{\n"
                 "    cudaStream_t st;\n    cudaGraph_t g;\n    cudaGraphExec_t ge;\n"
                 "    PG_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));\n"
                 "    PG_CHECK(cudaDeviceSynchronize());\n"
                 "    PG_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));\n"
                 "    PG_CHECK(%s_launch_ex(&a, st, &opts));\n"
                 "    PG_CHECK(cudaStreamEndCapture(st, &g));\n"
                 "    PG_CHECK(cudaGraphInstantiate(&ge, g, 0));\n"
                 "    PG_CHECK(cudaGraphLaunch(ge, st));\n"
                 "    PG_CHECK(cudaStreamSynchronize(st));\n"
                 "    pg_upload(b, a, off);\n"
                 "    PG_CHECK(cudaDeviceSynchronize());\n"
                 "    PG_CHECK(cudaGraphLaunch(ge, st));\n"
                 "    PG_CHECK(cudaStreamSynchronize(st));\n"
                 "    PG_CHECK(cudaGraphExecDestroy(ge));\n    PG_CHECK(cudaGraphDestroy(g));\n"
                 "    PG_CHECK(cudaStreamDestroy(st));\n}\n\n", s->name, s->name);
}

static void emit_run_case(strbuf *o, const spec *s)
{
    emit_cap_fn(o, s);
    emit_graph_twice(o, s);
    sb_printf(o, "static void pg_case(const int64_t *pg_v, int mis, unsigned grid, bool graph = false)\n{\n"
                 "    if (pg_left_out_case(pg_v))\n        return;\n"
                 "    const size_t *off = pg_offsets[mis];\n"
                 "    char what[300];\n    size_t w = (size_t)snprintf(what, sizeof what, \"sizes\");\n"
                 "    for (int i = 0; i < %d && w < sizeof what; ++i)\n"
                 "        w += (size_t)snprintf(what + w, sizeof what - w, \" %%lld\", (long long)pg_v[i]);\n"
                 "    for (int i = 0; i < PG_NARRAYS && mis && w < sizeof what; ++i)\n"
                 "        if (off[i])\n"
                 "            w += (size_t)snprintf(what + w, sizeof what - w, \" %%s+%%zu\", pg_array_names[i], off[i]);\n"
                 "    if (w < sizeof what)\n"
                 "        snprintf(what + w, sizeof what - w, \" grid=%%u%%s\", grid, graph ? \" graph\" : \"\");\n"
                 "    struct %s_args a = pg_sized(pg_v);\n    pg_buffers b;\n    pg_alloc(b, a);\n"
                 "    struct %s_args h = a;\n", s->nsizes, s->name, s->name);
    for (int i = 0; i < s->narrays; ++i)
        emit_reference_array(o, &s->arrays[i]);
    sb_puts(o, "    pg_reference(&h);\n    pg_upload(b, a, off);\n"
               "    pipert_launch_opts opts;\n    memset(&opts, 0, sizeof opts);\n"
               "    opts.grid_blocks = grid;\n    void *ws = NULL;\n");
    if (s->naccums)
        sb_printf(o, "    a.workspace_bytes = %s_workspace_bytes(&a, &opts);\n"
                     "    PG_CHECK(cudaMalloc(&ws, a.workspace_bytes));\n    a.workspace = ws;\n",
                  s->name);
    else if (plan_has_workspace(s))   /* every third case without: the static order */
        sb_printf(o, "    static unsigned pg_nth;\n"
                     "    a.workspace_bytes = graph || ++pg_nth %% 3 ? %s_workspace_bytes(&a, &opts) : 0;\n"
                     "    if (a.workspace_bytes)\n"
                     "        PG_CHECK(cudaMalloc(&ws, a.workspace_bytes));\n"
                     "    a.workspace = ws;\n", s->name);
    sb_printf(o, "    if (graph)\n        pg_graph_twice(b, a, off, opts);\n    else\n"
                 "        PG_CHECK(%s_launch_ex(&a, 0, &opts));\n    PG_CHECK(cudaDeviceSynchronize());\n"
                 "    bool ok = pg_check(b, off, what);\n", s->name);
    for (int i = 0; i < s->naccums; ++i) {
        const char *n = s->arrays[s->accums[i].into].name;
        int esz = ast_type_size(s->accums[i].type) * s->accums[i].extent;
        sb_printf(o, "    if (ok) {\n        static unsigned char first[%d], again[%d];\n"
                     "        PG_CHECK(cudaMemcpy(first, a.%s, %d, cudaMemcpyDeviceToHost));\n"
                     "        PG_CHECK(%s_launch_ex(&a, 0, &opts));\n"
                     "        PG_CHECK(cudaMemcpy(again, a.%s, %d, cudaMemcpyDeviceToHost));\n"
                     "        if (memcmp(first, again, %d)) {\n"
                     "            fprintf(stderr, \"FAIL %%s: %s differs between two runs\\n\", what);\n"
                     "            ok = false;\n        }\n    }\n",
                  esz, esz, n, esz, s->name, n, esz, esz, n);
    }
    sb_puts(o, "    if (ws)\n        PG_CHECK(cudaFree(ws));\n    pg_free(b);\n"
               "    if (ok)\n        ++pg_passes;\n    else\n        ++pg_failures;\n}\n\n");
}

/* ------------------------------------------------------------------ host streaming */

/* The devices a multi-device plan names: every device (at most 4), or device 0 twice
 * where there is one, so that the split over devices runs on any machine. */
static void emit_stream_devices(strbuf *o)
{
    sb_puts(o, "/* Buffers kept from run to run by the plans of how 2 and 6, over sizes that grow\n"
               " * and shrink. */\nstatic pipert_stream_cache *pg_cache;\n\n"
               "static int pg_stream_devices(int devs[4])\n{\n    int n = 0;\n"
               "    PG_CHECK(cudaGetDeviceCount(&n));\n    if (n < 2) {\n"
               "        devs[0] = devs[1] = 0;\n        return 2;\n    }\n"
               "    n = n < 4 ? n : 4;\n    for (int d = 0; d < n; ++d)\n        devs[d] = d;\n"
               "    return n;\n}\n\n");
}

/* The outputs that are (accums) or are not accumulators' outputs. */
static bool rerun_output(const spec *s, int i, bool accums)
{
    return s->arrays[i].dir != DIR_IN && (spec_accum_into(s, i) >= 0) == accums;
}

/* Where cond holds (always: NULL), run NAME_stream again under plan, over fresh copies
 * of the outputs (those of accumulators, or the others), and compare the bits with the
 * first run's. */
static void emit_rerun(strbuf *o, const spec *s, const char *cond, const char *plan,
                       bool accums, const char *against)
{
    bool any = false;
    for (int i = 0; i < s->narrays; ++i)
        any = any || rerun_output(s, i, accums);
    if (!any)
        return;
    if (cond)
        sb_printf(o, "    if (%s) {\n", cond);
    else
        sb_puts(o, "    {\n");
    sb_printf(o, "        struct %s_args one = run;\n", s->name);
    for (int i = 0; i < s->narrays; ++i) {
        const char *n = s->arrays[i].name;
        if (rerun_output(s, i, accums))
            sb_printf(o, "        pg_pages o_%s(b.h_%s);\n        one.%s = (decltype(one.%s))o_%s.p;\n",
                      n, n, n, n, n);
    }
    sb_printf(o, "        PG_CHECK(%s_stream(&one, %s));\n", s->name, plan);
    for (int i = 0; i < s->narrays; ++i) {
        const char *n = s->arrays[i].name;
        if (rerun_output(s, i, accums))
            sb_printf(o, "        if (o_%s.n && memcmp(o_%s.p, p_%s, o_%s.n)) {\n"
                         "            fprintf(stderr, \"FAIL %%s: %s differs from %s\\n\", what);\n"
                         "            ok = false;\n        }\n", n, n, n, n, n, against);
    }
    sb_puts(o, "    }\n");
}

/* A multi-device run (how 5 and 6) gives the same bits as the run on the current device
 * alone. An accumulator's result depends on the chunks (their partials are folded in
 * chunk order), which the plans of one and of several devices may cut differently: it
 * gives the same bits as a second run of the same plan. */
static void emit_same_bits(strbuf *o, const spec *s)
{
    emit_rerun(o, s, "how >= 5", "NULL", false, "the one-device run");
    emit_rerun(o, s, NULL, "how ? &plan : NULL", true, "a second run of the same plan");
}

/* NAME_stream over host arrays, checked against the reference: plans chosen by the runtime
 * and forced (1 to 4 streams, chunks of a tile, of a tile plus a row and of a tile less
 * one, priorities), pageable host memory registered by the runtime, copied as it is, and
 * pinned memory (pipert_host_alloc); over several devices (how 5: the runtime's plan;
 * how 6: 2 streams a device, chunks of a tile), the same bits as on one. */
static void emit_stream_case(strbuf *o, const spec *s)
{
    long long tile0 = s->tile[0] * (s->march ? s->march : 1);
    emit_stream_devices(o);
    sb_puts(o, "/* A host array of whole 64 KiB pages: the runtime's page-locking of one array never\n"
               " * touches a page of another (cudaHostRegister refuses a page registered twice). */\n"
               "struct pg_pages {\n    void *p;\n    size_t n;\n"
               "    explicit pg_pages(const std::vector<unsigned char> &v) : n(v.size())\n    {\n"
               "        p = aligned_alloc(65536, (n / 65536 + 1) * 65536);\n"
               "        if (!p) {\n            fprintf(stderr, \"out of host memory\\n\");\n            exit(2);\n        }\n"
               "        if (n)\n            memcpy(p, v.data(), n);\n    }\n"
               "    ~pg_pages() { free(p); }\n};\n\n");
    sb_printf(o, "static void pg_stream_case(const int64_t *pg_v, int how)\n{\n"
                 "    char what[120];\n"
                 "    snprintf(what, sizeof what, \"%s_stream how=%%d sizes %%lld\", how, "
                 "(long long)pg_v[0]);\n"
                 "    struct %s_args a = pg_sized(pg_v);\n    pg_buffers b;\n    pg_alloc(b, a);\n"
                 "    struct %s_args h = a, run = a;\n"
                 "    pipert_host_buffer pinned[%d];\n    memset(pinned, 0, sizeof pinned);\n",
              s->name, s->name, s->name, s->narrays);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        const char *n = arr->name;
        emit_reference_array(o, arr);
        /* the run's own copy, pinned for how 3 */
        sb_printf(o, "    pg_pages s_%s(b.h_%s);\n    void *p_%s = s_%s.p;\n"
                     "    if (how == 3 && s_%s.n) {\n"
                     "        PG_CHECK(pipert_host_alloc(&pinned[%d], s_%s.n));\n"
                     "        memcpy(pinned[%d].ptr, s_%s.p, s_%s.n);\n"
                     "        p_%s = pinned[%d].ptr;\n    }\n"
                     "    run.%s = (decltype(run.%s))p_%s;\n", n, n, n, n, n, i, n, i, n, n, n, i,
                  n, n, n);
    }
    sb_printf(o, "    pg_reference(&h);\n"
                 "    pipert_stream_plan plan;\n    memset(&plan, 0, sizeof plan);\n"
                 "    static const int prio[2] = {-1, 0};\n"
                 "    int devs[4];\n"
                 "    plan.streams_per_device = how <= 4 ? how : how == 6 ? 2 : 0;\n"
                 "    plan.chunk_elements = how == 1 || how == 6 ? %lld : how == 2 ? %lld : how == 4 ? %lld : 0;\n"
                 "    if (how == 3) {\n        plan.priorities = prio;\n        plan.npriorities = 2;\n    }\n"
                 "    if (how == 4)\n        plan.host_register = PIPERT_REGISTER_NEVER;\n"
                 "    if (how >= 5) {\n        plan.ndevices = pg_stream_devices(devs);\n"
                 "        plan.devices = devs;\n    }\n"
                 "    if (how == 2 || how == 6)\n        plan.cache = pg_cache;\n"
                 "    PG_CHECK(%s_stream(&run, how ? &plan : NULL));\n    bool ok = true;\n",
              tile0, tile0 + 1, tile0 > 1 ? tile0 - 1 : 1, s->name);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (arr->dir == DIR_IN)
            continue;
        const char *n = arr->name, *t = ast_type_ctype(ast_type_lane(arr->type));
        sb_printf(o, "    {\n        const %s *got = (const %s *)p_%s;\n"
                     "        const %s *want = (const %s *)b.r_%s.data();\n", t, t, n, t, t, n);
        emit_lane_compare(o, s, i, false);
        sb_puts(o, "    }\n");
    }
    emit_same_bits(o, s);
    sb_printf(o, "    for (int i = 0; i < %d; ++i)\n        PG_CHECK(pipert_host_release(&pinned[i]));\n"
                 "    pg_free(b);\n    if (ok)\n        ++pg_passes;\n    else\n        ++pg_failures;\n}\n\n",
              s->narrays);
}

/* The streaming cases main runs: every size under the runtime's own plan, and the forced
 * plans over the sizes around a tile. */
static void emit_stream_calls(strbuf *o)
{
    sb_puts(o, "    /* NAME_stream: the runtime's plan at every size, forced plans around a tile. */\n"
               "    for (size_t c = 0; c < ncases; ++c)\n"
               "        if (!(quick && c == ncases - 1))\n"
               "            pg_stream_case(pg_cases[c], 0);\n"
               "    PG_CHECK(pipert_stream_cache_create(&pg_cache));\n"
               "    int devs[4];\n    const int ndevs = pg_stream_devices(devs);\n"
               "    printf(\"multi-device streaming cases over devices\");\n"
               "    for (int d = 0; d < ndevs; ++d)\n        printf(\" %d\", devs[d]);\n"
               "    printf(\"\\n\");\n"
               "    for (int how = 1; how <= 6; ++how) {\n"
               "        const size_t around[] = {0, 1, 3, 4, 5, 7};\n"
               "        for (size_t c = 0; c < sizeof around / sizeof around[0]; ++c)\n"
               "            pg_stream_case(pg_cases[around[c]], how);\n"
               "        if (!quick)\n            pg_stream_case(pg_cases[ncases - 1], how);\n    }\n"
               "    PG_CHECK(pipert_stream_cache_destroy(pg_cache));\n");
}

/* Packed rows (spec_row_packs): each pack at the widest rows it takes, one wider (the
 * next pack's), and one narrower over prime rows, the first also on one and two blocks. */
static void emit_pack_cases(strbuf *o, const emit_unit *u)
{
    const spec *s = u->spec;
    if (u->npacks < 2)
        return;
    int i = 0;
    while (strcmp(s->sizes[i], s->tile_bounded[s->tile_rank - 1]))
        ++i;
    sb_puts(o, "    /* Packed rows: each pack's widest rows, one more, one less over prime "
               "rows. */\n");
    for (int p = 1; p < u->npacks; ++p) {
        const long long w = u->packed[(p - 1) * u->nscheds]->spec->tile[1];
        const long long width[3] = {w, w + 1, w - 1};
        sb_printf(o, "    {\n        int64_t v[%d];\n", s->nsizes);
        for (int k = 0; k < 3; ++k) {
            sb_printf(o, "        memcpy(v, pg_cases[%d], sizeof v);\n        v[%d] = %lld;\n"
                         "        pg_case(v, 0, 0);\n", k < 2 ? 5 : 7, i, width[k]);
            if (k == 0)
                sb_puts(o, "        pg_case(v, 0, 1);\n        pg_case(v, 0, 2);\n");
        }
        sb_puts(o, "    }\n");
    }
}

/* A size past the bound of a tile that spans it whole is refused, with everything else
 * in order (arrays of that size, a workspace): what a launch without the check would run. */
static void emit_bound_refusals(strbuf *o, const spec *s)
{
    for (int i = 0; i < s->nsizes; ++i) {
        const long long bound = spec_size_bound(s, s->sizes[i]);
        if (!bound)
            continue;
        sb_printf(o, "    {\n        int64_t v[%d];\n        memcpy(v, pg_cases[1], sizeof v);\n"
                     "        v[%d] = %lld;\n        struct %s_args a = pg_sized(v);\n"
                     "        pg_buffers b;\n        pg_alloc(b, a);\n"
                     "        pg_upload(b, a, pg_offsets[0]);\n", s->nsizes, i, bound + 1,
                  s->name);
        if (plan_has_workspace(s))
            sb_printf(o, "        a.workspace_bytes = %s_workspace_bytes(&a, NULL);\n"
                         "        PG_CHECK(cudaMalloc(&a.workspace, a.workspace_bytes ? "
                         "a.workspace_bytes : 1));\n", s->name);
        sb_printf(o, "        const cudaError_t e = %s_launch(&a, 0);\n"
                     "        if (e == cudaErrorInvalidValue) {\n            ++pg_passes;\n"
                     "        } else {\n            fprintf(stderr, \"FAIL %s = %lld (past "
                     "its bound %lld): %%s, not cudaErrorInvalidValue\\n\", "
                     "pipert_error_string(e));\n            ++pg_failures;\n        }\n"
                     "        PG_CHECK(cudaDeviceSynchronize());\n", s->name, s->sizes[i],
                  bound + 1, bound);
        if (plan_has_workspace(s))
            sb_puts(o, "        PG_CHECK(cudaFree(a.workspace));\n");
        sb_puts(o, "        pg_free(b);\n    }\n");
    }
}

static void emit_main(strbuf *o, const emit_unit *u)
{
    const spec *s = u->spec;
    sb_printf(o, "int main(void)\n{\n    const int S = %d;\n", spec_ring_slots(s));
    sb_printf(o, "    /* No GPU (or no driver): \"skipped\", the status test harnesses read as such. */\n"
                 "    int pg_ndev = 0;\n    cudaError_t pg_dev = cudaGetDeviceCount(&pg_ndev);\n"
                 "    if (pg_dev == cudaErrorNoDevice || pg_dev == cudaErrorInsufficientDriver\n"
                 "        || pg_dev == cudaErrorStubLibrary || (pg_dev == cudaSuccess && pg_ndev == 0)) {\n"
                 "        printf(\"%s: skipped: no CUDA device (%%s)\\n\",\n"
                 "               pg_dev == cudaSuccess ? \"none found\" : pipert_error_string(pg_dev));\n"
                 "        return 77;\n    }\n", s->name);
    sb_puts(o, "    /* PG_TEST_QUICK (set under the sanitizers) leaves out the large case. */\n"
               "    const bool quick = getenv(\"PG_TEST_QUICK\") != NULL;\n"
               "    const size_t ncases = sizeof pg_cases / sizeof pg_cases[0];\n"
               "    for (size_t c = 0; c < ncases; ++c)\n"
               "        if (!(quick && c == ncases - 1))\n"
               "            pg_case(pg_cases[c], 0, 0);\n");
    sb_puts(o, "    /* Misaligned pointers: every copy width and the element-size fallback, each\n"
               "     * array by its own element size. */\n"
               "    for (int mis = 1; mis < PG_NOFFSETS; ++mis) {\n"
               "        pg_case(pg_cases[4], mis, 0);\n"
               "        pg_case(pg_cases[7], mis, 0);\n    }\n");
    sb_puts(o, "    /* Forced grids: blocks with 0, 1, < stages, = stages and > stages work items. */\n"
               "    const int64_t *mid = pg_cases[5];\n"
               "    const int64_t items = pg_work_items(pg_sized(mid));\n"
               "    const unsigned grids[] = {(unsigned)items + 5, (unsigned)items,\n"
               "        (unsigned)((items + S - 2) / (S > 1 ? S - 1 : 1)), (unsigned)((items + S - 1) / S),\n"
               "        (unsigned)((items + S) / (S + 1)), 7, 2, 1};\n"
               "    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; ++i)\n"
               "        if (grids[i] > 0)\n            pg_case(mid, 0, grids[i]);\n"
               "    pg_case(pg_cases[2], 0, 3);\n"
               "    /* 16-byte rows over several work items a block: parities across items. */\n"
               "    pg_case(pg_cases[8], 0, 2);\n"
               "    /* Captured in a CUDA graph, run twice. */\n"
               "    pg_case(pg_cases[5], 0, 0, true);\n");
    if (s->host_stream)
        emit_stream_calls(o);
    emit_pack_cases(o, u);
    emit_bound_refusals(o, s);
    sb_printf(o, "    printf(\"%s: %%d passed, %%d failed\", pg_passes, pg_failures);\n"
                 "    if (pg_left_out)\n"
                 "        printf(\", %%d left out over PG_TEST_MAX_WORK\", pg_left_out);\n"
                 "    printf(\"\\n\");\n"
                 "    return pg_failures ? 1 : 0;\n}\n", s->name);
}

void emit_test(strbuf *o, const emit_unit *u)
{
    const spec *s = u->spec;
    emit_common(o, u, "Differential test");
    emit_reference(o, u);
    emit_buffers(o, s);
    emit_offsets(o, s);
    emit_alloc(o, s);
    emit_free(o, s);
    emit_upload(o, s);
    emit_compare_fn(o);
    emit_check_outputs(o, s);
    emit_set_sizes(o, s);
    emit_work_items(o, s);
    emit_size_cases(o, s);
    emit_run_case(o, s);
    if (s->host_stream)
        emit_stream_case(o, s);
    emit_main(o, u);
    emit_resolve_lines(o);
}

/* ------------------------------------------------------------------ bench */

/* Bytes the pipeline must move: inputs read once (rbytes), outputs written once (wbytes);
 * an inout array counts in both. */
static void emit_bytes_moved(strbuf *o, const spec *s)
{
    sb_puts(o, "    double rbytes = 0, wbytes = 0;\n");
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (arr->dir != DIR_OUT)
            sb_printf(o, "    rbytes += (double)(b.n_%s) * %d;\n", arr->name, ast_type_size(arr->type));
        if (arr->dir != DIR_IN)
            sb_printf(o, "    wbytes += (double)(b.n_%s) * %d;\n", arr->name, ast_type_size(arr->type));
    }
    sb_puts(o, "    const double bytes = rbytes + wbytes;\n");
}

/* The same-shape reference: a plain kernel that reads and writes as many bytes as the
 * pipeline, so that a kernel that mostly reads (or writes) is held to what this GPU does
 * for that mix, not to a copy (on an H100 a plain kernel reads at about 1.03 of
 * cudaMemcpy's rate, writes at 1.05 and copies at 0.94). Everything that makes a plain
 * kernel fast: 4 x 16-byte accesses a thread an iteration, all loads issued before any
 * use, grid-stride, and the launch shape that timed fastest here. */
static const char sameshape_kernel[] =
    "/* One grid-stride pass over 16-byte words [k, n) of in (R) and out (W): copied\n"
    " * where both, else only read (folded into the result, so that no load can be\n"
    " * dropped) or only written with fill. */\n"
    "template <bool R, bool W>\n"
    "__device__ __forceinline__ unsigned pg_ss_pass(const uint4 *__restrict__ in, uint4 *__restrict__ out,\n"
    "                                               size_t k, size_t n, uint4 fill)\n{\n"
    "    const size_t stride = (size_t)gridDim.x * blockDim.x;\n"
    "    unsigned acc = 0;\n"
    "    k += (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    for (; k + 3 * stride < n; k += 4 * stride) {\n"
    "        uint4 v[4];\n"
    "#pragma unroll\n"
    "        for (int u = 0; u < 4; ++u) {\n"
    "            if constexpr (R)\n                v[u] = __ldg(&in[k + u * stride]);\n"
    "            else\n                v[u] = fill;\n"
    "        }\n"
    "#pragma unroll\n"
    "        for (int u = 0; u < 4; ++u) {\n"
    "            if constexpr (W)\n                out[k + u * stride] = v[u];\n"
    "            acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;\n"
    "        }\n"
    "    }\n"
    "    for (; k < n; k += stride) {\n"
    "        uint4 v = fill;\n"
    "        if constexpr (R)\n            v = __ldg(&in[k]);\n"
    "        if constexpr (W)\n            out[k] = v;\n"
    "        acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
    "    }\n"
    "    return acc;\n}\n\n"
    "/* Reads rn words of in and writes wn of out in one pass: the first min(rn, wn) copied,\n"
    " * the rest read or written. The xor of what was read is stored only if it equals key,\n"
    " * a value the compiler cannot know (and a buffer of ones never gives). */\n"
    "__global__ void pg_sameshape(const uint4 *__restrict__ in, size_t rn, uint4 *__restrict__ out,\n"
    "                             size_t wn, unsigned key, unsigned *sink)\n{\n"
    "    const size_t both = rn < wn ? rn : wn;\n"
    "    const uint4 fill = make_uint4(key, key + 1, key + 2, key + 3);\n"
    "    unsigned acc = pg_ss_pass<true, true>(in, out, 0, both, fill);\n"
    "    if (rn > both)\n"
    "        acc ^= pg_ss_pass<true, false>(in, out, both, rn, fill);\n"
    "    else\n"
    "        acc ^= pg_ss_pass<false, true>(in, out, both, wn, fill);\n"
    "    if (acc == key)\n        *sink = acc;\n}\n\n";

static const char sameshape_host[] =
    "/* A run of the same-shape kernel: its buffers, their 16-byte words, its launch shape. */\n"
    "struct pg_ss {\n    const uint4 *in;\n    size_t rn;\n    uint4 *out;\n    size_t wn;\n"
    "    unsigned *sink;\n    int blocks, threads;\n};\n\n"
    "/* rbytes of in and wbytes of out, whole 16-byte words (cudaMalloc aligns to 256). */\n"
    "static pg_ss pg_ss_over(const void *in, double rbytes, void *out, double wbytes)\n{\n"
    "    pg_ss s = {(const uint4 *)in, (size_t)(rbytes / 16), (uint4 *)out, (size_t)(wbytes / 16),\n"
    "               NULL, 0, 0};\n"
    "    PG_CHECK(cudaMalloc(&s.sink, sizeof *s.sink));\n    return s;\n}\n\n"
    "static void pg_ss_launch(const pg_ss &s)\n{\n"
    "    pg_sameshape<<<s.blocks, s.threads>>>(s.in, s.rn, s.out, s.wn, 0x9e3779b9u, s.sink);\n"
    "    PG_CHECK(cudaGetLastError());\n}\n\n"
    "/* Milliseconds of run() between two events on the default stream. */\n"
    "template <class F>\n"
    "static float pg_event_ms(cudaEvent_t e0, cudaEvent_t e1, F run)\n{\n"
    "    PG_CHECK(cudaEventRecord(e0));\n    run();\n"
    "    PG_CHECK(cudaEventRecord(e1));\n    PG_CHECK(cudaEventSynchronize(e1));\n"
    "    float ms;\n    PG_CHECK(cudaEventElapsedTime(&ms, e0, e1));\n    return ms;\n}\n\n"
    "/* The fastest launch shape on this GPU, SMs x {2, 4, 8} blocks of 256, 512 or 1024\n"
    " * threads (at most 2048 an SM), each the median of 9 runs after 3: the reference is\n"
    " * the best a plain kernel does, not one guess at it. */\n"
    "static void pg_ss_pick(pg_ss &s, cudaEvent_t e0, cudaEvent_t e1)\n{\n"
    "    int dev, sms;\n    PG_CHECK(cudaGetDevice(&dev));\n"
    "    PG_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));\n"
    "    static const int per_sm[3] = {2, 4, 8}, threads[3] = {256, 512, 1024};\n"
    "    float best = INFINITY;\n    int blocks = sms * 8, th = 256;\n"
    "    for (int p : per_sm)\n        for (int t : threads) {\n"
    "            if (p * t > 2048)\n                continue;\n"
    "            s.blocks = sms * p;\n            s.threads = t;\n"
    "            std::vector<float> ms;\n"
    "            for (int r = 0; r < 12; ++r) {\n"
    "                const float m = pg_event_ms(e0, e1, [&] { pg_ss_launch(s); });\n"
    "                if (r >= 3)\n                    ms.push_back(m);\n            }\n"
    "            if (pg_median(ms) < best) {\n"
    "                best = pg_median(ms);\n                blocks = s.blocks;\n                th = t;\n"
    "            }\n        }\n"
    "    s.blocks = blocks;\n    s.threads = th;\n}\n\n";

/* `bench --stream-ref [MIB]`: the same-shape kernel alone, reading, writing and copying MIB
 * MiB (1024) against cudaMemcpy device to device and cudaMemset in this process, medians
 * of 30 after 5 in turns: whether the reference is as fast as a plain kernel gets on this
 * GPU, in a few seconds. */
static const char stream_ref_mode[] =
    "static int pg_stream_ref(size_t mib)\n{\n"
    "    const size_t n = mib << 20;\n    unsigned char *c0, *c1;\n"
    "    PG_CHECK(cudaMalloc(&c0, n));\n    PG_CHECK(cudaMalloc(&c1, n));\n"
    "    PG_CHECK(cudaMemset(c0, 1, n));\n"
    "    cudaEvent_t e0, e1;\n    PG_CHECK(cudaEventCreate(&e0));\n    PG_CHECK(cudaEventCreate(&e1));\n"
    "    static const char *const mode[3] = {\"read\", \"write\", \"copy\"};\n"
    "    for (int m = 0; m < 3; ++m) {\n"
    "        pg_ss s = pg_ss_over(c0, m != 1 ? (double)n : 0, c1, m != 0 ? (double)n : 0);\n"
    "        pg_ss_pick(s, e0, e1);\n"
    "        std::vector<float> tk, tc, tm;\n"
    "        for (int r = 0; r < 35; ++r) {\n"
    "            const float k = pg_event_ms(e0, e1, [&] { pg_ss_launch(s); });\n"
    "            const float c = pg_event_ms(e0, e1, [&] {\n"
    "                PG_CHECK(cudaMemcpy(c1, c0, n, cudaMemcpyDeviceToDevice)); });\n"
    "            const float z = pg_event_ms(e0, e1, [&] { PG_CHECK(cudaMemset(c1, 0, n)); });\n"
    "            if (r >= 5) {\n                tk.push_back(k);\n                tc.push_back(c);\n"
    "                tm.push_back(z);\n            }\n        }\n"
    "        const double gk = 16.0 * (double)(s.rn + s.wn) / pg_median(tk) / 1e6;\n"
    "        const double gc = 2.0 * (double)n / pg_median(tc) / 1e6, gz = (double)n / pg_median(tm) / 1e6;\n"
    "        printf(\"STREAM_REF %-5s bytes=%zu blocks=%d threads=%d %.1f GB/s memcpy=%.1f GB/s ratio=%.3f \"\n"
    "               \"memset=%.1f GB/s memset_ratio=%.3f\\n\", mode[m], n, s.blocks, s.threads, gk, gc,\n"
    "               gk / gc, gz, gz / gc);\n"
    "        PG_CHECK(cudaFree(s.sink));\n    }\n"
    "    PG_CHECK(cudaFree(c0));\n    PG_CHECK(cudaFree(c1));\n    return 0;\n}\n\n";

/* Host streaming, measured: H2D, D2H and the kernel over the whole problem on one device,
 * each alone on one stream (medians after two warm-ups), from the page-locked host
 * arrays hb; bound = the largest of the three. */
static void emit_stream_alone(strbuf *o, const spec *s)
{
    sb_printf(o, "static double pg_alone(int dev, const struct %s_args &hs, const pipert_host_buffer *hb)\n{\n"
                 "    PG_CHECK(cudaSetDevice(dev));\n    struct %s_args a = hs;\n    void *d[%d];\n"
                 "    for (int i = 0; i < %d; ++i)\n"
                 "        PG_CHECK(cudaMalloc(&d[i], hb[i].bytes ? hb[i].bytes : 1));\n",
              s->name, s->name, s->narrays, s->narrays);
    for (int i = 0; i < s->narrays; ++i)
        sb_printf(o, "    a.%s = (decltype(a.%s))d[%d];\n", s->arrays[i].name, s->arrays[i].name, i);
    sb_puts(o, "    cudaStream_t st;\n    PG_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));\n"
               "    pipert_timer tm;\n    PG_CHECK(pipert_timer_create(&tm));\n"
               "    std::vector<float> t[3];\n    for (int r = 0; r < 12; ++r) {\n        float ms;\n"
               "        PG_CHECK(pipert_timer_start(&tm, st));\n");
    for (int i = 0; i < s->narrays; ++i)
        if (s->arrays[i].dir != DIR_OUT)
            sb_printf(o, "        PG_CHECK(cudaMemcpyAsync(d[%d], hb[%d].ptr, hb[%d].bytes, "
                         "cudaMemcpyHostToDevice, st));\n", i, i, i);
    sb_puts(o, "        PG_CHECK(pipert_timer_stop(&tm, st));\n        PG_CHECK(pipert_timer_elapsed(&tm, &ms));\n"
               "        t[0].push_back(ms);\n        PG_CHECK(pipert_timer_start(&tm, st));\n");
    for (int i = 0; i < s->narrays; ++i)
        if (s->arrays[i].dir != DIR_IN)
            sb_printf(o, "        PG_CHECK(cudaMemcpyAsync(hb[%d].ptr, d[%d], hb[%d].bytes, "
                         "cudaMemcpyDeviceToHost, st));\n", i, i, i);
    sb_printf(o, "        PG_CHECK(pipert_timer_stop(&tm, st));\n        PG_CHECK(pipert_timer_elapsed(&tm, &ms));\n"
                 "        t[1].push_back(ms);\n        PG_CHECK(pipert_timer_start(&tm, st));\n"
                 "        PG_CHECK(%s_launch(&a, st));\n"
                 "        PG_CHECK(pipert_timer_stop(&tm, st));\n        PG_CHECK(pipert_timer_elapsed(&tm, &ms));\n"
                 "        t[2].push_back(ms);\n    }\n"
                 "    double most = 0;\n    for (int k = 0; k < 3; ++k) {\n"
                 "        t[k].erase(t[k].begin(), t[k].begin() + 2);\n"
                 "        most = std::max(most, (double)pg_median(t[k]));\n    }\n"
                 "    printf(\"BENCH_ALONE %s device=%%d h2d_ms=%%.3f d2h_ms=%%.3f kernel_ms=%%.3f\\n\", dev,\n"
                 "           pg_median(t[0]), pg_median(t[1]), pg_median(t[2]));\n"
                 "    PG_CHECK(pipert_timer_destroy(&tm));\n    PG_CHECK(cudaStreamDestroy(st));\n"
                 "    for (int i = 0; i < %d; ++i)\n        PG_CHECK(cudaFree(d[i]));\n"
                 "    PG_CHECK(cudaSetDevice(0));\n    return most;\n}\n\n",
              s->name, s->name, s->narrays);
}

/* The median wall time of NAME_stream under a plan; and traced runs of it: per device
 * index, the rows it computed and when its last copy out ended (the median over the
 * runs, in ms since the run began on the device), the last run's chunks printed as
 * BENCH_TRACE lines for the timeline of docs/streaming.md. */
static void emit_stream_timing(strbuf *o, const spec *s)
{
    sb_printf(o, "static double pg_wall_ms(std::chrono::steady_clock::time_point t0)\n{\n"
                 "    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now()"
                 " - t0).count();\n}\n\n"
                 "static double pg_stream_ms(const struct %s_args &hs, const pipert_stream_plan *plan)\n{\n"
                 "    std::vector<float> t;\n    for (int r = 0; r < 12; ++r) {\n"
                 "        std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();\n"
                 "        PG_CHECK(%s_stream(&hs, plan));\n        if (r >= 2)\n"
                 "            t.push_back((float)pg_wall_ms(t0));\n    }\n    return pg_median(t);\n}\n\n",
              s->name, s->name);
    sb_printf(o, "static void pg_stream_trace(const struct %s_args &hs, const pipert_stream_plan *plan0,\n"
                 "                            int ndev, int64_t rows[4], double busy[4])\n{\n"
                 "    pipert_stream_plan plan;\n    memset(&plan, 0, sizeof plan);\n"
                 "    if (plan0)\n        plan = *plan0;\n"
                 "    std::vector<pipert_chunk_trace> tr(1 << 14);\n"
                 "    plan.trace = tr.data();\n    plan.trace_chunks = (int64_t)tr.size();\n"
                 "    std::vector<float> end[4];\n    for (int r = 0; r < 7; ++r) {\n"
                 "        for (size_t i = 0; i < tr.size(); ++i)\n            tr[i].chunk = -1;\n"
                 "        PG_CHECK(%s_stream(&hs, &plan));\n        float last[4] = {0, 0, 0, 0};\n"
                 "        for (int d = 0; d < 4; ++d)\n            rows[d] = 0;\n"
                 "        for (size_t i = 0; i < tr.size() && tr[i].chunk >= 0; ++i) {\n"
                 "            const pipert_chunk_trace &t = tr[i];\n"
                 "            rows[t.device_index] += t.count;\n"
                 "            last[t.device_index] = std::max(last[t.device_index], t.d2h_end);\n"
                 "            if (r == 6)\n"
                 "                printf(\"BENCH_TRACE %s devices=%%d chunk=%%lld device=%%d stream=%%d rows=%%lld \"\n"
                 "                       \"h2d=%%.3f,%%.3f d2h=%%.3f,%%.3f\\n\", ndev, (long long)t.chunk, t.device_index,\n"
                 "                       t.stream, (long long)t.count, t.h2d_begin, t.h2d_end, t.d2h_begin, t.d2h_end);\n"
                 "        }\n"
                 "        if (r >= 2)\n            for (int d = 0; d < 4; ++d)\n"
                 "                end[d].push_back(last[d]);\n    }\n"
                 "    for (int d = 0; d < 4; ++d)\n        busy[d] = pg_median(end[d]);\n}\n\n",
              s->name, s->name, s->name);
}

/* The host's side of the bound over one device or several: every device copying its share of
 * the rows at once, in (H2D of the IN and INOUT arrays), out (D2H of the OUT and INOUT
 * ones) and both ways on two streams a device; wall ms, medians after two warm-ups. The
 * copies in go first, so that the buffers an INOUT array's copies out read hold its data. */
static void emit_stream_link(strbuf *o, const spec *s)
{
    sb_printf(o, "static void pg_link(int ndev, const pipert_host_buffer *hb, const int64_t *rows, int64_t all,\n"
                 "                    double ms[3])\n{\n"
                 "    static const int dir[%d] = {", s->narrays);
    for (int i = 0; i < s->narrays; ++i)
        sb_printf(o, "%s%d", i ? ", " : "", s->arrays[i].dir == DIR_IN ? 1 : s->arrays[i].dir == DIR_OUT ? 2 : 3);
    sb_printf(o, "};\n    void *d[4][%d];\n    size_t off[4][%d], len[4][%d];\n    cudaStream_t st[4][2];\n"
                 "    for (int i = 0; i < %d; ++i)\n        for (int v = 0, first = 0; v < ndev; first += (int)rows[v], ++v) {\n"
                 "            off[v][i] = (size_t)((double)hb[i].bytes * first / (double)all);\n"
                 "            len[v][i] = (size_t)((double)hb[i].bytes * (first + rows[v]) / (double)all) - off[v][i];\n"
                 "        }\n"
                 "    for (int v = 0; v < ndev; ++v) {\n        PG_CHECK(cudaSetDevice(v));\n"
                 "        for (int k = 0; k < 2; ++k)\n"
                 "            PG_CHECK(cudaStreamCreateWithFlags(&st[v][k], cudaStreamNonBlocking));\n"
                 "        for (int i = 0; i < %d; ++i)\n            PG_CHECK(cudaMalloc(&d[v][i], len[v][i] ? len[v][i] : 1));\n    }\n"
                 "    for (int mode = 1; mode <= 3; ++mode) {\n        std::vector<float> t;\n"
                 "        for (int r = 0; r < 12; ++r) {\n"
                 "            std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();\n"
                 "            for (int v = 0; v < ndev; ++v) {\n                PG_CHECK(cudaSetDevice(v));\n"
                 "                for (int i = 0; i < %d; ++i) {\n"
                 "                    unsigned char *h = (unsigned char *)hb[i].ptr + off[v][i];\n"
                 "                    if ((mode & 1) && (dir[i] & 1) && len[v][i])\n"
                 "                        PG_CHECK(cudaMemcpyAsync(d[v][i], h, len[v][i], cudaMemcpyHostToDevice, st[v][0]));\n"
                 "                    if ((mode & 2) && (dir[i] & 2) && len[v][i])\n"
                 "                        PG_CHECK(cudaMemcpyAsync(h, d[v][i], len[v][i], cudaMemcpyDeviceToHost, st[v][1]));\n"
                 "                }\n            }\n"
                 "            for (int v = 0; v < ndev; ++v)\n                for (int k = 0; k < 2; ++k)\n"
                 "                    PG_CHECK(cudaStreamSynchronize(st[v][k]));\n"
                 "            if (r >= 2)\n                t.push_back((float)pg_wall_ms(t0));\n        }\n"
                 "        ms[mode - 1] = pg_median(t);\n    }\n"
                 "    for (int v = 0; v < ndev; ++v) {\n        PG_CHECK(cudaSetDevice(v));\n"
                 "        for (int k = 0; k < 2; ++k)\n            PG_CHECK(cudaStreamDestroy(st[v][k]));\n"
                 "        for (int i = 0; i < %d; ++i)\n            PG_CHECK(cudaFree(d[v][i]));\n    }\n"
                 "    PG_CHECK(cudaSetDevice(0));\n}\n\n",
              s->narrays, s->narrays, s->narrays, s->narrays, s->narrays, s->narrays, s->narrays);
    sb_printf(o, "/* A run of ms over ndev devices against what the link moves alone. */\n"
                 "static void pg_print_link(int ndev, const pipert_host_buffer *hb, const int64_t *rows,\n"
                 "                          int64_t all, double ms)\n{\n"
                 "    double link[3];\n    pg_link(ndev, hb, rows, all, link);\n"
                 "    const double most = std::max(link[0], std::max(link[1], link[2]));\n"
                 "    printf(\"BENCH_HOST_LINK %s devices=%%d h2d_ms=%%.3f d2h_ms=%%.3f both_ms=%%.3f stream_ms=%%.3f \"\n"
                 "           \"ratio=%%.3f\\n\", ndev, link[0], link[1], link[2], ms, most / ms);\n}\n\n", s->name);
}

/* Over every device (at most 4) where there are several: the runtime's plan over all of
 * them against the one-device run, each device against its own bound scaled to the rows
 * it got, and the run against the host link's own limit (pg_link). */
static void emit_stream_multi(strbuf *o, const spec *s)
{
    emit_stream_link(o, s);
    sb_printf(o, "static void pg_bench_stream_multi(const struct %s_args &hs, const pipert_host_buffer *hb,\n"
                 "                                  const pipert_stream_plan &one, double one_ms)\n{\n"
                 "    int ndev = 0;\n    PG_CHECK(cudaGetDeviceCount(&ndev));\n"
                 "    if (ndev < 2)\n        return;\n    ndev = std::min(ndev, 4);\n"
                 "    int devs[4] = {0, 1, 2, 3};\n    pipert_stream_plan multi = one;\n"
                 "    multi.devices = devs;\n    multi.ndevices = ndev;\n"
                 "    const double ms = pg_stream_ms(hs, &multi);\n"
                 "    int64_t rows[4], all = 0;\n    double busy[4], whole = 0;\n"
                 "    pg_stream_trace(hs, &multi, ndev, rows, busy);\n"
                 "    for (int d = 0; d < ndev; ++d)\n        all += rows[d];\n"
                 "    for (int d = 0; d < ndev; ++d) {\n"
                 "        const double bound = pg_alone(d, hs, hb) * (double)rows[d] / (double)(all ? all : 1);\n"
                 "        whole = std::max(whole, bound);\n"
                 "        printf(\"BENCH_HOST_DEVICE %s devices=%%d device=%%d rows=%%lld busy_ms=%%.3f bound_ms=%%.3f \"\n"
                 "               \"ratio=%%.3f\\n\", ndev, d, (long long)rows[d], busy[d], bound, bound / busy[d]);\n"
                 "    }\n"
                 "    printf(\"BENCH_HOST_MULTI %s devices=%%d stream_ms=%%.3f one_ms=%%.3f speedup=%%.3f \"\n"
                 "           \"bound_ms=%%.3f ratio=%%.3f\\n\", ndev, ms, one_ms, one_ms / ms, whole, whole / ms);\n"
                 "    pg_print_link(ndev, hb, rows, all, ms);\n}\n\n", s->name, s->name, s->name);
}

/* Host streaming: NAME_stream over page-locked host arrays of 256 MiB each at most (the
 * first dimension scaled to it), against the bound max(H2D, D2H, kernel), each measured
 * alone in this process on one stream; the serial run (one stream, one chunk); a traced
 * run; and the same over several devices where there are. */
static void emit_stream_bench(strbuf *o, const spec *s)
{
    const spec_array *a0 = &s->arrays[0];
    int k = 0;
    while (strcmp(s->sizes[k], a0->dims[0].name))
        ++k;
    emit_stream_alone(o, s);
    emit_stream_timing(o, s);
    emit_stream_multi(o, s);
    sb_printf(o, "static void pg_bench_stream(const int64_t *v0)\n{\n"
                 "    int64_t v[%d];\n    memcpy(v, v0, sizeof v);\n    v[%d] = 1;\n"
                 "    {\n        const struct %s_args r = pg_sized(v);\n        const int64_t row = ",
              s->nsizes, k, s->name);
    emit_elems(o, a0, "r.");
    sb_printf(o, ";\n        v[%d] = row > 0 && (1LL << 26) / row > 0 ? (1LL << 26) / row : 1;\n    }\n"
                 "    struct %s_args hs = pg_sized(v);\n    pg_buffers b;\n    pg_alloc(b, hs);\n"
                 "    pipert_host_buffer hb[%d];\n", k, s->name, s->narrays);
    for (int i = 0; i < s->narrays; ++i) {
        const char *n = s->arrays[i].name;
        sb_printf(o, "    PG_CHECK(pipert_host_alloc(&hb[%d], b.h_%s.size()));\n"
                     "    if (!b.h_%s.empty())\n        memcpy(hb[%d].ptr, b.h_%s.data(), b.h_%s.size());\n"
                     "    hs.%s = (decltype(hs.%s))hb[%d].ptr;\n", i, n, n, i, n, n, n, n, i);
    }
    sb_printf(o, "    pg_free(b);\n"
                 "    /* the runtime's plan, its buffers kept from run to run (a cache); the same\n"
                 "     * allocating and freeing them in every run; one stream and one chunk */\n"
                 "    pipert_stream_plan cached, serial;\n    memset(&cached, 0, sizeof cached);\n"
                 "    PG_CHECK(pipert_stream_cache_create(&cached.cache));\n"
                 "    serial = cached;\n    serial.streams_per_device = 1;\n    serial.chunk_elements = v[%d];\n"
                 "    const double bound = pg_alone(0, hs, hb);\n"
                 "    const double sm = pg_stream_ms(hs, &cached), nm = pg_stream_ms(hs, NULL);\n"
                 "    const double zm = pg_stream_ms(hs, &serial);\n"
                 "    printf(\"BENCH_HOST %s rows=%%lld stream_ms=%%.3f nocache_ms=%%.3f serial_ms=%%.3f \"\n"
                 "           \"bound_ms=%%.3f ratio=%%.3f nocache_ratio=%%.3f serial_ratio=%%.3f\\n\", (long long)v[%d],\n"
                 "           sm, nm, zm, bound, bound / sm, bound / nm, bound / zm);\n"
                 "    int64_t rows[4];\n    double busy[4];\n    pg_stream_trace(hs, &cached, 1, rows, busy);\n"
                 "    pg_print_link(1, hb, rows, rows[0], sm);\n"
                 "    pg_bench_stream_multi(hs, hb, cached, sm);\n"
                 "    PG_CHECK(pipert_stream_cache_destroy(cached.cache));\n"
                 "    for (int i = 0; i < %d; ++i)\n        PG_CHECK(pipert_host_release(&hb[i]));\n}\n\n",
              k, s->name, k, s->narrays);
}

/* Whether the bench times NAME_stream. Not yet with accumulators: its kernel-alone
 * measure launches NAME_launch over the host arguments, which carry no workspace. */
static bool bench_streams(const spec *s)
{
    return s->host_stream && !s->naccums;
}

/* The kernel, cudaMemcpy device to device moving as many bytes (read + write), and the
 * same-shape kernel (rbytes read, wbytes written), in turns: medians of 30 after 5. The
 * row's reference is the copy where the pipeline is copy-shaped (its bytes read within
 * 10% of those written), which a plain kernel copies slower than cudaMemcpy; else the
 * same-shape kernel: read-mostly kernels beat a copy, so a copy says little of them. */
static void emit_bench_timing(strbuf *o, const spec *s)
{
    sb_printf(o,
        "    size_t copy_bytes = (size_t)(bytes / 2) & ~(size_t)255;\n"
        "    unsigned char *c0, *c1;\n"
        "    PG_CHECK(cudaMalloc(&c0, std::max(copy_bytes, (size_t)rbytes)));\n"
        "    PG_CHECK(cudaMalloc(&c1, std::max(copy_bytes, (size_t)wbytes)));\n"
        "    PG_CHECK(cudaMemset(c0, 1, std::max(copy_bytes, (size_t)rbytes)));\n"
        "    cudaEvent_t e0, e1;\n    PG_CHECK(cudaEventCreate(&e0));\n"
        "    PG_CHECK(cudaEventCreate(&e1));\n"
        "    pg_ss ss = pg_ss_over(c0, rbytes, c1, wbytes);\n    pg_ss_pick(ss, e0, e1);\n"
        "    std::vector<float> tk, tc, ts;\n"
        "    for (int r = 0; r < reps + 5; ++r) {\n"
        "        const float k = pg_event_ms(e0, e1, [&] { PG_CHECK(%s_launch(&a, 0)); });\n"
        "        const float c = pg_event_ms(e0, e1, [&] {\n"
        "            PG_CHECK(cudaMemcpy(c1, c0, copy_bytes, cudaMemcpyDeviceToDevice)); });\n"
        "        const float q = pg_event_ms(e0, e1, [&] { pg_ss_launch(ss); });\n"
        "        if (r >= 5) {\n            tk.push_back(k);\n            tc.push_back(c);\n"
        "            ts.push_back(q);\n        }\n    }\n"
        "    const double gbs = bytes / (pg_median(tk) * 1e-3) / 1e9;\n"
        "    const double ref = 2.0 * (double)copy_bytes / (pg_median(tc) * 1e-3) / 1e9;\n"
        "    const double same = 16.0 * (double)(ss.rn + ss.wn) / (pg_median(ts) * 1e-3) / 1e9;\n"
        "    const bool copy_shaped = fabs(rbytes - wbytes) <= 0.1 * wbytes;\n"
        "    printf(\"BENCH_SAMESHAPE %s read_bytes=%%zu write_bytes=%%zu blocks=%%d threads=%%d ms=%%.4f\\n\",\n"
        "           16 * ss.rn, 16 * ss.wn, ss.blocks, ss.threads, pg_median(ts));\n"
        "    printf(\"BENCH %s ms=%%.4f %%.1f GB/s d2d=%%.1f GB/s ratio=%%.3f sameshape=%%.1f GB/s \"\n"
        "           \"ratio_sameshape=%%.3f reference=%%s\\n\", pg_median(tk), gbs, ref, gbs / ref, same,\n"
        "           gbs / same, copy_shaped ? \"memcpy\" : \"sameshape\");\n"
        "    PG_CHECK(cudaFree(ss.sink));\n    PG_CHECK(cudaFree(c0));\n    PG_CHECK(cudaFree(c1));\n"
        "    pg_free(b);\n", s->name, s->name, s->name);
}

static long long bench_default_size(const spec *s, const char *size)
{
    const long long bound = size ? spec_size_bound(s, size) : 0;
    if (bound)
        return bound;
    if (s->has_steps)
        return 4096;
    const spec_array *t = &s->arrays[s->tile_array];
    long long literal = 1;
    int symbols = 0;
    bool in_tile = false;
    for (int d = 0; d < t->rank; ++d) {
        if (!t->dims[d].name) {
            literal *= t->dims[d].value;
            continue;
        }
        ++symbols;
        in_tile |= size && !strcmp(t->dims[d].name, size);
    }
    if (literal == 1 || !in_tile)
        return s->tile_rank == 1 ? 1LL << 28 : s->tile_rank == 2 ? 16384 : 640;
    /* the largest r with r^symbols elements at most 2^28 / literal (at least 1) */
    long long n = (1LL << 28) / literal, r = 1;
    for (;;) {
        long long p = 1;
        for (int k = 0; k < symbols && p <= n; ++k)
            p *= r + 1;
        if (p > n)
            return r;
        ++r;
    }
}

/* With packed rows, the pack the spec's launcher takes for the sizes, whatever this
 * unit's lowering packs: a tuning run's size class. */
static void emit_bench_pack(strbuf *o, const spec *s)
{
    long long packs[SPEC_MAX_PACKS];
    if (spec_row_packs(s, packs) < 2)
        return;
    sb_printf(o, "    printf(\"BENCH_PACK %s pack=%%d\\n\", ", s->name);
    emit_pack_choice(o, s, "a.", true);
    sb_puts(o, ");\n");
}

void emit_bench(strbuf *o, const emit_unit *u)
{
    const spec *s = u->spec;
    emit_common(o, u, "Benchmark");
    emit_buffers(o, s);
    if (bench_streams(s))
        emit_alloc(o, s);
    emit_bench_alloc(o, s);
    emit_free(o, s);
    emit_set_sizes(o, s);
    sb_puts(o, "static float pg_median(std::vector<float> v)\n{\n"
               "    std::sort(v.begin(), v.end());\n    return v[v.size() / 2];\n}\n\n");
    sb_puts(o, sameshape_kernel);
    sb_puts(o, sameshape_host);
    sb_puts(o, stream_ref_mode);
    if (bench_streams(s))
        emit_stream_bench(o, s);
    /* Default sizes (the command line gives others, one per size symbol): a tile's bound,
     * 4096 with an inner steps loop, else 2^28 elements for rank 1, 16384 per side for
     * rank 2, 640 for rank 3; where the tile's array has literal extents too, its size
     * symbols share 2^28 elements over them (softmax's rows of 1024: 262144 rows, 1 GiB
     * of floats; 16384 rows there were 64 MiB, hardly more than an H100's L2). */
    sb_printf(o, "int main(int argc, char **argv)\n{\n    int64_t v[%d] = {", s->nsizes ? s->nsizes : 1);
    for (int i = 0; i < (s->nsizes ? s->nsizes : 1); ++i)
        sb_printf(o, "%s%lld", i ? ", " : "", bench_default_size(s, s->nsizes ? s->sizes[i] : NULL));
    sb_printf(o, "};\n    if (argc > 1 && !strcmp(argv[1], \"--stream-ref\"))\n"
                 "        return pg_stream_ref(argc > 2 ? (size_t)atoll(argv[2]) : 1024);\n"
                 "    for (int i = 1; i < argc && i <= %d; ++i)\n        v[i - 1] = atoll(argv[i]);\n"
                 "    const int reps = 30;\n    struct %s_args a = pg_sized(v);\n"
                 "    pg_buffers b;\n    pg_bench_alloc(b, a);\n", s->nsizes, s->name);
    for (int i = 0; i < s->narrays; ++i)
        sb_printf(o, "    a.%s = (decltype(a.%s))b.d_%s;\n", s->arrays[i].name, s->arrays[i].name,
                  s->arrays[i].name);
    if (plan_has_workspace(s))
        sb_printf(o, "    a.workspace_bytes = %s_workspace_bytes(&a, NULL);\n"
                     "    if (a.workspace_bytes)\n"
                     "        PG_CHECK(cudaMalloc(&a.workspace, a.workspace_bytes));\n", s->name);
    emit_bytes_moved(o, s);
    emit_bench_pack(o, s);
    emit_bench_timing(o, s);
    if (bench_streams(s))
        sb_puts(o, "    pg_bench_stream(v);\n");
    sb_puts(o, "    return 0;\n}\n");
}
