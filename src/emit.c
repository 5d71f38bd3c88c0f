/* emit: the generated header (.cuh), the source skeleton (.cu) and its launcher.
 *
 * The kernels themselves are printed from the schedule IR by emit_kernel.c; this file
 * prints what surrounds them: the banner, the args struct, the embedded device support,
 * the schedule comment, and the host launcher that checks the user's pointers, picks the
 * architecture variant and copy width, sizes the grid and launches. */
#include "mech/mech.h"

#include <string.h>

static bool uses_type(const spec *s, elem_type t)
{
    for (int i = 0; i < s->nparams; ++i)
        if (s->params[i].type == t)
            return true;
    for (int i = 0; i < s->narrays; ++i)
        if (s->arrays[i].type == t)
            return true;
    return false;
}

/* ------------------------------------------------------------------ the header */

static const char *header_ctype(elem_type t)
{
    return t == TY_HALF ? "pipegen_half" : t == TY_BF16 ? "pipegen_bf16" : ast_type_ctype(t);
}

static void emit_args_struct(strbuf *out, const spec *s)
{
    sb_printf(out, "struct %s_args {\n", s->name);
    for (int i = 0; i < s->nparams; ++i)
        sb_printf(out, "    %s %s;\n", header_ctype(s->params[i].type), s->params[i].name);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        sb_printf(out, "    %s%s *%s;\n", arr->dir == DIR_IN ? "const " : "",
                  header_ctype(arr->type), arr->name);
    }
    for (int i = 0; i < s->nsizes; ++i)
        sb_printf(out, "    int64_t %s;\n", s->sizes[i]);
    if (s->naccums)
        sb_puts(out, "    void *workspace;            /* NAME_workspace_bytes() bytes of device "
                     "memory */\n    size_t workspace_bytes;\n");
    else if (plan_has_workspace(s))
        sb_puts(out, "    void *workspace;            /* NULL, or NAME_workspace_bytes() bytes "
                     "of device memory\n                                   for the tile "
                     "counter */\n    size_t workspace_bytes;\n");
    sb_puts(out, "};\n");
}

static void emit_half_types(strbuf *out, const spec *s)
{
    if (!uses_type(s, TY_HALF) && !uses_type(s, TY_BF16))
        return;
    sb_puts(out, "#ifdef __cplusplus\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                 "typedef __half pipegen_half;\ntypedef __nv_bfloat16 pipegen_bf16;\n#else\n"
                 "/* C sees the 16-bit floating types as their bits. */\n"
                 "typedef struct { uint16_t bits; } pipegen_half;\n"
                 "typedef struct { uint16_t bits; } pipegen_bf16;\n#endif\n\n");
}

void emit_header(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    emit_banner(out, s);
    sb_printf(out, "#ifndef %s\n#define %s\n", u->opts.guard, u->opts.guard);
    emit_stamp_define(out, &u->opts);
    sb_puts(out, "\n#include <stddef.h>\n#include <stdint.h>\n#include <cuda_runtime_api.h>\n"
                 "#include \"pipert.h\"\n\n");
    emit_half_types(out, s);
    /* After the header's own includes (and those nvcc puts first: cuda_runtime.h and the
     * C library's headers it brings), before any name is used. */
    emit_name_guards(out, s, &u->opts);
    sb_puts(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    emit_args_struct(out, s);
    sb_printf(out, "\n/* Enqueue the pipeline on `stream`. Never allocates or synchronizes. */\n"
                   "cudaError_t %s_launch(const struct %s_args *args, cudaStream_t stream);\n",
              s->name, s->name);
    sb_printf(out, "/* The same, with options (a forced grid size, for tests). */\n"
                   "cudaError_t %s_launch_ex(const struct %s_args *args, cudaStream_t stream,\n"
                   "    const pipert_launch_opts *opts);\n", s->name, s->name);
    if (s->host_stream)
        sb_printf(out, "/* The pipeline over host arrays, in chunks whose copies and kernels "
                       "overlap on\n * several streams (plan: NULL, or choices that override "
                       "the runtime's). Synchronous. */\n"
                       "cudaError_t %s_stream(const struct %s_args *host,\n"
                       "    const struct pipert_stream_plan *plan);\n", s->name, s->name);
    if (plan_has_workspace(s))
        sb_printf(out, "/* Bytes of workspace the launch needs in args->workspace. */\n"
                       "size_t %s_workspace_bytes(const struct %s_args *args,\n"
                       "    const pipert_launch_opts *opts);\n", s->name, s->name);
    sb_puts(out, "\n#ifdef __cplusplus\n}\n#endif\n");
    sb_printf(out, "#endif\n");
}

/* ------------------------------------------------------------------ the launcher
 *
 * Printed from the unit's host plan, one printer per step kind (host_printers). */

/* The copy widths every variant is instantiated for: from the widest any stage can use
 * down to the smallest element size of a staged array (pointers are checked to keep it). */
static void vec_range(const emit_unit *u, int *maxvec, int *minvec)
{
    const spec *s = u->spec;
    *maxvec = 1;
    *minvec = 16;
    for (int v = 0; v < u->host->nvariants; ++v)
        for (int i = 0; i < s->nstages; ++i) {
            int esz = ast_type_size(s->arrays[s->stages[i].array].type);
            int vec = u->scheds[u->host->variant[v]]->copy[i].vec;
            *maxvec = vec > *maxvec ? vec : *maxvec;
            *minvec = esz < *minvec ? esz : *minvec;
        }
    if (*minvec > *maxvec)
        *minvec = *maxvec;
}

static int nvecs(const emit_unit *u)
{
    int maxvec, minvec, n = 0;
    vec_range(u, &maxvec, &minvec);
    for (int vec = maxvec; vec >= minvec; vec /= 2)
        ++n;
    return n;
}

/* The kernels of the variants (highest architecture first), one row per variant and one
 * column per copy width, and each variant's architecture. */
static void emit_kernel_table(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    const host_plan *hp = u->host;
    int maxvec, minvec;
    vec_range(u, &maxvec, &minvec);
    sb_printf(out, "static pipert_kernel %s_k[%d][%d] = {\n", s->name, hp->nvariants, nvecs(u));
    for (int v = 0; v < hp->nvariants; ++v) {
        const sched *sc = u->scheds[hp->variant[v]];
        sb_puts(out, "    {");
        for (int vec = maxvec; vec >= minvec; vec /= 2)
            sb_printf(out, "%s{(const void *)%s_sm%d<%d>, %d, %lld, {0}, {0}, {0}}",
                      vec < maxvec ? ",\n     " : "", s->name, sc->sm, vec, sc->threads,
                      sc->smem_bytes);
        sb_puts(out, "},\n");
    }
    sb_printf(out, "};\nstatic const int %s_sm[%d] = {", s->name, hp->nvariants);
    for (int v = 0; v < hp->nvariants; ++v)
        sb_printf(out, "%s%d", v ? ", " : "", u->scheds[hp->variant[v]]->sm);
    sb_puts(out, "};\n\n");
}

static void print_check_args(hctx *h, const host_op *op)
{
    (void)op;
    sb_puts(h->out, "    if (!pg_a)\n        return cudaErrorInvalidValue;\n");
}

static void print_check_size(hctx *h, const host_op *op)
{
    sb_printf(h->out, "    if (pg_a->%s < 0)\n        return cudaErrorInvalidValue;\n",
              h->s->sizes[op->index]);
}

/* Extents not negative, bytes overflow-checked, the pointer not NULL and aligned. */
static void print_check_array(hctx *h, const host_op *op)
{
    const spec_array *arr = &h->s->arrays[op->index];
    sb_printf(h->out, "    size_t pg_bytes_%s;\n    PIPERT_TRY(pipert_check_array(pg_a->%s",
              arr->name, arr->name);
    for (int d = 0; d < 3; ++d) {
        sb_puts(h->out, ", ");
        if (d < arr->rank)
            emit_extent(h->out, &arr->dims[d], "pg_a->");
        else
            sb_puts(h->out, "1");
    }
    sb_printf(h->out, ", %d, &pg_bytes_%s));\n", ast_type_size(arr->type), arr->name);
}

static void print_check_disjoint(hctx *h, const host_op *op)
{
    const char *x = h->s->arrays[op->index].name, *y = h->s->arrays[op->other].name;
    sb_printf(h->out, "    if (pipert_ranges_overlap(pg_a->%s, pg_bytes_%s, pg_a->%s, "
                      "pg_bytes_%s))\n        return cudaErrorInvalidValue;\n", x, x, y, y);
}

static void print_count_tiles(hctx *h, const host_op *op)
{
    (void)op;
    sb_puts(h->out, "    const int64_t pg_ntiles = ");
    emit_ntiles(h->out, h->s, "pg_a->");
    sb_puts(h->out, ";\n");
}

/* With accumulators, no work still writes their identities (the combine of no partials),
 * unless a test forces a grid. */
static void print_return_if_empty(hctx *h, const host_op *op)
{
    (void)op;
    if (h->s->naccums)
        sb_printf(h->out, "    if (pg_ntiles == 0 && !(pg_opts && pg_opts->grid_blocks))\n"
                          "        return %s_combine_launch(pg_a, 0, pg_stream);\n", h->s->name);
    else
        sb_puts(h->out, "    if (pg_ntiles == 0)\n        return cudaSuccess;\n");
}

/* The widest copy every staged pointer keeps, and every row of a staged array (its row
 * pitch in bytes). */
static void print_copy_width(hctx *h, const host_op *op)
{
    (void)op;
    int maxvec, minvec;
    vec_range(h->u, &maxvec, &minvec);
    sb_printf(h->out, "    unsigned pg_vec = %d;\n", maxvec);
    for (int i = 0; i < h->s->nstages; ++i) {
        const spec_array *arr = &h->s->arrays[h->s->stages[i].array];
        sb_printf(h->out, "    pg_vec = pipert_min_align(pg_vec, pg_a->%s);\n", arr->name);
        if (arr->rank >= 2) {
            sb_puts(h->out, "    pg_vec = pipert_min_align(pg_vec, (const void *)(uintptr_t)(");
            emit_extent(h->out, &arr->dims[arr->rank - 1], "pg_a->");
            sb_printf(h->out, " * %d));\n", ast_type_size(arr->type));
        }
    }
}

static void print_select_variant(hctx *h, const host_op *op)
{
    (void)op;
    int maxvec, minvec;
    vec_range(h->u, &maxvec, &minvec);
    const char *n = h->s->name;
    sb_printf(h->out, "    pipert_caps pg_caps;\n    pipert_kernel *pg_k;\n"
                      "    PIPERT_TRY(pipert_current_caps(&pg_caps));\n"
                      "    PIPERT_TRY(pipert_select_variant(&%s_k[0][0], %s_sm, %d, %d, "
                      "pipert_vec_index(%d, pg_vec), &pg_caps, &pg_k));\n",
              n, n, h->u->host->nvariants, nvecs(h->u), maxvec);
    bool per_variant = false;
    for (int i = 0; i < h->u->host->nops; ++i)
        per_variant |= h->u->host->ops[i].variants != 0;
    for (int i = 0; i < h->u->host->nparams; ++i)
        per_variant |= h->u->host->params[i].variants != 0;
    if (per_variant)
        sb_printf(h->out, "    const unsigned pg_variant = (unsigned)(pg_k - &%s_k[0][0]) / %d;\n",
                  n, nvecs(h->u));
}

static void print_grid(hctx *h, const host_op *op)
{
    (void)op;
    if (h->u->scheds[0]->grid == GRID_PERSISTENT)
        sb_puts(h->out, "    unsigned pg_grid = pipert_persistent_grid(pg_k, &pg_caps, "
                        "pg_ntiles);\n");
    else
        sb_puts(h->out, "    if (pg_ntiles > 0x7fffffff)\n        return cudaErrorInvalidValue;\n"
                        "    unsigned pg_grid = (unsigned)pg_ntiles;\n");
    sb_puts(h->out, "    if (pg_opts && pg_opts->grid_blocks)\n"
                    "        pg_grid = pg_opts->grid_blocks;\n");
}

static bool has_tile_counter(const host_plan *hp)
{
    for (int i = 0; i < hp->nops; ++i)
        if (hp->ops[i].kind == HOP_TILE_COUNTER)
            return true;
    return false;
}

/* The tile counter is the workspace's first 8 bytes (the schedules that claim have no
 * accumulators); without a workspace the kernel deals its work items in the static order. */
static void print_tile_counter(hctx *h, const host_op *op)
{
    sb_puts(h->out, "    unsigned long long *pg_counter = NULL;\n    if (pg_a->workspace");
    if (op->variants)
        sb_printf(h->out, " && (0x%xu >> pg_variant & 1)", op->variants);
    sb_puts(h->out, ") {\n        if (pg_a->workspace_bytes < 8)\n"
                    "            return cudaErrorInvalidValue;\n"
                    "        if ((uintptr_t)pg_a->workspace % 8)\n"
                    "            return cudaErrorMisalignedAddress;\n"
                    "        pg_counter = (unsigned long long *)pg_a->workspace;\n"
                    "        PIPERT_TRY(cudaMemsetAsync(pg_counter, 0, 8, pg_stream));\n    }\n");
}

static void print_check_workspace(hctx *h, const host_op *op)
{
    (void)op;
    sb_printf(h->out, "    PIPERT_TRY(pipert_check_workspace(pg_a->workspace, pg_a->workspace_bytes, "
                      "(size_t)pg_grid * %d));\n", 8 * h->s->naccums);
}

/* The launch of a kernel of variant v, through a pointer of its type, with the
 * parameters it takes, at the indentation ind. */
static void print_launch_of(hctx *h, int v, const char *ind)
{
    const host_plan *hp = h->u->host;
    /* What is passed for each kind of value, a format over the parameter's name: a
     * module step's local has that name. */
    static const char *const value_expr[HV__COUNT] = {
        [HV_ARGS] = "*pg_a", [HV_NTILES] = "pg_ntiles", [HV_TILE_COUNTER] = "%s",
        [HV_STEP_LOCAL] = "%s"};
    const char *sep = "";
    sb_printf(h->out, "%stypedef void (*pg_fn)(", ind);
    for (int p = 0; p < hp->nparams; ++p)
        if (host_param_of(&hp->params[p], v)) {
            sb_printf(h->out, "%s%s", sep, hp->params[p].ctype);
            sep = ", ";
        }
    sb_printf(h->out, ");\n%s((pg_fn)pg_k->func)<<<pg_grid, pg_k->threads, pg_k->smem_bytes, "
                      "pg_stream>>>(", ind);
    sep = "";
    for (int p = 0; p < hp->nparams; ++p)
        if (host_param_of(&hp->params[p], v)) {
            sb_puts(h->out, sep);
            sb_printf(h->out, value_expr[hp->params[p].value], hp->params[p].name);
            sep = ", ";
        }
    sb_puts(h->out, ");\n");
}

/* The variants whose kernels take the same parameters as variant v's (bit w). */
static unsigned same_params(const host_plan *hp, int v)
{
    unsigned same = 0;
    for (int w = 0; w < hp->nvariants; ++w) {
        bool alike = true;
        for (int p = 0; p < hp->nparams; ++p)
            alike &= host_param_of(&hp->params[p], v) == host_param_of(&hp->params[p], w);
        same |= (unsigned)alike << w;
    }
    return same;
}

/* The selected kernel with its parameters: where the variants' kernels take different
 * ones (a tensor map only the tensor kernel reads), one launch per set of them. */
static void print_launch(hctx *h, const host_op *op)
{
    (void)op;
    const host_plan *hp = h->u->host;
    unsigned done = 0;
    for (int v = 0; v < hp->nvariants; ++v) {
        unsigned group = same_params(hp, v);
        if (done >> v & 1)
            continue;
        done |= group;
        if (group == (1u << hp->nvariants) - 1) {
            print_launch_of(h, v, "    ");
            break;
        }
        if (done == (1u << hp->nvariants) - 1)
            sb_puts(h->out, " else {\n");
        else
            sb_printf(h->out, "%sif (0x%xu >> pg_variant & 1) {\n", v ? " else " : "    ",
                      group);
        print_launch_of(h, v, "        ");
        sb_puts(h->out, "    }");
        if (done == (1u << hp->nvariants) - 1)
            sb_puts(h->out, "\n");
    }
    sb_puts(h->out, "    PIPERT_TRY(cudaGetLastError());\n");
}

static void print_follow_on(hctx *h, const host_op *op)
{
    (void)op;
    sb_printf(h->out, "    PIPERT_TRY(%s_combine_launch(pg_a, pg_grid, pg_stream));\n",
              h->s->name);
}

static void print_module_step(hctx *h, const host_op *op)
{
    op->step->print(h, op);
}

typedef void (*host_printer)(hctx *h, const host_op *op);
static const host_printer host_printers[HOP__COUNT] = {
    [HOP_CHECK_ARGS] = print_check_args, [HOP_CHECK_SIZE] = print_check_size,
    [HOP_CHECK_ARRAY] = print_check_array, [HOP_CHECK_DISJOINT] = print_check_disjoint,
    [HOP_COUNT_TILES] = print_count_tiles, [HOP_RETURN_IF_EMPTY] = print_return_if_empty,
    [HOP_COPY_WIDTH] = print_copy_width, [HOP_SELECT_VARIANT] = print_select_variant,
    [HOP_GRID] = print_grid, [HOP_CHECK_WORKSPACE] = print_check_workspace,
    [HOP_TILE_COUNTER] = print_tile_counter,
    [HOP_MODULE] = print_module_step,
    [HOP_LAUNCH] = print_launch, [HOP_FOLLOW_ON] = print_follow_on,
};

static void emit_launch_ex(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    hctx h = {out, u, s};
    sb_printf(out, "extern \"C\" cudaError_t %s_launch_ex(const struct %s_args *pg_a, "
                   "cudaStream_t pg_stream,\n    const pipert_launch_opts *pg_opts)\n{\n",
              s->name, s->name);
    for (int i = 0; i < u->host->nops; ++i)
        host_printers[u->host->ops[i].kind](&h, &u->host->ops[i]);
    sb_puts(out, "    return cudaSuccess;\n}\n\n");
    sb_printf(out, "extern \"C\" cudaError_t %s_launch(const struct %s_args *pg_a, "
                   "cudaStream_t pg_stream)\n{\n    return %s_launch_ex(pg_a, pg_stream, NULL);\n}\n",
              s->name, s->name, s->name);
}

/* ------------------------------------------------------------------ host streaming
 *
 * NAME_stream: the launcher's checks of the host arrays, the problem (every array cut into
 * chunks of rows along dimension 0), then the chunk ring, one printer per chunk operation,
 * over the runtime's run (docs/runtime.md, "Host streaming"). */

static const char *const stream_dirs[] = {"PIPERT_IN", "PIPERT_OUT", "PIPERT_INOUT"};

/* The bytes of one row (one element of dimension 0) of an array. */
static void emit_row_bytes(strbuf *out, const spec_array *arr, const char *prefix)
{
    sb_puts(out, "(size_t)");
    for (int d = 1; d < arr->rank; ++d) {
        emit_extent(out, &arr->dims[d], prefix);
        sb_puts(out, " * ");
    }
    sb_printf(out, "%d", ast_type_size(arr->type));
}

/* With accumulators, a chunk's launch reduces into its slot's scratch (runtime arrays
 * PIPERT_SCRATCH: device memory of the chunk's rows, never copied): each accumulator's
 * output, one element, and after the spec's arrays the launch's workspace, whose
 * pg_ws_row bytes a row bound the partials of a chunk's work items (a work item holds at
 * least one row of dimension 0, and each row at most the tiles of the other dimensions). */
static void emit_stream_scratch(strbuf *out, const spec *s)
{
    if (!s->naccums)
        return;
    const spec_array *ta = &s->arrays[s->tile_array];
    sb_printf(out, "    const size_t pg_ws_row = (size_t)%d", 8 * s->naccums);
    for (int d = 1; d < s->tile_rank; ++d) {
        sb_puts(out, " * (size_t)pipert_div_up(");
        emit_extent(out, &ta->dims[d], "pg_a->");
        sb_printf(out, ", %lld)", s->tile[d]);
    }
    sb_puts(out, ";\n");
}

/* The problem, the run's layout and the run itself; with accumulators, the page-locked
 * host partials, 8 bytes per accumulator and chunk, that the chunks' results are copied
 * into (none at all when there is no chunk: the fold then gives the identities). */
static void emit_stream_problem(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    int n = s->narrays + (s->naccums > 0);
    emit_stream_scratch(out, s);
    sb_printf(out, "    const pipert_stream_array pg_arrays[%d] = {\n", n);
    for (int i = 0; i < s->narrays; ++i) {
        bool scratch = spec_accum_into(s, i) >= 0;
        sb_printf(out, "        {%s, ", scratch ? "PIPERT_SCRATCH" : stream_dirs[s->arrays[i].dir]);
        emit_row_bytes(out, &s->arrays[i], "pg_a->");
        sb_puts(out, "},\n");
    }
    if (s->naccums)
        sb_puts(out, "        {PIPERT_SCRATCH, pg_ws_row},\n");
    sb_printf(out, "    };\n    const pipert_stream_problem pg_prob = {pg_a->%s, %d, %lldLL, "
                   "pg_arrays, %d};\n    void *const pg_host[%d] = {", s->arrays[0].dims[0].name,
              u->host->ring->halo, u->host->ring->align, n, n);
    for (int i = 0; i < n; ++i)
        if (i < s->narrays && spec_accum_into(s, i) < 0)
            sb_printf(out, "%s(void *)pg_a->%s", i ? ", " : "", s->arrays[i].name);
        else
            sb_printf(out, "%sNULL", i ? ", " : "");
    sb_puts(out, "};\n    pipert_stream_layout pg_lay;\n    pipert_stream_run *pg_run = NULL;\n"
                 "    PIPERT_TRY(pipert_stream_layout_query(pg_plan, &pg_prob, &pg_lay));\n");
    if (s->naccums)
        sb_printf(out, "    pipert_host_buffer pg_parts;\n"
                       "    PIPERT_TRY(pipert_host_alloc(&pg_parts, (size_t)pg_lay.chunks * %d));\n",
                  8 * s->naccums);
    else
        sb_puts(out, "    if (pg_lay.chunks == 0)\n        return cudaSuccess;\n");
    sb_puts(out, "    cudaError_t pg_err = pipert_stream_begin(pg_plan, &pg_prob, &pg_lay, pg_host, "
                 "&pg_run);\n"
                 "    for (int64_t pg_i = 0; pg_err == cudaSuccess && pg_i < pg_lay.chunks; "
                 "++pg_i) {\n        pipert_chunk pg_c;\n");
}

/* One runtime call of the run on the chunk, leaving the loop on an error. */
static void print_chunk_call(strbuf *out, const char *fn)
{
    sb_printf(out, "        if ((pg_err = %s(pg_run, &pg_c)) != cudaSuccess)\n"
                   "            break;\n", fn);
}

static void print_chunk_next(strbuf *out, const spec *s)
{
    (void)s;
    print_chunk_call(out, "pipert_stream_next");
}

static void print_chunk_copy_in(strbuf *out, const spec *s)
{
    (void)s;
    print_chunk_call(out, "pipert_stream_copy_in");
}

/* NAME_launch over the slot's buffers: the host arguments with device pointers, and the
 * chunk's rows (halo included) as the first dimension's size. */
static void print_chunk_launch(strbuf *out, const spec *s)
{
    sb_printf(out, "        struct %s_args pg_d = *pg_a;\n", s->name);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        sb_printf(out, "        pg_d.%s = (%s%s *)pg_c.buffers[%d];\n", arr->name,
                  arr->dir == DIR_IN ? "const " : "", header_ctype(arr->type), i);
    }
    if (s->naccums)
        sb_printf(out, "        pg_d.workspace = pg_c.buffers[%d];\n"
                       "        pg_d.workspace_bytes = (size_t)pg_c.in_count * pg_ws_row;\n",
                  s->narrays);
    else if (plan_has_workspace(s))
        sb_puts(out, "        pg_d.workspace = NULL;   /* chunks share no tile counter */\n"
                     "        pg_d.workspace_bytes = 0;\n");
    sb_printf(out, "        pg_d.%s = pg_c.in_count;\n"
                   "        if ((pg_err = %s_launch(&pg_d, pg_c.stream)) != cudaSuccess)\n"
                   "            break;\n", s->arrays[0].dims[0].name, s->name);
}

/* Each accumulator's result of the chunk into the chunk's own 8 bytes of the partials,
 * on its stream after its launch (cudaMemcpyAsync to page-locked memory: no wait). */
static void print_chunk_part_out(strbuf *out, const spec *s)
{
    for (int k = 0; k < s->naccums; ++k) {
        const char *n = s->arrays[s->accums[k].into].name;
        sb_printf(out, "        if ((pg_err = cudaMemcpyAsync((unsigned char *)pg_parts.ptr + "
                       "((size_t)pg_c.index * %d + %d) * 8, pg_d.%s,\n"
                       "                 sizeof *pg_d.%s, cudaMemcpyDeviceToHost, pg_c.stream)) "
                       "!= cudaSuccess)\n            break;\n", s->naccums, k, n, n);
    }
}

static void print_chunk_copy_out(strbuf *out, const spec *s)
{
    (void)s;
    print_chunk_call(out, "pipert_stream_copy_out");
}

static void print_chunk_done(strbuf *out, const spec *s)
{
    (void)s;
    sb_puts(out, "        pg_err = pipert_stream_done(pg_run, &pg_c);\n");
}

/* The run's end waits for every stream: everything a chunk enqueued is done. */
static void print_stream_end(strbuf *out, const spec *s)
{
    (void)s;
    sb_puts(out, "    pg_err = pipert_stream_end(pg_run, pg_err);\n");
}

/* The identity of an accumulator in host code: the device's, but for the infinities of
 * float and double, whose device spelling (__int_as_float) is device code only. */
static const char *host_identity(const spec_accum *acc)
{
    bool wide = acc->type == TY_DOUBLE;
    if (acc->combine == COMBINE_SUM || (acc->type != TY_FLOAT && !wide))
        return emit_accum_identity(acc);
    if (acc->combine == COMBINE_MIN)
        return wide ? "HUGE_VAL" : "HUGE_VALF";
    return wide ? "-HUGE_VAL" : "-HUGE_VALF";
}

/* The partials in chunk order, in the accumulator's type, as the combine kernel folds a
 * grid's: the same bits for the same plan. Then the partials are released. */
static void print_fold(strbuf *out, const spec *s)
{
    sb_puts(out, "    if (pg_err == cudaSuccess) {\n"
                 "        const unsigned char *pg_p = (const unsigned char *)pg_parts.ptr;\n");
    for (int k = 0; k < s->naccums; ++k) {
        const spec_accum *acc = &s->accums[k];
        const char *t = ast_type_ctype(acc->type);
        const char *x = arena_printf(out->arena, "pg_acc%d", k);
        sb_printf(out, "        %s %s = %s;\n"
                       "        for (int64_t pg_i = 0; pg_i < pg_lay.chunks; ++pg_i) {\n"
                       "            const %s pg_x = *(const %s *)(pg_p + ((size_t)pg_i * %d + %d) * 8);\n"
                       "            %s = ", t, x, host_identity(acc), t, t, s->naccums, k, x);
        emit_accum_fold(out, acc, x, "pg_x");
        sb_printf(out, ";\n        }\n        pg_a->%s[0] = %s;\n", s->arrays[acc->into].name, x);
    }
    sb_puts(out, "    }\n    const cudaError_t pg_rel = pipert_host_release(&pg_parts);\n"
                 "    if (pg_err == cudaSuccess)\n        pg_err = pg_rel;\n");
}

typedef void (*chunk_printer_fn)(strbuf *out, const spec *s);
static const chunk_printer_fn chunk_printers[CH__COUNT] = {
    [CH_NEXT] = print_chunk_next, [CH_COPY_IN] = print_chunk_copy_in,
    [CH_LAUNCH] = print_chunk_launch, [CH_PART_OUT] = print_chunk_part_out,
    [CH_COPY_OUT] = print_chunk_copy_out, [CH_DONE] = print_chunk_done,
    [CH_END] = print_stream_end, [CH_FOLD] = print_fold,
};

/* The launcher's checks apply to the host arrays as they are (sizes, NULL, alignment,
 * overlap); the rest of its plan is each chunk's launch. */
static bool is_check(host_op_kind k)
{
    return k == HOP_CHECK_ARGS || k == HOP_CHECK_SIZE || k == HOP_CHECK_ARRAY
           || k == HOP_CHECK_DISJOINT;
}

static void emit_stream_fn(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    const stream_ring *r = u->host->ring;
    if (!r)
        return;
    hctx h = {out, u, s};
    sb_printf(out, "\nextern \"C\" cudaError_t %s_stream(const struct %s_args *pg_a,\n"
                   "    const struct pipert_stream_plan *pg_plan)\n{\n", s->name, s->name);
    for (int i = 0; i < u->host->nops; ++i)
        if (is_check(u->host->ops[i].kind))
            host_printers[u->host->ops[i].kind](&h, &u->host->ops[i]);
    emit_stream_problem(out, u);
    for (int i = 0; i < r->nops; ++i)
        chunk_printers[r->ops[i]](out, s);
    sb_puts(out, "    }\n");
    for (int i = 0; i < r->nafter; ++i)
        chunk_printers[r->after[i]](out, s);
    sb_puts(out, "    return pg_err;\n}\n");
}

static void emit_workspace_fn(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    if (!plan_has_workspace(s))
        return;
    /* No arguments, nothing to size: 0 (docs/generated-api.md), not a read through NULL. */
    sb_printf(out, "\nextern \"C\" size_t %s_workspace_bytes(const struct %s_args *pg_a,\n"
                   "    const pipert_launch_opts *%s)\n{\n    if (!pg_a)\n        return 0;\n",
              s->name, s->name, s->naccums ? "pg_opts" : "");
    if (!s->naccums) {   /* the tile counter, where a kernel claims its work items */
        sb_printf(out, "    return %d;\n}\n", has_tile_counter(u->host) ? 8 : 0);
        return;
    }
    sb_puts(out, "    int64_t pg_ntiles = ");
    emit_ntiles(out, s, "pg_a->");
    sb_printf(out, ";\n    if (pg_opts && (int64_t)pg_opts->grid_blocks > pg_ntiles)\n"
                   "        pg_ntiles = pg_opts->grid_blocks;\n"
                   "    return (size_t)(pg_ntiles > 0 ? pg_ntiles : 1) * %d;\n}\n",
              8 * s->naccums);
}

/* ------------------------------------------------------------------ the source */

/* The IR of a kernel, and the architectures it serves (sm_low and up to sm_high, the
 * architectures whose schedules print this same kernel). */
static void emit_schedule_comment(strbuf *out, const sched *sc, const char *also)
{
    sb_printf(out, "/* Schedule for sm_%d%s, lowering %s: a ring of %d slot(s), %lld bytes of "
                   "shared memory\n * per block, %d threads, %s grid.\n",
              sc->sm, also, mech_name(sc->mech), sc->nslots, sc->smem_bytes, sc->threads,
              sc->grid == GRID_PERSISTENT ? "persistent" : "one block per work item");
    if (sc->regs_launch)
        sb_printf(out, " * Registers a thread: %d at launch; setmaxnreg: the producers keep %d, "
                       "the consumers take %d.\n", sc->regs_launch, sc->regs_producer,
                  sc->regs_consumer);
    for (int i = 0; i < sc->nsecs; ++i) {
        const ir_section *sec = &sc->secs[i];
        if (sec->kind == SEC_FRAME)
            sb_puts(out, " *   frame:");
        else if (sec->kind == SEC_PROLOGUE)
            sb_printf(out, " *   prologue p in [0,%d):", sec->count);
        else
            sb_puts(out, sec->kind == SEC_LOOP ? " *   loop t in [0,trips):" : " *   epilogue:");
        for (int j = 0; j < sec->nops; ++j) {
            sb_puts(out, j ? "; " : " ");
            ir_op_print(out, &sec->ops[j], sec->kind == SEC_PROLOGUE ? "p" : "t");
        }
        sb_puts(out, "\n");
    }
    sb_puts(out, " */\n");
}

/* The runtime's device headers the unit's kernels use, each once (pipert_device.cuh for
 * all; a lowering's own header for what its printers call). */
static void emit_device_includes(strbuf *out, const emit_unit *u)
{
    const host_plan *hp = u->host;
    sb_puts(out, "#include \"pipert_device.cuh\"\n");
    for (int v = 0; v < hp->nvariants; ++v) {
        const char *h = mech_module_of(u->scheds[hp->variant[v]]->mech)->header;
        bool dup = !h;
        for (int w = 0; w < v && !dup; ++w)
            dup = mech_module_of(u->scheds[hp->variant[w]]->mech)->header == h;
        if (!dup)
            sb_printf(out, "#include \"%s\"\n", h);
    }
}

/* Compiled for an architecture below every kernel's, the file would hold empty kernels
 * and its launcher fail at run time: it fails to compile instead, naming the flags. An
 * older CUDA than the one it is written for fails here too, with its reason, rather than
 * at some intrinsic or PTX instruction it lacks. */
static void emit_arch_guard(strbuf *out, const emit_unit *u)
{
    sb_printf(out, "#if !defined(CUDART_VERSION) || CUDART_VERSION < %d\n"
                   "#error \"generated by pipegen %s for CUDA %d.%d or newer: compile with a newer "
                   "nvcc and CUDA runtime\"\n#endif\n", PIPEGEN_MIN_CUDART, PIPEGEN_VERSION,
              PIPEGEN_MIN_CUDART / 1000, PIPEGEN_MIN_CUDART % 1000 / 10);
    strbuf archs, flags;
    sb_init(&archs, out->arena);
    sb_init(&flags, out->arena);
    for (int i = 0; i < u->nscheds; ++i) {
        int sm = u->scheds[i]->sm;
        const char *a = u->scheds[i]->specific ? "a" : "";
        sb_printf(&archs, "%ssm_%d%s", i ? "," : "", sm, a);
        sb_printf(&flags, " -gencode arch=compute_%d%s,code=sm_%d%s", sm, a, sm, a);
    }
    const sched *top = u->scheds[u->nscheds - 1];
    sb_printf(&flags, " -gencode arch=compute_%d%s,code=compute_%d%s", top->sm,
              top->specific ? "a" : "", top->sm, top->specific ? "a" : "");
    sb_printf(out, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < %d0\n"
                   "#error \"generated by pipegen --arch=%s: compile for those, e.g. nvcc%s\"\n"
                   "#endif\n", u->scheds[0]->sm, archs.data, flags.data);
    /* An arch-specific target is asked for where a body needs its instructions (wgmma):
     * compiled for the plain architecture the body would quietly take its other path. */
    for (int i = 0; i < u->nscheds; ++i) {
        const int sm = u->scheds[i]->sm;
        if (u->scheds[i]->specific)
            sb_printf(out, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == %d0 && "
                           "!defined(__CUDA_ARCH_FEAT_SM%d_ALL)\n"
                           "#error \"generated by pipegen --arch=%s: compile sm_%d as sm_%da, "
                           "e.g. nvcc -gencode arch=compute_%da,code=sm_%da\"\n#endif\n",
                      sm, sm, archs.data, sm, sm, sm, sm);
    }
}

/* The schedules a variant's kernel also serves, as " (also sm_90)". */
static const char *twins_of(arena *a, const emit_unit *u, int v)
{
    const host_plan *hp = u->host;
    int lo = hp->variant[v], hi = v > 0 ? hp->variant[v - 1] : u->nscheds;
    strbuf sb;
    sb_init(&sb, a);
    for (int i = lo + 1; i < hi; ++i)
        sb_printf(&sb, "%ssm_%d", i > lo + 1 ? ", " : " (also ", u->scheds[i]->sm);
    sb_puts(&sb, hi > lo + 1 ? ")" : "");
    return sb.data;
}

void emit_source(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    const host_plan *hp = u->host;
    emit_banner(out, s);
    sb_printf(out, "#include \"%s\"\n", u->opts.header_name);
    emit_stamp_check(out, &u->opts);
    sb_puts(out, "#include <cuda_runtime.h>\n");
    sb_printf(out, "#if !defined(PIPERT_ABI_VERSION) || PIPERT_ABI_VERSION != %d\n"
                   "#error \"%s.pipe was generated for pipert ABI version %d: use the pipert.h "
                   "of pipegen %s\"\n#endif\n", PIPEGEN_PIPERT_ABI, s->name, PIPEGEN_PIPERT_ABI,
              PIPEGEN_VERSION);
    emit_arch_guard(out, u);
    emit_device_includes(out, u);
    sb_puts(out, "\n");
    /* Lowest architecture first: it compiles for every target, the others above it. */
    for (int v = hp->nvariants - 1; v >= 0; --v) {
        const sched *sc = u->scheds[hp->variant[v]];
        emit_schedule_comment(out, sc, twins_of(out->arena, u, v));
        verify_phase_table(out, sc);
        emit_kernel(out, u, sc, sc->sm, v < hp->nvariants - 1 ? sc->sm : 0,
                    v > 0 ? u->scheds[hp->variant[v - 1]]->sm : 0);
    }
    emit_kernel_table(out, u);
    if (s->naccums)
        emit_combine_kernel(out, u);
    emit_launch_ex(out, u);
    emit_workspace_fn(out, u);
    emit_stream_fn(out, u);
    emit_resolve_lines(out);
}
