/* An LD_PRELOAD shim for tests/cli: fails or interrupts pipegen's file system calls where
 * a real failure (a full disk, a signal mid-write, a rename refused) is hard to arrange.
 *   PG_SHIM_WRITE=enospc   every write() to a file (fd > 2) fails with ENOSPC
 *   PG_SHIM_WRITE=signal:S the first write() to a file (fd > 2) raises signal number S
 *                          first (as kill -S from outside would)
 *   PG_SHIM_RENAME=N       the Nth rename() (1-based) fails with EIO
 *   PG_SHIM_RENAME=signal:S  the first rename() raises signal number S first */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *mode = getenv("PG_SHIM_WRITE");
    if (fd > 2 && mode && !strcmp(mode, "enospc")) {
        errno = ENOSPC;
        return -1;
    }
    if (fd > 2 && mode && !strncmp(mode, "signal:", 7))
        raise(atoi(mode + 7));
    return real(fd, buf, n);
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    static int count;
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    const char *nth = getenv("PG_SHIM_RENAME");
    if (nth && !strncmp(nth, "signal:", 7) && ++count == 1)
        raise(atoi(nth + 7));
    else if (nth && ++count == atoi(nth)) {
        errno = EIO;
        return -1;
    }
    return real(from, to);
}
