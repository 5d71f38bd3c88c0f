/* The unit tests' shared harness (harness.h). */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

FILE *mem_open(memfile *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
    ck_assert_ptr_nonnull(m->f);
    return m->f;
}

const char *mem_text(memfile *m)
{
    fflush(m->f);
    return m->text;
}

char *mem_close(memfile *m)
{
    fclose(m->f);
    m->f = NULL;
    return m->text;
}

char *ast_text(const ast_file *f)
{
    memfile m;
    ast_dump(mem_open(&m), f);
    return mem_close(&m);
}

char *ir_text(const sched *sc)
{
    memfile m;
    ir_dump(mem_open(&m), sc);
    return mem_close(&m);
}

int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        ++n;
    return n;
}

void h_start(harness *h, const char *file, const char *src)
{
    memset(h, 0, sizeof *h);
    h->a = arena_new();
    h->file = file;
    h->src = arena_strdup(h->a, src);
    diag_init(&h->d, mem_open(&h->dm), file, h->src, strlen(h->src));
}

void h_restart_diags(harness *h, const char *src)
{
    h_end(h);
    free(h->diags);
    h->diags = NULL;
    diag_init(&h->d, mem_open(&h->dm), h->file, src, strlen(src));
}

ast_file *h_parse(harness *h)
{
    h->f = parse_source(h->a, &h->d, h->file, h->src, strlen(h->src));
    return h->f;
}

bool h_check(harness *h, const target *t)
{
    if (!h->f) {
        h_parse(h);
        ck_assert_msg(h->d.errors == 0, "the test's source does not parse:\n%s", h_diags(h));
    }
    h->ok = sema_check(h->a, &h->d, h->f, t, &h->s);
    return h->ok;
}

sched *h_plan(harness *h, mech m, int sm)
{
    h->sc = plan_schedule(h->a, &h->d, &h->s, m, sm, false);
    return h->sc;
}

bool h_verify(harness *h, sched *sc)
{
    return verify_schedule(&h->d, sc);
}

const char *h_diags(harness *h)
{
    return h->dm.f ? mem_text(&h->dm) : h->diags;
}

void h_end(harness *h)
{
    if (!h->dm.f)
        return;
    h->diags = mem_close(&h->dm);
    h->diags_len = h->dm.len;
    h->errors = h->d.errors;
}

void h_free(harness *h)
{
    h_end(h);
    free(h->diags);
    arena_free(h->a);
}

int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
