/* arena: bump allocation in large chunks, freed all at once (the compiler's memory policy),
 * strbuf, the growable text buffer the emitters write into, and the text helpers. */
#include "pipegen.h"

#include <stdlib.h>
#include <string.h>

enum { CHUNK_MIN = 64 * 1024, ALIGN = 16 };

typedef struct chunk {
    struct chunk *prev;
    size_t used, size;
    _Alignas(ALIGN) unsigned char data[];
} chunk;

struct arena {
    chunk *top;
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fputs("pipegen: out of memory\n", stderr);
        abort();
    }
    return p;
}

arena *arena_new(void)
{
    arena *a = xmalloc(sizeof *a);
    a->top = NULL;
    return a;
}

void arena_free(arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->top, *prev; c; c = prev) {
        prev = c->prev;
        free(c);
    }
    free(a);
}

void *arena_alloc(arena *a, size_t size)
{
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (!a->top || a->top->size - a->top->used < size) {
        size_t cap = size > CHUNK_MIN ? size : CHUNK_MIN;
        chunk *c = xmalloc(sizeof *c + cap);
        c->prev = a->top;
        c->used = 0;
        c->size = cap;
        a->top = c;
    }
    void *p = a->top->data + a->top->used;
    a->top->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(arena *a, const char *fmt, ...)
{
    strbuf sb;
    sb_init(&sb, a);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    return sb.data;
}

void *arena_grow(arena *a, void *items, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return items;
    int ncap = *cap ? *cap * 2 : 8;
    while (ncap < need)
        ncap *= 2;
    void *p = arena_alloc(a, (size_t)ncap * elem);
    if (items)
        memcpy(p, items, (size_t)*cap * elem);
    *cap = ncap;
    return p;
}

/* ------------------------------------------------------------------------ strbuf */

static void sb_reserve(strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    size_t ncap = sb->cap ? sb->cap * 2 : 256;
    while (ncap < sb->len + extra + 1)
        ncap *= 2;
    char *p = arena_alloc(sb->arena, ncap);
    if (sb->len)
        memcpy(p, sb->data, sb->len);
    sb->data = p;
    sb->cap = ncap;
}

void sb_init(strbuf *sb, arena *a)
{
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->arena = a;
    sb_reserve(sb, 0);
    sb->data[0] = '\0';
}

void sb_putn(strbuf *sb, const char *s, size_t n)
{
    sb_reserve(sb, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void sb_puts(strbuf *sb, const char *s)
{
    sb_putn(sb, s, strlen(s));
}

void sb_vprintf(strbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    sb_reserve(sb, (size_t)n);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

/* 64-bit FNV-1a: deterministic, and two texts that differ in any byte differ in it but by
 * a 2^-64 chance (the stamp of a header, the key of a spec's wisdom). */
unsigned long long text_hash(const char *data, size_t len)
{
    unsigned long long h = 14695981039346656037ull;
    for (size_t i = 0; i < len; ++i)
        h = (h ^ (unsigned char)data[i]) * 1099511628211ull;
    return h;
}

bool text_word_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
           || ch == '_';
}

bool text_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

const char *text_skip_blank(const char *p)
{
    while (text_blank(*p))
        ++p;
    return p;
}

const char *text_skip_literal(const char *p)
{
    if (p[0] == '/' && p[1] == '/')
        return p + strcspn(p, "\n");
    if (p[0] == '/' && p[1] == '*') {
        /* Not strstr: ASan's measures the whole rest of the text on every call, which made
         * a line of many comments quadratic. */
        const char *end = p + 2;
        while (*end && !(end[0] == '*' && end[1] == '/'))
            ++end;
        return *end ? end + 2 : end;
    }
    if (*p != '"' && *p != '\'')
        return p;
    const char *c = p + 1;
    while (*c && *c != *p)
        c += c[0] == '\\' && c[1] ? 2 : 1;
    return *c ? c + 1 : c;
}

bool text_next_word(const char *text, const char *name, const char **at)
{
    const size_t len = strlen(name);
    for (const char *p = strstr(*at ? *at + 1 : text, name); p; p = strstr(p + 1, name))
        if ((p == text || !text_word_char(p[-1])) && !text_word_char(p[len])) {
            *at = p;
            return true;
        }
    return false;
}

bool text_names(const char *text, const char *name)
{
    const char *at = NULL;
    return text && text_next_word(text, name, &at);
}
