/* reserved: the names a spec may not declare, because the generated CUDA could not use
 * them: C, C++, CUDA and GNU keywords, built-in variables and types, the standard names the
 * generated sources and drivers call or include (a parameter named `printf` or `NULL`
 * breaks the test driver), the macros the compiler predefines or the standard headers
 * that nvcc includes define (`linux`, `M_PI`, `INT64_MAX`: the name would be replaced by
 * the macro's text), and the generated code's own names (pg_*, PG_*, PIPEGEN_*, pipegen_*,
 * pipert_*, PIPERT_*, the kernels' template parameter VEC, the args struct's members, the
 * functions named after the pipeline). nvcc would otherwise reject the output, far from
 * the spec line at fault. No list knows every macro a header may define: the generated
 * header stops with an #error naming any declared name that is a macro there. */
#include "pipegen.h"

#include <ctype.h>
#include <string.h>

static const char *const reserved_keywords[] = {
    /* C11 */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while",
    /* C++20 (with the alternative tokens and the contextual final, override, import, module) */
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr",
    "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "false", "final", "friend", "import", "module",
    "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "override", "private", "protected", "public", "reinterpret_cast", "requires",
    "static_assert", "static_cast", "template", "this", "thread_local", "throw", "true", "try",
    "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
    /* C23 and GNU (gcc's C++ takes typeof too) */
    "typeof", "typeof_unqual",
    /* CUDA built-in variables and types */
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "half", "half2",
    "nv_bfloat16", "nv_bfloat162", NULL,
};

static const char *const reserved_used[] = {
    /* standard types and macros the generated code includes or uses */
    "NULL", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "int8_t", "int16_t", "int32_t",
    "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "stdin", "stdout", "stderr",
    "errno", "assert", "offsetof", "INFINITY", "NAN", "EOF", "std", "main",
    /* standard functions the generated sources and drivers call */
    "printf", "fprintf", "snprintf", "memcpy", "memset", "memcmp", "malloc", "free", "exit",
    "getenv", "atoll", "fabs", "sqrt", "isnan",
    /* the generated code's own: the kernels' template parameter and hint, the args
     * struct's members */
    "VEC", "HINT_OPERAND", "workspace", "workspace_bytes", NULL,
};

/* Macros: those gcc predefines in its GNU modes (nvcc's host compiler), and those of the
 * standard headers that cuda_runtime.h (which nvcc includes first) or a user's own code
 * brings in. An object-like one would replace the name; a function-like one (alloca) would
 * stop the header's guard (emit_name_guards). The integer limits of <stdint.h> and the
 * constants of <math.h> and <float.h> are matched by form below. */
static const char *const reserved_macros[] = {
    "linux", "unix", "i386",
    /* <limits.h> */
    "CHAR_BIT", "CHAR_MAX", "CHAR_MIN", "SCHAR_MAX", "SCHAR_MIN", "UCHAR_MAX", "SHRT_MAX",
    "SHRT_MIN", "USHRT_MAX", "LONG_MAX", "LONG_MIN", "ULONG_MAX", "LLONG_MAX", "LLONG_MIN",
    "ULLONG_MAX", "MB_LEN_MAX", "SSIZE_MAX", "PATH_MAX", "NAME_MAX",
    /* <stdint.h>, <stddef.h>, <stdio.h>, <stdlib.h>, <errno.h>, <time.h> */
    "SIZE_MAX", "PTRDIFF_MAX", "PTRDIFF_MIN", "SIG_ATOMIC_MAX", "SIG_ATOMIC_MIN", "WCHAR_MAX",
    "WCHAR_MIN", "WINT_MAX", "WINT_MIN", "BUFSIZ", "FILENAME_MAX", "FOPEN_MAX", "TMP_MAX",
    "L_tmpnam", "SEEK_SET", "SEEK_CUR", "SEEK_END", "EXIT_SUCCESS", "EXIT_FAILURE",
    "RAND_MAX", "MB_CUR_MAX", "EDOM", "ERANGE", "EILSEQ", "EINVAL", "ENOMEM", "CLOCKS_PER_SEC",
    "alloca",
    /* <math.h> */
    "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "MAXFLOAT", "FP_NAN", "FP_INFINITE", "FP_ZERO",
    "FP_SUBNORMAL", "FP_NORMAL", "FP_ILOGB0", "FP_ILOGBNAN", "FP_FAST_FMA", "FP_FAST_FMAF",
    "math_errhandling", "MATH_ERRNO", "MATH_ERREXCEPT", NULL,
};

static bool reserved_in(const char *const *words, const char *name)
{
    for (; *words; ++words)
        if (strcmp(name, *words) == 0)
            return true;
    return false;
}

static const struct {
    const char *prefix;
    const char *why;
} reserved_prefixes[] = {
    {"pg_", "names beginning with 'pg_' are reserved for the generated code"},
    {"PG_", "names beginning with 'PG_' are reserved for the generated code"},
    {"PIPEGEN_", "names beginning with 'PIPEGEN_' are reserved for the generated code"},
    {"pipegen_", "names beginning with 'pipegen_' are reserved for the generated code"},
    {"pipert_", "names beginning with 'pipert_' are reserved for the pipegen runtime"},
    {"PIPERT_", "names beginning with 'PIPERT_' are reserved for the pipegen runtime"},
    {"cuda", "names beginning with 'cuda' are reserved for the CUDA runtime"},
    {"CUDA", "names beginning with 'CUDA' are reserved for CUDA's macros (CUDART_VERSION)"},
    {"CU_", "names beginning with 'CU_' are reserved for CUDA's macros"},
    {"NV_", "names beginning with 'NV_' are reserved for CUDA's macros"},
    {"FLT_", "names beginning with 'FLT_' are macros of <float.h>"},
    {"DBL_", "names beginning with 'DBL_' are macros of <float.h>"},
    {"LDBL_", "names beginning with 'LDBL_' are macros of <float.h>"},
    {"__", "names beginning with '__' are reserved in C and C++"},
};

/* CUDA's vector types: char1 .. double4, uchar2, longlong4, ... */
static bool reserved_vector_type(const char *name)
{
    static const char *const bases[] = {
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
        "ulonglong", "float", "double",
    };
    size_t n = strlen(name);
    if (n < 2 || name[n - 1] < '1' || name[n - 1] > '4')
        return false;
    for (size_t i = 0; i < sizeof bases / sizeof *bases; ++i)
        if (strlen(bases[i]) == n - 1 && strncmp(name, bases[i], n - 1) == 0)
            return true;
    return false;
}

/* The limits of <stdint.h>: [U]INT{8,16,32,64,MAX,PTR}_{MAX,MIN,WIDTH,C},
 * [U]INT_{LEAST,FAST}{8,16,32,64}_{MAX,MIN,WIDTH} and [U]INT_{MAX,MIN,WIDTH}. */
static bool reserved_int_limit(const char *name)
{
    static const char *const widths[] = {"_LEAST", "_FAST", "MAX", "PTR", ""};
    static const char *const ends[] = {"_MAX", "_MIN", "_WIDTH", "_C", NULL};
    const char *p = name + (name[0] == 'U');
    if (strncmp(p, "INT", 3) != 0)
        return false;
    p += 3;
    size_t w = 0;
    while (strncmp(p, widths[w], strlen(widths[w])) != 0)
        ++w;
    p += strlen(widths[w]);
    if (w < 2 && !strspn(p, "0123456789"))     /* _LEAST and _FAST take a width */
        return false;
    p += strspn(p, "0123456789");
    return reserved_in(ends, p);
}

/* The constants of <math.h>: M_PI, M_E, M_SQRT2, M_1_PI, M_PIf, ... */
static bool reserved_math_constant(const char *name)
{
    return strncmp(name, "M_", 2) == 0 && (isupper((unsigned char)name[2])
                                           || isdigit((unsigned char)name[2]));
}

const char *reserved_why(const char *name)
{
    for (size_t i = 0; i < sizeof reserved_prefixes / sizeof *reserved_prefixes; ++i)
        if (strncmp(name, reserved_prefixes[i].prefix, strlen(reserved_prefixes[i].prefix)) == 0)
            return reserved_prefixes[i].why;
    if (name[0] == '_' && isupper((unsigned char)name[1]))
        return "names beginning with '_' and a capital letter are reserved in C and C++";
    if (reserved_in(reserved_keywords, name))
        return "a keyword or built-in name of C, C++ or CUDA";
    if (reserved_in(reserved_used, name))
        return "a name the generated code uses";
    if (reserved_in(reserved_macros, name) || reserved_int_limit(name))
        return "a macro of the compiler or of a standard header";
    if (reserved_math_constant(name))
        return "names beginning with 'M_' and a capital letter or digit are constants of <math.h>";
    if (reserved_vector_type(name))
        return "a CUDA vector type";
    return NULL;
}

/* The functions and types the generated code names after the pipeline: NAME_args,
 * NAME_launch, NAME_launch_ex, NAME_stream, NAME_workspace_bytes, the kernels NAME_smNN and
 * NAME_combine, the kernel table NAME_k and its architectures NAME_sm. */
const char *reserved_after_pipeline(const char *pipeline, const char *name)
{
    static const char *const suffixes[] = {
        "args", "launch", "launch_ex", "stream", "workspace_bytes", "k", "sm", "combine",
        "combine_launch", NULL,
    };
    size_t n = strlen(pipeline);
    if (strncmp(name, pipeline, n) != 0 || name[n] != '_')
        return NULL;
    const char *rest = name + n + 1;
    bool kernel = strncmp(rest, "sm", 2) == 0 && rest[2]
                  && strspn(rest + 2, "0123456789") == strlen(rest + 2);
    return kernel || reserved_in(suffixes, rest)
               ? "a name the generated code gives a function or type of this pipeline"
               : NULL;
}
