/* output: commit the files of one run, all or none.
 *
 * Every output is written in full to a fresh temporary file in its own directory (created
 * with O_CREAT|O_EXCL|O_NOFOLLOW, so nothing placed there beforehand is followed or
 * reused), with the mode of the file it replaces. Only when every one is written are they
 * renamed into place, with signals held back; an existing file is first hard-linked to a
 * backup name, so that a failed rename puts every earlier output back as it was. Runs
 * writing the same outputs at once take turns for their renames (a lock on each output's
 * directory), so that the files left are all one run's. SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT while the temporary files are written remove them and then
 * end the process as the signal would have; SIGPIPE and SIGXFSZ are ignored, so that
 * their writes fail with EPIPE and EFBIG and are reported. Before anything is written, no output may name an
 * input or another output (by device and inode, or by directory and name for a file that
 * does not exist yet), nor an existing file that is not a regular file; "-" is standard
 * output. Every write, flush and close is checked. */
/* realpath is X/Open, beyond the POSIX base the Makefile asks for; flock is BSD's. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include "pipegen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OUT_MAX = 8, OUT_INPUTS = 2, NAME_TRIES = 64 };

/* The identity of a path: the file when it exists, else its directory's real path and
 * base name (two spellings of a missing file agree on those). */
typedef struct out_ident {
    bool exists;
    dev_t dev;
    ino_t ino;
    const char *where;
} out_ident;

typedef struct out_file {
    const char *path;        /* as given; "-" is standard output */
    strbuf text;
    out_ident id;
    mode_t mode;             /* of the file replaced, else 0666 less the umask */
    char *tmp;               /* the temporary file (an entry of out_tmp_paths) */
    const char *bak;         /* the hard link keeping the replaced file, while committing */
    bool placed;             /* renamed into place (undone if a later one fails) */
} out_file;

struct out_set {
    arena *a;
    diag_ctx *d;
    out_ident inputs[OUT_INPUTS];
    const char *input_names[OUT_INPUTS];
    int ninputs;
    out_file files[OUT_MAX];
    int nfiles;
};

/* ------------------------------------------------------------------ signals
 * The handler may only call async-signal-safe functions, on data that is never half
 * written: the temporary files' names live in a fixed array, and an entry is counted only
 * once its file exists (signals are blocked while it is created). */

static char out_tmp_paths[OUT_MAX][PATH_MAX];
static volatile sig_atomic_t out_ntmp;
static const int out_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void out_on_signal(int sig)
{
    for (int i = 0; i < out_ntmp; ++i)
        unlink(out_tmp_paths[i]);
    /* SA_RESETHAND restored the default action; the signal is delivered on return. */
    raise(sig);
}

static void out_catch_signals(void)
{
    struct sigaction sa = {.sa_handler = out_on_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof out_signals / sizeof *out_signals; ++i) {
        struct sigaction old;
        /* A signal ignored by whoever started us (nohup) stays ignored. */
        if (sigaction(out_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(out_signals[i], &sa, NULL);
    }
}

void out_ignore_write_signals(void)
{
    struct sigaction sa = {.sa_handler = SIG_IGN};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGXFSZ, &sa, NULL);
}

static void out_hold_signals(bool hold, sigset_t *saved)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof out_signals / sizeof *out_signals; ++i)
        sigaddset(&set, out_signals[i]);
    if (hold)
        sigprocmask(SIG_BLOCK, &set, saved);
    else
        sigprocmask(SIG_SETMASK, saved, NULL);
}

/* ------------------------------------------------------------------ names */

static const char *out_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const char *out_dir(arena *a, const char *path)
{
    const char *s = strrchr(path, '/');
    return !s ? "." : s == path ? "/" : arena_strndup(a, path, (size_t)(s - path));
}

static out_ident out_identify(arena *a, const char *path)
{
    out_ident id = {0};
    struct stat st;
    if (stat(path, &st) == 0)
        return (out_ident){.exists = true, .dev = st.st_dev, .ino = st.st_ino};
    char *dir = realpath(out_dir(a, path), NULL);
    id.where = dir ? arena_printf(a, "%s/%s", dir, out_base(path)) : path;
    free(dir);
    return id;
}

static bool out_same(const out_ident *x, const out_ident *y)
{
    if (x->exists || y->exists)
        return x->exists && y->exists && x->dev == y->dev && x->ino == y->ino;
    return strcmp(x->where, y->where) == 0;
}

/* A name no file has yet, beside path: "DIR/.BASE.TAG-XXXXXX", BASE cut short where the
 * whole would pass NAME_MAX (any name the system takes gets its temporary files; the
 * random part, not BASE, keeps them apart). Not guessable from the pid alone; O_EXCL (or
 * link's EEXIST) settles any clash. */
static bool out_fresh_name(char *buf, const char *path, const char *tag, unsigned *seed)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *seed = *seed * 1103515245u + 12345u + (unsigned)ts.tv_nsec + (unsigned)getpid();
    const char *base = out_base(path);
    int dirlen = (int)(base - path);
    int room = NAME_MAX - (int)strlen(".." "-XXXXXX") - (int)strlen(tag);
    int n = snprintf(buf, PATH_MAX, "%.*s.%.*s.%s-%06x", dirlen, path, room, base, tag,
                     *seed & 0xffffffu);
    return n > 0 && n < PATH_MAX;
}

/* ------------------------------------------------------------------ names in code */

const char *out_c_escape(arena *a, const char *name)
{
    strbuf sb;
    sb_init(&sb, a);
    for (const unsigned char *c = (const unsigned char *)name; *c; ++c) {
        if (*c == '"' || *c == '\\')
            sb_printf(&sb, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            sb_printf(&sb, "\\%03o", *c);   /* three digits: a digit after it stays a digit */
        else
            sb_putn(&sb, (const char *)c, 1);
    }
    return sb.data;
}

bool out_includable(diag_ctx *d, const char *name)
{
    for (const unsigned char *c = (const unsigned char *)name; *c; ++c)
        if (*c == '"' || *c < 0x20 || *c == 0x7f) {
            diag_fatal_noloc(d, "the header '%s' cannot be named in an #include (a '\"' or a "
                             "control character in its name)", name);
            return false;
        }
    return true;
}

/* ------------------------------------------------------------------ the set */

out_set *out_new(arena *a, diag_ctx *d)
{
    out_set *o = arena_alloc(a, sizeof *o);
    o->a = a;
    o->d = d;
    return o;
}

void out_input(out_set *o, const char *path)
{
    if (strcmp(path, "-") == 0 || o->ninputs == OUT_INPUTS)
        return;
    o->input_names[o->ninputs] = path;
    o->inputs[o->ninputs++] = out_identify(o->a, path);
}

/* The mode the output will have; false (reported) when an existing file must not be
 * replaced. A symbolic link is not followed: replacing it would cut the link. */
static bool out_check_existing(out_set *o, out_file *f)
{
    struct stat st;
    if (lstat(f->path, &st) != 0) {
        mode_t mask = umask(0);
        umask(mask);
        f->mode = 0666 & ~mask;
        return true;
    }
    if (!S_ISREG(st.st_mode)) {
        diag_fatal_noloc(o->d, "cannot write '%s': %s", f->path,
                         S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
        return false;
    }
    f->mode = st.st_mode & 07777;
    return true;
}

bool out_add(out_set *o, const char *path, const strbuf *text)
{
    out_file *f = &o->files[o->nfiles];
    *f = (out_file){.path = path, .text = *text};
    if (strcmp(path, "-") == 0) {
        ++o->nfiles;
        return true;
    }
    f->id = out_identify(o->a, path);
    for (int i = 0; i < o->ninputs; ++i)
        if (out_same(&f->id, &o->inputs[i])) {
            diag_fatal_noloc(o->d, "output '%s' would overwrite the input '%s'", path,
                             o->input_names[i]);
            return false;
        }
    for (int i = 0; i < o->nfiles; ++i)
        if (strcmp(o->files[i].path, "-") && out_same(&f->id, &o->files[i].id)) {
            diag_fatal_noloc(o->d, "two outputs would be written to one file ('%s' and '%s')",
                             o->files[i].path, path);
            return false;
        }
    if (!out_check_existing(o, f))
        return false;
    ++o->nfiles;
    return true;
}

/* ------------------------------------------------------------------ writing */

static bool out_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            errno = n < 0 ? errno : EIO;
            return false;
        }
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* err 0: a stream reported an error but not which (glibc keeps only the flag). */
static bool out_report(diag_ctx *d, const char *path, int err)
{
    diag_fatal_noloc(d, "cannot write '%s': %s", path, err ? strerror(err) : "write error");
    return false;
}

static bool out_fail(out_set *o, const char *path)
{
    return out_report(o->d, path, errno);
}

/* f's temporary file could not be created: where its directory exists, the directory is
 * what refused (-MF /proc/version: ENOENT, though both exist). */
static bool out_no_tmp(out_set *o, const out_file *f)
{
    int err = errno;
    const char *dir = out_dir(o->a, f->path);
    struct stat st;
    if (err == ENAMETOOLONG || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return out_report(o->d, f->path, err);
    diag_fatal_noloc(o->d, "cannot write '%s': cannot create a file in '%s'%s: %s", f->path,
                     dir, f->id.exists ? " to replace it" : "",
                     err == ENOENT ? "its file system takes no new files" : strerror(err));
    return false;
}

/* Create f's temporary file (registered for the signal handler) and write its text. */
static bool out_stage(out_set *o, out_file *f, unsigned *seed)
{
    sigset_t saved;
    int fd = -1;
    out_hold_signals(true, &saved);
    for (int t = 0; t < NAME_TRIES && fd < 0; ++t) {
        if (!out_fresh_name(out_tmp_paths[out_ntmp], f->path, "tmp", seed)) {
            errno = ENAMETOOLONG;
            break;
        }
        fd = open(out_tmp_paths[out_ntmp], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd >= 0)
        f->tmp = out_tmp_paths[out_ntmp++];
    out_hold_signals(false, &saved);
    if (fd < 0)
        return out_no_tmp(o, f);
    bool ok = out_write_all(fd, f->text.data, f->text.len) && fchmod(fd, f->mode) == 0;
    int err = errno;
    if (close(fd) != 0 && ok) {   /* a delayed write error (NFS, quotas) shows here */
        ok = false;
        err = errno;
    }
    errno = err;
    return ok || out_fail(o, f->path);
}

/* A write to standard output failed and was reported: its close fails the same way and
 * says nothing new. */
static bool out_stdout_reported;

bool out_write_stream(diag_ctx *d, FILE *f, const char *name, const char *data, size_t len)
{
    errno = 0;
    bool ok = fwrite(data, 1, len, f) == len;
    ok = fflush(f) == 0 && ok && !ferror(f);
    out_stdout_reported |= !ok && f == stdout;
    return ok || out_report(d, name, errno);
}

bool out_close_stdout(diag_ctx *d)
{
    errno = 0;
    bool ok = fflush(stdout) == 0 && !ferror(stdout);
    ok = fclose(stdout) == 0 && ok;
    return ok || out_stdout_reported || out_report(d, "<stdout>", errno);
}

/* ------------------------------------------------------------------ committing */

/* Keep the file that f replaces under a backup name until every output is in place.
 * Whether there is one is asked now, under the lock, not when the run began: another run
 * may have written it since. ENOENT with a file there is a link that lost a race with a
 * rename over its file (a directory that takes no lock): look again. */
static bool out_keep_old(out_set *o, out_file *f, unsigned *seed)
{
    char *bak = arena_alloc(o->a, PATH_MAX);
    struct stat st;
    for (int t = 0; t < NAME_TRIES; ++t) {
        if (!out_fresh_name(bak, f->path, "old", seed)) {
            errno = ENAMETOOLONG;
            break;
        }
        if (link(f->path, bak) == 0) {
            f->bak = bak;
            return true;
        }
        if (errno == ENOENT && lstat(f->path, &st) != 0 && errno == ENOENT)
            return true;    /* nothing to keep */
        if (errno != EEXIST && errno != ENOENT)
            break;
    }
    return out_fail(o, f->path);
}

/* Undo the renames of files [0, done): each earlier file back as it was. */
static void out_roll_back(out_set *o, int done)
{
    for (int i = 0; i < done; ++i) {
        out_file *f = &o->files[i];
        if (!f->placed)
            continue;
        if (f->bak ? rename(f->bak, f->path) != 0 : unlink(f->path) != 0)
            diag_fatal_noloc(o->d, "cannot restore '%s': %s%s%s", f->path, strerror(errno),
                             f->bak ? "; its old text is in " : "", f->bak ? f->bak : "");
        else
            f->bak = NULL;
    }
}

/* Remove what is left: temporary files not renamed, backups not needed. */
static void out_clean(out_set *o)
{
    for (int i = 0; i < o->nfiles; ++i) {
        out_file *f = &o->files[i];
        if (f->tmp)
            unlink(f->tmp);
        if (f->bak)
            unlink(f->bak);
    }
    out_ntmp = 0;
}

static bool out_rename_all(out_set *o, unsigned *seed)
{
    for (int i = 0; i < o->nfiles; ++i)
        if (o->files[i].tmp && !out_keep_old(o, &o->files[i], seed))
            return false;
    for (int i = 0; i < o->nfiles; ++i) {
        out_file *f = &o->files[i];
        if (!f->tmp)
            continue;
        if (rename(f->tmp, f->path) != 0) {
            out_fail(o, f->path);
            out_roll_back(o, i);
            return false;
        }
        /* In place now: nothing of it is left to remove but the backup. */
        f->tmp = NULL;
        f->placed = true;
    }
    return true;
}

/* ------------------------------------------------------------------ the lock
 * Two runs writing the same outputs at once must not interleave their renames (o.cu of
 * one beside o.cuh of the other, both exiting 0), nor link a file the other is renaming
 * over (ENOENT). The renames hold an exclusive flock on each output's directory, taken in
 * one order (device, inode), so that runs over several directories cannot deadlock, and
 * each directory once (a second flock of it would wait for the first). A directory that
 * takes no lock (flock fails: NFS) is committed without it; the generated source's stamp
 * still refuses another run's header at compile time. */

typedef struct out_lock {
    int fd;
    dev_t dev;
    ino_t ino;
} out_lock;

static bool out_lock_before(const out_lock *x, const out_lock *y)
{
    return x->dev != y->dev ? x->dev < y->dev : x->ino < y->ino;
}

/* Add the directory of path to locks[0, n), kept sorted and without repeats. */
static int out_lock_add(out_set *o, out_lock *locks, int n, const char *path)
{
    out_lock l = {.fd = open(out_dir(o->a, path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    struct stat st;
    if (l.fd < 0 || fstat(l.fd, &st) != 0) {
        if (l.fd >= 0)
            close(l.fd);
        return n;
    }
    l.dev = st.st_dev;
    l.ino = st.st_ino;
    int at = n;
    while (at > 0 && out_lock_before(&l, &locks[at - 1]))
        --at;
    if (at > 0 && !out_lock_before(&locks[at - 1], &l)) {   /* already there */
        close(l.fd);
        return n;
    }
    memmove(&locks[at + 1], &locks[at], (size_t)(n - at) * sizeof *locks);
    locks[at] = l;
    return n + 1;
}

static int out_lock_dirs(out_set *o, out_lock *locks)
{
    int n = 0;
    for (int i = 0; i < o->nfiles; ++i)
        if (o->files[i].tmp)
            n = out_lock_add(o, locks, n, o->files[i].path);
    for (int i = 0; i < n; ++i)
        while (flock(locks[i].fd, LOCK_EX) != 0 && errno == EINTR)
            continue;
    return n;
}

static void out_unlock_dirs(out_lock *locks, int n)
{
    for (int i = 0; i < n; ++i)
        close(locks[i].fd);   /* releases its flock */
}

bool out_commit(out_set *o)
{
    unsigned seed = 0;
    bool ok = true;
    out_catch_signals();
    for (int i = 0; i < o->nfiles && ok; ++i)
        if (strcmp(o->files[i].path, "-"))
            ok = out_stage(o, &o->files[i], &seed);
    /* Standard output cannot be taken back: it is written when every file is ready. */
    for (int i = 0; i < o->nfiles && ok; ++i)
        if (!strcmp(o->files[i].path, "-"))
            ok = out_write_stream(o->d, stdout, "<stdout>", o->files[i].text.data,
                                  o->files[i].text.len);
    /* Taken before the signals are held: a signal while waiting for it ends the run. */
    out_lock locks[OUT_MAX];
    int nlocks = ok ? out_lock_dirs(o, locks) : 0;
    sigset_t saved;
    out_hold_signals(true, &saved);
    ok = ok && out_rename_all(o, &seed);
    out_clean(o);
    out_hold_signals(false, &saved);
    out_unlock_dirs(locks, nlocks);
    return ok;
}
