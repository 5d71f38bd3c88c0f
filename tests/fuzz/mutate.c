/* mutate: deterministic mutants of one .pipe seed, for tests/fuzz/run.sh.
 *
 * usage: mutate SEED OUTDIR PREFIX COUNT
 * writes OUTDIR/PREFIX-NNNN.pipe for NNNN = 0 .. COUNT-1. The first quarter are
 * truncations of the seed at every N bytes; the rest apply 1 to 3 random edits each
 * (byte flips, deleted/duplicated/swapped tokens, inserted braces, NUL bytes, huge
 * integers, deep nesting, very long lines, keywords out of place...). The random
 * generator is seeded from the seed's bytes and the mutant's number, so a failing
 * mutant can be regenerated exactly.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OUT = 1 << 20 };   /* mutants stay under 1 MiB so a run stays fast */

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rnd(rng *r)
{
    /* splitmix64 */
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t below(rng *r, size_t n)
{
    return n ? (size_t)(rnd(r) % n) : 0;
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void reserve(buf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        die("realloc");
    b->cap = cap;
}

static void insert(buf *b, size_t at, const void *s, size_t n)
{
    if (n == 0 || b->len + n > MAX_OUT)
        return;
    reserve(b, n);
    memmove(b->p + at + n, b->p + at, b->len - at);
    memcpy(b->p + at, s, n);
    b->len += n;
}

static void erase(buf *b, size_t at, size_t n)
{
    if (at >= b->len)
        return;
    if (at + n > b->len)
        n = b->len - at;
    memmove(b->p + at, b->p + at + n, b->len - at - n);
    b->len -= n;
}

static void insert_str(buf *b, size_t at, const char *s)
{
    insert(b, at, s, strlen(s));
}

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A random token: [start, end) of a word or of one punctuation byte. */
static int pick_token(rng *r, const buf *b, size_t *start, size_t *end)
{
    for (int tries = 0; tries < 16 && b->len; tries++) {
        size_t i = below(r, b->len);
        if (is_space(b->p[i]))
            continue;
        size_t s = i, e = i + 1;
        if (is_word(b->p[i])) {
            while (s > 0 && is_word(b->p[s - 1]))
                s--;
            while (e < b->len && is_word(b->p[e]))
                e++;
        }
        *start = s;
        *end = e;
        return 1;
    }
    return 0;
}

/* A random digit run, for replacing numbers. */
static int pick_number(rng *r, const buf *b, size_t *start, size_t *end)
{
    for (int tries = 0; tries < 32 && b->len; tries++) {
        size_t i = below(r, b->len);
        if (b->p[i] < '0' || b->p[i] > '9')
            continue;
        size_t s = i, e = i + 1;
        while (s > 0 && is_word(b->p[s - 1]))
            s--;
        while (e < b->len && is_word(b->p[e]))
            e++;
        *start = s;
        *end = e;
        return 1;
    }
    return 0;
}

static const char *const dictionary[] = {
    "pipeline", "param", "in", "out", "inout", "threads", "stages", "producer_warps",
    "march", "grid", "per_tile", "persistent", "tile", "at", "steps", "over", "by",
    "stage", "using", "cache", "prefetch", "evict", "halo", "accum", "combine", "into",
    "compute", "elementwise", "step", "prologue", "epilogue", "reference", "float",
    "double", "int", "half", "bfloat16", "uint8", "int8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "uchar4", "char4", "short2", "float2", "float4", "half2",
    "int2", "int4", "unsigned", "ca", "cg", "first", "clamp", "zero",
    "sum", "max", "cp.async", "cp.async.mbarrier", "pipeline-roles", "bulk", "tensor",
    "sync", "auto", "x", "n", "K", ";", ",", "[", "]", ":", "(", ")", "+", "-", "*", "{",
    "}", "//", "/*", "*/", "\"", "'", "\\", "@", "#", "0", "1", "3", "4096", "0x10",
    "\n", "\t", "\r\n", "\xc3\xa9", "\xff",
};
static const char *const numbers[] = {
    "0", "1", "2", "3", "7", "31", "32", "33", "64", "127", "128", "255", "256", "1024",
    "4096", "65536", "2147483647", "2147483648", "4294967295", "4294967296",
    "9223372036854775807", "9223372036854775808", "99999999999999999999999",
    "0x7fffffffffffffff", "0xffffffffffffffff", "0x", "0x1g", "-1", "-0", "1e3",
};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Deep nesting or very long content: the stress the grammar and the lexer must survive. */
static void insert_stress(rng *r, buf *b, size_t at)
{
    static const char *const open[] = { "(", "[", "{", "-", "/*", "\"", "((i+", "[0:" };
    static const size_t depths[] = { 10, 100, 999, 1001, 5000, 40000 };
    size_t k = depths[below(r, COUNT_OF(depths))];
    size_t o = below(r, COUNT_OF(open) + 2);
    buf s = { 0 };
    if (o < COUNT_OF(open)) {
        for (size_t i = 0; i < k; i++)
            insert_str(&s, s.len, open[o]);
        insert_str(&s, s.len, "i");
        if (below(r, 2))
            for (size_t i = 0; i < k; i++)
                insert_str(&s, s.len, o == 1 ? "]" : o == 2 ? "}" : o == 4 ? "*/" : ")");
    } else if (o == COUNT_OF(open)) {
        for (size_t i = 0; i < k * 4; i++)   /* a very long identifier */
            insert_str(&s, s.len, "abcdefgh" + (i % 8));
    } else {
        for (size_t i = 0; i < k; i++)       /* a very long list */
            insert_str(&s, s.len, below(r, 2) ? "x, " : "[0 : 1]");
    }
    insert(b, at, s.p, s.len);
    free(s.p);
}

static void mutate_once(rng *r, buf *b)
{
    size_t s, e, at = below(r, b->len + 1);
    switch (below(r, 15)) {
    case 0:   /* flip one bit */
        if (b->len)
            b->p[below(r, b->len)] ^= (unsigned char)(1u << below(r, 8));
        break;
    case 1: { /* replace one byte by an interesting one */
        static const unsigned char bytes[] = "{}\"'/*\n;[]:()\\@\x7f\x80\xff";
        if (b->len)
            b->p[below(r, b->len)] = bytes[below(r, sizeof bytes)];   /* includes the NUL */
        break;
    }
    case 2:   /* delete a token */
        if (pick_token(r, b, &s, &e))
            erase(b, s, e - s);
        break;
    case 3:   /* duplicate a token, a few times (from a copy: insert may move b->p) */
        if (pick_token(r, b, &s, &e)) {
            buf tok = { 0 };
            insert(&tok, 0, b->p + s, e - s);
            size_t times = 1 + below(r, below(r, 4) ? 2 : 50);
            for (size_t i = 0; i < times; i++)
                insert(b, e, tok.p, tok.len);
            free(tok.p);
        }
        break;
    case 4:   /* an extra brace */
        insert_str(b, at, below(r, 2) ? "{" : "}");
        break;
    case 5:   /* NUL bytes */
        insert(b, at, "\0\0\0", 1 + below(r, 3));
        break;
    case 6:   /* a number replaced */
        if (pick_number(r, b, &s, &e)) {
            erase(b, s, e - s);
            insert_str(b, s, numbers[below(r, COUNT_OF(numbers))]);
        } else {
            insert_str(b, at, numbers[below(r, COUNT_OF(numbers))]);
        }
        break;
    case 7:
        insert_stress(r, b, at);
        break;
    case 8:   /* a word from the language, or punctuation, anywhere */
    case 9:
        insert_str(b, at, dictionary[below(r, COUNT_OF(dictionary))]);
        if (below(r, 2))
            insert_str(b, at, " ");
        break;
    case 10:  /* delete a range */
        erase(b, at, 1 + below(r, 64));
        break;
    case 11: { /* copy a chunk elsewhere */
        if (!b->len)
            break;
        size_t from = below(r, b->len), n = 1 + below(r, 200);
        if (from + n > b->len)
            n = b->len - from;
        buf chunk = { 0 };
        insert(&chunk, 0, b->p + from, n);
        insert(b, at > b->len ? b->len : at, chunk.p, chunk.len);
        free(chunk.p);
        break;
    }
    case 12: { /* swap two tokens (by moving one before the other) */
        size_t s2, e2;
        if (pick_token(r, b, &s, &e) && pick_token(r, b, &s2, &e2) && (e <= s2 || e2 <= s)) {
            buf t = { 0 };
            insert(&t, 0, b->p + s2, e2 - s2);
            erase(b, s2, e2 - s2);
            size_t where = s2 < s ? s - (e2 - s2) : s;
            insert(b, where, t.p, t.len);
            free(t.p);
        }
        break;
    }
    case 13:  /* a token replaced by a word from the language */
        if (pick_token(r, b, &s, &e)) {
            erase(b, s, e - s);
            insert_str(b, s, dictionary[below(r, COUNT_OF(dictionary))]);
        }
        break;
    default:  /* lines joined or split */
        for (size_t i = 0; i < b->len; i++)
            if (b->p[i] == '\n' && below(r, 3) == 0)
                b->p[i] = ' ';
        break;
    }
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void write_file(const char *path, const buf *b)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        die(path);
    if (b->len && fwrite(b->p, 1, b->len, f) != b->len)
        die(path);
    if (fclose(f) != 0)
        die(path);
}

static buf read_file(const char *path)
{
    buf b = { 0 };
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path);
    unsigned char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        insert(&b, b.len, tmp, n);
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mutate SEED OUTDIR PREFIX COUNT\n");
        return 2;
    }
    buf seed = read_file(argv[1]);
    long count = strtol(argv[4], NULL, 10);
    long ntrunc = count / 4;
    size_t step = seed.len / (size_t)(ntrunc + 1) + 1;   /* truncate at every `step` bytes */
    uint64_t h = fnv1a(seed.p, seed.len);
    char path[4096];
    for (long i = 0; i < count; i++) {
        buf m = { 0 };
        insert(&m, 0, seed.p, seed.len);
        rng r = { h ^ ((uint64_t)i * 0x2545f4914f6cdd1dULL) };
        if (i < ntrunc) {
            size_t cut = (size_t)(i + 1) * step;
            m.len = cut < m.len ? cut : m.len;
        } else {
            int edits = 1 + (int)below(&r, 3);
            for (int k = 0; k < edits; k++)
                mutate_once(&r, &m);
        }
        snprintf(path, sizeof path, "%s/%s-%04ld.pipe", argv[2], argv[3], i);
        write_file(path, &m);
        free(m.p);
    }
    free(seed.p);
    return 0;
}
