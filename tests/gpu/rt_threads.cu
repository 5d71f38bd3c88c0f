/* The runtime's caches under racing first callers (issue 31): the capability cache
 * (pipert_device_caps) and each kernel table's per-device entry (pipert_kernel_prepare:
 * the dynamic shared-memory opt-in, the occupancy, the PTX version) are filled once, by
 * the caller that claims them with a compare-and-swap, while the others wait for it.
 *
 * RT_THREADS host threads (default 8) each take device i % (devices), make its context
 * current, allocate their own buffers and stream and fill their inputs; then all wait at
 * a start line (a spin on an atomic counter, so that they leave it within microseconds of
 * each other) and make their first call into the runtime at once: reduce_sum (65536 bytes
 * of dynamic shared memory a block) and sgemm (159744), in either order, on their own
 * stream, then RT_ITERS - 1 (default 3) times more, every result checked exactly against
 * the host's (tests/gpu/rt_common.h). Threads take x at three alignments, so that three
 * kernels of reduce_sum's table are claimed at once, each by a few threads; sgemm's N
 * sets its copy width the same way. The contexts are created before the start, so that
 * the race is the runtime's, not the driver's context creation.
 *
 * Nothing is prepared before the start: a race lost (a thread using a kernel entry another
 * is still filling, a zero occupancy, a missing opt-in) shows as a refused launch or a
 * wrong result. One process races once: tests/gpu/lib.sh runs it RT_THREADS_RUNS times,
 * and once under compute-sanitizer memcheck.
 *
 * Prints a line per thread, the spread of the first calls' start times, and ends with
 * "rt_threads: N passed, M failed" (threads); exit 0, 1, or 77 without a GPU. */
#include <pthread.h>
#include "rt_common.h"

#define RT_MAX_THREADS 64

typedef struct worker {
    int index, device, ok, iters;
    uint64_t seed;
    double t_first;            /* seconds (CLOCK_MONOTONIC) when its first launch began */
    rt_problem p;
} worker;

static int nthreads;
static int start_count;        /* threads at the start line (__atomic) */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Before the start: the thread's device, inputs, buffers and stream (CUDA calls only, no
 * runtime call). */
static cudaError_t setup(worker *w, cudaStream_t *stream)
{
    rt_problem *p = &w->p;
    const int64_t n = (1 << 20) + (int64_t)(w->seed % 8192);
    /* sgemm's N: 200 takes 16-byte copies, 202 8-byte ones. */
    rt_problem_init(p, w->seed, n, w->index % 3, 257 + w->index, w->index % 4 == 3 ? 202 : 200,
                    96 + 4 * (w->index % 2));
    RT_TRY(p, cudaSetDevice(w->device));
    cudaError_t err = rt_problem_alloc(p);
    if (err != cudaSuccess)
        return err;
    RT_TRY(p, cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
    return cudaSuccess;
}

static void *worker_main(void *arg)
{
    worker *w = (worker *)arg;
    rt_problem *p = &w->p;
    cudaStream_t stream = NULL;
    cudaError_t err = setup(w, &stream);
    /* The start line: the last thread to arrive releases all (one whose setup failed
     * arrives too, so that nobody waits for it). */
    __atomic_add_fetch(&start_count, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&start_count, __ATOMIC_ACQUIRE) < nthreads)
        ;
    w->t_first = now();
    for (int it = 0; it < w->iters && err == cudaSuccess; ++it)
        err = rt_problem_run(p, stream, (w->index + it) % 2);
    if (stream)
        (void)cudaStreamDestroy(stream);
    cudaError_t ferr = rt_problem_free_device(p, 0);
    if (err == cudaSuccess && ferr != cudaSuccess) {
        rt_why(p, "cudaFree: %s", pipert_error_string(ferr));
        err = ferr;
    }
    w->ok = err == cudaSuccess;
    return NULL;
}

int main(void)
{
    if (rt_no_device("rt_threads"))
        return 77;
    nthreads = rt_env_int("RT_THREADS", 8);
    if (nthreads < 1 || nthreads > RT_MAX_THREADS) {
        fprintf(stderr, "rt_threads: RT_THREADS must be 1 .. %d\n", RT_MAX_THREADS);
        return 2;
    }
    const int iters = rt_env_int("RT_ITERS", 3);
    const uint64_t seed = rt_seed();
    int ndev = 0;
    cudaError_t err = cudaGetDeviceCount(&ndev);
    if (err != cudaSuccess) {
        printf("FAIL cudaGetDeviceCount: %s\n", pipert_error_string(err));
        return 1;
    }
    if (ndev > nthreads)
        ndev = nthreads;
    /* Every device's primary context up before the start (cudaFree(NULL) creates it). */
    for (int d = 0; d < ndev; ++d) {
        err = cudaSetDevice(d);
        if (err == cudaSuccess)
            err = cudaFree(NULL);
        if (err != cudaSuccess) {
            printf("FAIL device %d: %s\n", d, pipert_error_string(err));
            return 1;
        }
    }
    printf("rt_threads: RT_SEED=%" PRIu64 ", %d threads on %d device(s), %d launches of each "
           "pipeline a thread\n", seed, nthreads, ndev, iters);

    static worker ws[RT_MAX_THREADS];
    pthread_t tids[RT_MAX_THREADS];
    int created[RT_MAX_THREADS] = {0};
    for (int i = 0; i < nthreads; ++i) {
        ws[i].index = i;
        ws[i].device = i % ndev;
        ws[i].iters = iters;
        ws[i].seed = seed + 0x1000u * (uint64_t)i;
        created[i] = pthread_create(&tids[i], NULL, worker_main, &ws[i]) == 0;
        if (!created[i]) {
            /* The others wait at the start line for it: count it there. */
            snprintf(ws[i].p.why, sizeof ws[i].p.why, "pthread_create failed");
            __atomic_add_fetch(&start_count, 1, __ATOMIC_ACQ_REL);
        }
    }
    for (int i = 0; i < nthreads; ++i)
        if (created[i])
            pthread_join(tids[i], NULL);

    int passed = 0, failed = 0;
    double lo = 0, hi = 0;
    for (int i = 0; i < nthreads; ++i) {
        worker *w = &ws[i];
        if (w->t_first > 0) {
            if (lo == 0 || w->t_first < lo)
                lo = w->t_first;
            if (w->t_first > hi)
                hi = w->t_first;
        }
        if (w->ok) {
            printf("ok   thread %d (device %d): reduce_sum n=%" PRId64 " (x+%d), sgemm %" PRId64
                   "x%" PRId64 "x%" PRId64 ", %d times each, exact\n", i, w->device, w->p.n,
                   w->p.xoff, w->p.M, w->p.N, w->p.K, iters);
            ++passed;
        } else {
            printf("FAIL thread %d (device %d): %s\n", i, w->device, w->p.why);
            ++failed;
        }
        rt_problem_free_host(&w->p);
    }
    printf("rt_threads: the first calls began within %.1f us of each other\n", (hi - lo) * 1e6);
    printf("rt_threads: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
