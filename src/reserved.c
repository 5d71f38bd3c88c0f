/* reserved: the names a spec may not declare, because the generated CUDA could not use
 * them: C, C++ and CUDA keywords, built-in variables and types, the standard names the
 * generated sources and drivers call or include (a parameter named `printf` or `NULL`
 * breaks the test driver), and the generated code's own names (pg_*, PG_*, PIPEGEN_*,
 * pipert_*, PIPERT_*, the kernels' template parameter VEC). nvcc would otherwise reject
 * the output, far from the spec line at fault. */
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
    /* the generated code's own */
    "VEC", "HINT_OPERAND", NULL,
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
    {"pipert_", "names beginning with 'pipert_' are reserved for the pipegen runtime"},
    {"PIPERT_", "names beginning with 'PIPERT_' are reserved for the pipegen runtime"},
    {"cuda", "names beginning with 'cuda' are reserved for the CUDA runtime"},
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
    if (reserved_vector_type(name))
        return "a CUDA vector type";
    return NULL;
}
