/* emit_kernel: print one schedule's kernel from its IR.
 *
 * The kernel is a fixed frame (the block's share of the work, the spec's names bound to
 * parameters, sizes and arrays) around the IR's sections, each a loop over its operations.
 * How an operation reads in CUDA depends on the mechanism: each mechanism module has a
 * printer per operation; the helpers they share, and the printers common to all (barrier,
 * compute), are here. */
#include "pipegen.h"

#include <string.h>

void kp(kctx *k, const char *fmt, ...)
{
    strbuf tmp;
    sb_init(&tmp, k->out->arena);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&tmp, fmt, ap);
    va_end(ap);
    bool line_start = k->out->len == 0 || k->out->data[k->out->len - 1] == '\n';
    for (const char *c = tmp.data; *c; ++c) {
        if (line_start && *c != '\n')
            sb_printf(k->out, "%*s", k->ind, "");
        sb_putn(k->out, c, 1);
        line_start = *c == '\n';
    }
}

/* ------------------------------------------------------------------ naming */

static const char *elem_ctype(elem_type t) { return ast_type_ctype(t); }

static long long stage_stride(const spec_stage *st) { return (st->bytes + 127) / 128 * 128; }

static void emit_affine(strbuf *out, const affine *a)
{
    sb_puts(out, "(");
    for (int i = 0; i < a->nterms; ++i) {
        if (a->coef[i] == 1)
            sb_printf(out, "%s%s", i ? " + " : "", a->var[i]);
        else
            sb_printf(out, "%s%lld * %s", i ? " + " : "", a->coef[i], a->var[i]);
    }
    if (a->c || !a->nterms)
        sb_printf(out, "%s%lld", a->nterms ? " + " : "", a->c);
    sb_puts(out, ")");
}

/* A view over an array's staged slot, or over the whole global array. */
static void emit_view_type(strbuf *out, const spec_array *arr)
{
    const char *c = arr->dir == DIR_IN ? "const " : "";
    if (arr->rank == 1)
        sb_printf(out, "pg_view1<%s%s>", c, elem_ctype(arr->type));
    else
        sb_printf(out, "pg_view%d<%s%s>", arr->rank, c, elem_ctype(arr->type));
}

/* ------------------------------------------------------------------ the frame */

static void emit_size_of_dim(kctx *k, const ast_extent *e)
{
    if (e->name)
        kp(k, "%s", e->name);
    else
        kp(k, "(int64_t)%lld", e->value);
}

/* The spec's names, bound as the bodies see them. Each is also cast to void: a body need
 * not use them all. */
static void emit_bindings(kctx *k)
{
    const spec *s = k->s;
    for (int i = 0; i < s->nparams; ++i)
        kp(k, "const %s %s = pg_args.%s;\n(void)%s;\n", elem_ctype(s->params[i].type),
           s->params[i].name, s->params[i].name, s->params[i].name);
    for (int i = 0; i < s->nsizes; ++i)
        kp(k, "const int64_t %s = pg_args.%s;\n(void)%s;\n", s->sizes[i], s->sizes[i],
           s->sizes[i]);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        const char *c = arr->dir == DIR_IN ? "const " : "";
        if (arr->staged >= 0) {
            kp(k, "const unsigned char *const pg_g_%s = (const unsigned char *)pg_args.%s;\n",
               arr->name, arr->name);
            continue;
        }
        if (arr->rank == 1) {
            kp(k, "%s%s *const %s = pg_args.%s;\n", c, elem_ctype(arr->type), arr->name,
               arr->name);
        } else {
            /* A whole global array: a view with origin 0 and the array's pitches. */
            kp(k, "const ");
            emit_view_type(k->out, arr);
            kp(k, " %s{pg_args.%s, 0, 0%s", arr->name, arr->name, arr->rank == 3 ? ", 0" : "");
            for (int d = 1; d < arr->rank; ++d) {
                kp(k, ", ");
                for (int e = d; e < arr->rank; ++e) {
                    kp(k, e > d ? " * " : "");
                    emit_size_of_dim(k, &arr->dims[e]);
                }
            }
            kp(k, "};\n");
        }
        kp(k, "(void)%s;\n", arr->name);
    }
}

static void emit_stage_consts(kctx *k)
{
    const spec *s = k->s;
    for (int i = 0; i < s->nstages; ++i) {
        const spec_stage *st = &s->stages[i];
        const spec_array *arr = &s->arrays[st->array];
        int esz = ast_type_size(arr->type), vec = k->sc->copy[i].vec;
        /* The copy width of this stage under the kernel's width VEC (see the launcher). */
        kp(k, "constexpr int pg_vec_%s = VEC < %d ? %d : (VEC > %d ? %d : VEC);\n", arr->name,
           esz, esz, vec, vec);
        if (st->evict != EVICT_DEFAULT)
            kp(k, "const uint64_t pg_pol_%s = pg_l2_policy<%d>();\n", arr->name, (int)st->evict);
    }
}

/* The tile of a step (blocks stride over tiles) and its origin per dimension, the
 * fastest-varying dimension last. */
static void emit_tile_origin(kctx *k)
{
    const spec *s = k->s;
    const spec_array *arr = &s->arrays[s->tile_array];
    kp(k, "const int64_t pg_tile = (int64_t)blockIdx.x + pg_step * gridDim.x;\n");
    kp(k, "int64_t pg_rest = pg_tile;\n");
    for (int d = s->tile_rank - 1; d > 0; --d) {
        kp(k, "const int64_t pg_tiles%d = (", d);
        emit_size_of_dim(k, &arr->dims[d]);
        kp(k, " + %lld) / %lld;\n", s->tile[d] - 1, s->tile[d]);
        kp(k, "const int64_t %s = (pg_rest %% pg_tiles%d) * %lld;\n", s->tile_at[d], d,
           s->tile[d]);
        kp(k, "pg_rest /= pg_tiles%d;\n", d);
    }
    kp(k, "const int64_t %s = pg_rest * %lld;\n", s->tile_at[0], s->tile[0]);
    for (int d = 0; d < s->tile_rank; ++d)
        kp(k, "(void)%s;\n", s->tile_at[d]);
    kp(k, "const int pg_slot = (int)(pg_step %% %d);\n(void)pg_slot;\n", k->sc->nslots);
}

void emit_step_open(kctx *k, const ir_op *op)
{
    kp(k, "{\n");
    k->ind += 4;
    if (op->step_off)
        kp(k, "const int64_t pg_step = %s + %d;\n", k->var, op->step_off);
    else
        kp(k, "const int64_t pg_step = %s;\n", k->var);
    if (op->guarded) {
        kp(k, "if (pg_step < pg_trips) {\n");
        k->ind += 4;
    }
    emit_tile_origin(k);
}

void emit_step_close(kctx *k, const ir_op *op)
{
    if (op->guarded) {
        k->ind -= 4;
        kp(k, "}\n");
    }
    k->ind -= 4;
    kp(k, "}\n");
}

/* ------------------------------------------------------------------ operations */

static void emit_region_copy(kctx *k, int si, chunk_printer chunk)
{
    const spec_stage *st = &k->s->stages[si];
    const spec_array *arr = &k->s->arrays[st->array];
    int esz = ast_type_size(arr->type);
    kp(k, "pg_region1<pg_vec_%s, %lldLL>(pg_smem + %lld + pg_slot * %lld, pg_g_%s,\n    ",
       arr->name, st->bytes, k->sc->stage_off[si], stage_stride(st), arr->name);
    emit_affine(k->out, &st->origin[0]);
    kp(k, " * %d, (", esz);
    emit_elems(k->out, arr, "");
    kp(k, ") * %d, threadIdx.x, %d,\n    [&](unsigned char *pg_d, const unsigned char *pg_s, "
          "int pg_v) { ", esz, k->sc->threads);
    chunk(k, st, arr->name);
    kp(k, "; });\n");
}

void emit_copy_regions(kctx *k, const ir_op *op, chunk_printer chunk)
{
    emit_step_open(k, op);
    for (int i = 0; i < k->s->nstages; ++i)
        if ((op->stage < 0 || op->stage == i) && !k->s->stages[i].is_output)
            emit_region_copy(k, i, chunk);
    emit_step_close(k, op);
}

void emit_print_barrier(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "__syncthreads();\n");
}

static void emit_staged_views(kctx *k)
{
    const spec *s = k->s;
    for (int i = 0; i < s->nstages; ++i) {
        const spec_stage *st = &s->stages[i];
        const spec_array *arr = &s->arrays[st->array];
        kp(k, "const ");
        emit_view_type(k->out, arr);
        kp(k, " %s{(%s%s *)(pg_smem + %lld + pg_slot * %lld), ", arr->name,
           arr->dir == DIR_IN ? "const " : "", elem_ctype(arr->type), k->sc->stage_off[i],
           stage_stride(st));
        emit_affine(k->out, &st->origin[0]);
        kp(k, "};\n");
    }
}

/* compute elementwise, rank 1: each thread takes the tile's elements tid, tid+T, ... */
void emit_print_compute(kctx *k, const ir_op *op)
{
    const spec *s = k->s;
    const char *i0 = s->compute.idx[0];
    emit_step_open(k, op);
    emit_staged_views(k);
    kp(k, "for (int pg_e = threadIdx.x; pg_e < %lld; pg_e += %d) {\n", s->tile[0],
       k->sc->threads);
    kp(k, "    const int64_t %s = %s + pg_e;\n    if (%s < ", i0, s->tile_at[0], i0);
    emit_size_of_dim(k, &s->arrays[s->tile_array].dims[0]);
    kp(k, ") {\n");
    emit_body(k->out, &s->compute, &k->u->opts, "");
    kp(k, "    }\n}\n");
    emit_step_close(k, op);
}

/* ------------------------------------------------------------------ sections */

static void emit_section(kctx *k, const ir_section *sec)
{
    if (sec->kind == SEC_PROLOGUE) {
        k->var = "pg_p";
        kp(k, "for (int64_t pg_p = 0; pg_p < %d; ++pg_p) {\n", sec->count);
    } else if (sec->kind == SEC_LOOP) {
        k->var = "pg_t";
        kp(k, "for (int64_t pg_t = 0; pg_t < pg_trips; ++pg_t) {\n");
    } else {
        k->var = "pg_trips";
        kp(k, "{\n");
    }
    k->ind += 4;
    for (int i = 0; i < sec->nops; ++i) {
        const ir_op *op = &sec->ops[i];
        op_printer print = mech_module_of(k->sc->mech)->print[op->kind];
        /* The planner only emits operations its mechanism prints; a hole here is a bug
         * that nvcc will point at. */
        if (!print) {
            kp(k, "#error \"pipegen: no %s printer for %s\"\n", ir_op_name(op->kind),
               mech_name(k->sc->mech));
            continue;
        }
        print(k, op);
    }
    k->ind -= 4;
    kp(k, "}\n");
}

/* ------------------------------------------------------------------ accumulators */

const char *emit_accum_identity(const spec_accum *acc)
{
    static const char *const id[3][TY__COUNT] = {
        [COMBINE_SUM] = {"0.0f", "0.0", "0", "__float2half(0.0f)", "__float2bfloat16(0.0f)", "0"},
        [COMBINE_MIN] = {"__int_as_float(0x7f800000)", "__longlong_as_double(0x7ff0000000000000LL)",
                         "0x7fffffff", "__ushort_as_half((unsigned short)0x7c00)",
                         "__ushort_as_bfloat16((unsigned short)0x7f80)", "255"},
        [COMBINE_MAX] = {"__int_as_float(0xff800000)", "__longlong_as_double((long long)0xfff0000000000000ULL)",
                         "(-0x7fffffff - 1)", "__ushort_as_half((unsigned short)0xfc00)",
                         "__ushort_as_bfloat16((unsigned short)0xff80)", "0"},
    };
    return id[acc->combine][acc->type];
}

void emit_accum_fold(strbuf *out, const spec_accum *acc, const char *x, const char *y)
{
    switch (acc->combine) {
    case COMBINE_SUM: sb_printf(out, "%s + %s", x, y); break;
    case COMBINE_MIN: sb_printf(out, "(%s < %s ? %s : %s)", y, x, y, x); break;
    case COMBINE_MAX: sb_printf(out, "(%s > %s ? %s : %s)", y, x, y, x); break;
    }
}

static void emit_fold_functor(strbuf *out, const spec_accum *acc)
{
    const char *t = elem_ctype(acc->type);
    sb_printf(out, "[](%s pg_x, %s pg_y) -> %s { return ", t, t, t);
    emit_accum_fold(out, acc, "pg_x", "pg_y");
    sb_puts(out, "; }");
}

/* Each block folds its threads' accumulators in a fixed tree and writes one partial per
 * accumulator; the combine kernel folds the partials in a fixed order. */
static void emit_accum_partials(kctx *k)
{
    const spec *s = k->s;
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        const char *t = elem_ctype(acc->type);
        kp(k, "{\n    __shared__ %s pg_red[%d];\n    const %s pg_r = pg_block_reduce<%d>(%s, "
              "pg_red, ", t, k->sc->threads, t, k->sc->threads, acc->name);
        emit_fold_functor(k->out, acc);
        kp(k, ");\n    if (threadIdx.x == 0)\n        ((%s *)((unsigned char *)pg_args.workspace"
              " + (size_t)gridDim.x * %d))[blockIdx.x] = pg_r;\n}\n", t, 8 * i);
    }
}

void emit_combine_kernel(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    enum { NT = 256 };
    sb_printf(out, "__global__ void __launch_bounds__(%d) %s_combine(const struct %s_args "
                   "pg_args, unsigned pg_parts)\n{\n", NT, s->name, s->name);
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        const char *t = elem_ctype(acc->type);
        sb_printf(out, "    {\n        const %s *pg_part = (const %s *)((const unsigned char *)"
                       "pg_args.workspace + (size_t)pg_parts * %d);\n", t, t, 8 * i);
        sb_printf(out, "        %s pg_acc = %s;\n        for (unsigned pg_i = threadIdx.x; pg_i < "
                       "pg_parts; pg_i += %d)\n            pg_acc = ", t, emit_accum_identity(acc),
                  NT);
        emit_accum_fold(out, acc, "pg_acc", "pg_part[pg_i]");
        sb_printf(out, ";\n        __shared__ %s pg_red[%d];\n        const %s pg_r = "
                       "pg_block_reduce<%d>(pg_acc, pg_red, ", t, NT, t, NT);
        emit_fold_functor(out, acc);
        sb_printf(out, ");\n        if (threadIdx.x == 0)\n            pg_args.%s[0] = pg_r;\n"
                       "    }\n", s->arrays[acc->into].name);
    }
    sb_puts(out, "}\n\n");
    sb_printf(out, "static cudaError_t %s_combine_launch(const struct %s_args *pg_a, unsigned "
                   "pg_parts, cudaStream_t pg_stream)\n{\n"
                   "    %s_combine<<<1, %d, 0, pg_stream>>>(*pg_a, pg_parts);\n"
                   "    return cudaGetLastError();\n}\n\n", s->name, s->name, s->name, NT);
}

/* ------------------------------------------------------------------ the kernel */

void emit_kernel(strbuf *out, const emit_unit *u, const sched *sc)
{
    const spec *s = u->spec;
    kctx k = {out, u, s, sc, "pg_t", 0};
    kp(&k, "template <int VEC>\n__global__ void __launch_bounds__(%d) %s_sm%d(const struct "
           "%s_args pg_args, const int64_t pg_ntiles)\n{\n", sc->threads, s->name, sc->sm,
       s->name);
    kp(&k, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= %d0\n", sc->sm);
    k.ind = 4;
    kp(&k, "extern __shared__ __align__(128) unsigned char pg_smem[];\n"
           "const int64_t pg_trips = (int64_t)blockIdx.x < pg_ntiles\n"
           "    ? (pg_ntiles - 1 - (int64_t)blockIdx.x) / gridDim.x + 1 : 0;\n");
    emit_bindings(&k);
    emit_stage_consts(&k);
    for (int i = 0; i < s->naccums; ++i)
        kp(&k, "%s %s = %s;\n", elem_ctype(s->accums[i].type), s->accums[i].name,
           emit_accum_identity(&s->accums[i]));
    for (int i = 0; i < sc->nsecs; ++i)
        emit_section(&k, &sc->secs[i]);
    emit_accum_partials(&k);
    k.ind = 0;
    kp(&k, "#else\n    (void)pg_args;\n    (void)pg_ntiles;\n#endif\n}\n\n");
}
