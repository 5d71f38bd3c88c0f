/* What tests/gpu/rt_reset.cu and tests/gpu/rt_threads.cu share: the skip without a GPU,
 * a seeded generator, and one problem of each of two generated pipelines whose kernels opt
 * in to more than 48 KiB of dynamic shared memory (reduce_sum under cp.async, 65536 bytes a
 * block; sgemm under cp.async, 159744 bytes), with inputs, expected results, device
 * buffers, a launch and an exact check.
 *
 * The inputs are small integers held in floats, so that every sum the kernels form, in
 * whatever order, is exact (below 2^24): the results are compared bit for bit with the
 * host's. Built by tests/gpu/lib.sh (gpu_runtime_build) with the generated reduce_sum.cuh
 * and sgemm.cuh on the include path. */
#ifndef RT_COMMON_H
#define RT_COMMON_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "pipert.h"
#include "reduce_sum.cuh"
#include "sgemm.cuh"

/* No GPU (or no driver): prints "NAME: skipped: ..." and returns 1 (the caller exits 77,
 * the status test harnesses read as skipped), as the generated test drivers do. */
static int rt_no_device(const char *name)
{
    int ndev = 0;
    cudaError_t err = cudaGetDeviceCount(&ndev);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
        || err == cudaErrorStubLibrary || (err == cudaSuccess && ndev == 0)) {
        printf("%s: skipped: no CUDA device (%s)\n", name,
               err == cudaSuccess ? "none found" : pipert_error_string(err));
        return 1;
    }
    return 0;
}

/* RT_SEED, else from the clock and the process: printed by the caller, so that a failure
 * can be replayed. */
static uint64_t rt_seed(void)
{
    const char *s = getenv("RT_SEED");
    if (s && *s)
        return strtoull(s, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

static int rt_env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

/* splitmix64 */
static uint64_t rt_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* An integer in [lo, hi], as a float. */
static float rt_int(uint64_t *state, int lo, int hi)
{
    return (float)(lo + (int)(rt_next(state) % (uint64_t)(hi - lo + 1)));
}

/* One problem of each pipeline, its host side and its device side. */
typedef struct rt_problem {
    /* reduce_sum: s = x[0] + ... + x[n-1], x taken xoff floats past a 256-byte aligned
     * allocation (0: 16-byte copies, 1: 4-byte, 2: 8-byte: another kernel of the table). */
    int64_t n;
    int xoff;
    float *hx;
    float want_s;
    /* sgemm: C = alpha * A * B + beta * C0, row-major M x K, K x N, M x N. */
    int64_t M, N, K;
    float alpha, beta;
    float *hA, *hB, *hC0, *want_C, *got_C;
    /* device memory */
    float *dx, *ds, *dA, *dB, *dC;
    void *dw;
    size_t wbytes;
    /* the first failure, in words */
    char why[512];
} rt_problem;

static void rt_why(rt_problem *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
}

/* Every CUDA and pipeline call of a problem checked: the call and its error in p->why. */
#define RT_TRY(p, call)                                                                 \
    do {                                                                                \
        cudaError_t rt_err_ = (call);                                                   \
        if (rt_err_ != cudaSuccess) {                                                   \
            rt_why((p), "%s: %s (%d)", #call, pipert_error_string(rt_err_), (int)rt_err_); \
            return rt_err_;                                                             \
        }                                                                               \
    } while (0)

static void *rt_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* The host side: random inputs and the expected results. */
static void rt_problem_init(rt_problem *p, uint64_t seed, int64_t n, int xoff, int64_t M,
                            int64_t N, int64_t K)
{
    memset(p, 0, sizeof *p);
    uint64_t st = seed;
    p->n = n;
    p->xoff = xoff;
    p->hx = (float *)rt_xmalloc((size_t)n * sizeof(float));
    double s = 0;
    for (int64_t i = 0; i < n; ++i) {
        p->hx[i] = rt_int(&st, -8, 8);     /* |partial sums| <= 8 n < 2^24 */
        s += p->hx[i];
    }
    p->want_s = (float)s;
    p->M = M, p->N = N, p->K = K;
    p->alpha = 2.0f, p->beta = -1.0f;
    p->hA = (float *)rt_xmalloc((size_t)(M * K) * sizeof(float));
    p->hB = (float *)rt_xmalloc((size_t)(K * N) * sizeof(float));
    p->hC0 = (float *)rt_xmalloc((size_t)(M * N) * sizeof(float));
    p->want_C = (float *)rt_xmalloc((size_t)(M * N) * sizeof(float));
    p->got_C = (float *)rt_xmalloc((size_t)(M * N) * sizeof(float));
    for (int64_t i = 0; i < M * K; ++i)
        p->hA[i] = rt_int(&st, -2, 2);
    for (int64_t i = 0; i < K * N; ++i)
        p->hB[i] = rt_int(&st, -2, 2);
    for (int64_t i = 0; i < M * N; ++i)
        p->hC0[i] = rt_int(&st, -8, 8);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k)
                acc += (double)p->hA[i * K + k] * p->hB[k * N + j];
            p->want_C[i * N + j] = (float)(p->alpha * acc + p->beta * p->hC0[i * N + j]);
        }
}

static struct reduce_sum_args rt_reduce_args(const rt_problem *p)
{
    struct reduce_sum_args a;
    memset(&a, 0, sizeof a);
    a.x = p->dx ? p->dx + p->xoff : NULL;
    a.s = p->ds;
    a.n = p->n;
    a.workspace = p->dw;
    a.workspace_bytes = p->wbytes;
    return a;
}

static struct sgemm_args rt_sgemm_args(const rt_problem *p)
{
    struct sgemm_args a;
    memset(&a, 0, sizeof a);
    a.alpha = p->alpha, a.beta = p->beta;
    a.A = p->dA, a.B = p->dB, a.C = p->dC;
    a.M = p->M, a.K = p->K, a.N = p->N;
    return a;
}

/* The device side: buffers allocated and the inputs copied in (no runtime call). */
static cudaError_t rt_problem_alloc(rt_problem *p)
{
    RT_TRY(p, cudaMalloc((void **)&p->dx, (size_t)(p->n + p->xoff) * sizeof(float)));
    RT_TRY(p, cudaMalloc((void **)&p->ds, sizeof(float)));
    struct reduce_sum_args ra = rt_reduce_args(p);
    p->wbytes = reduce_sum_workspace_bytes(&ra, NULL);
    RT_TRY(p, cudaMalloc(&p->dw, p->wbytes));
    RT_TRY(p, cudaMalloc((void **)&p->dA, (size_t)(p->M * p->K) * sizeof(float)));
    RT_TRY(p, cudaMalloc((void **)&p->dB, (size_t)(p->K * p->N) * sizeof(float)));
    RT_TRY(p, cudaMalloc((void **)&p->dC, (size_t)(p->M * p->N) * sizeof(float)));
    RT_TRY(p, cudaMemcpy(p->dx + p->xoff, p->hx, (size_t)p->n * sizeof(float),
                         cudaMemcpyHostToDevice));
    RT_TRY(p, cudaMemcpy(p->dA, p->hA, (size_t)(p->M * p->K) * sizeof(float),
                         cudaMemcpyHostToDevice));
    RT_TRY(p, cudaMemcpy(p->dB, p->hB, (size_t)(p->K * p->N) * sizeof(float),
                         cudaMemcpyHostToDevice));
    return cudaSuccess;
}

/* Reset the outputs (s to NaN, C to C0), launch both pipelines on `stream` (sgemm first
 * when sgemm_first), wait, and compare the results with the host's exactly. cudaSuccess
 * and p->why empty when they match; a failed call's error, or cudaErrorUnknown for a
 * wrong result, with p->why saying which. */
static cudaError_t rt_problem_run(rt_problem *p, cudaStream_t stream, int sgemm_first)
{
    struct reduce_sum_args ra = rt_reduce_args(p);
    struct sgemm_args ga = rt_sgemm_args(p);
    p->why[0] = 0;
    RT_TRY(p, cudaMemsetAsync(p->ds, 0xff, sizeof(float), stream));
    RT_TRY(p, cudaMemcpyAsync(p->dC, p->hC0, (size_t)(p->M * p->N) * sizeof(float),
                              cudaMemcpyHostToDevice, stream));
    if (sgemm_first) {
        RT_TRY(p, sgemm_launch(&ga, stream));
        RT_TRY(p, reduce_sum_launch(&ra, stream));
    } else {
        RT_TRY(p, reduce_sum_launch(&ra, stream));
        RT_TRY(p, sgemm_launch(&ga, stream));
    }
    float got_s = 0;
    RT_TRY(p, cudaMemcpyAsync(&got_s, p->ds, sizeof(float), cudaMemcpyDeviceToHost, stream));
    RT_TRY(p, cudaMemcpyAsync(p->got_C, p->dC, (size_t)(p->M * p->N) * sizeof(float),
                              cudaMemcpyDeviceToHost, stream));
    RT_TRY(p, cudaStreamSynchronize(stream));
    RT_TRY(p, cudaGetLastError());
    if (!(got_s == p->want_s)) {          /* exact (NaN: not run) */
        rt_why(p, "reduce_sum n=%" PRId64 " x+%d: got %.9g, want %.9g", p->n, p->xoff,
               (double)got_s, (double)p->want_s);
        return cudaErrorUnknown;
    }
    for (int64_t i = 0; i < p->M * p->N; ++i)
        if (!(p->got_C[i] == p->want_C[i])) {
            rt_why(p, "sgemm %" PRId64 "x%" PRId64 "x%" PRId64 ": C[%" PRId64 "][%" PRId64
                   "] = %.9g, want %.9g", p->M, p->N, p->K, i / p->N, i % p->N,
                   (double)p->got_C[i], (double)p->want_C[i]);
            return cudaErrorUnknown;
        }
    return cudaSuccess;
}

/* Free the device buffers (after a cudaDeviceReset they are gone already: only forgotten). */
static cudaError_t rt_problem_free_device(rt_problem *p, int forget)
{
    void *bufs[] = {p->dx, p->ds, p->dw, p->dA, p->dB, p->dC};
    cudaError_t first = cudaSuccess;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) {
        cudaError_t err = forget || !bufs[i] ? cudaSuccess : cudaFree(bufs[i]);
        if (err != cudaSuccess && first == cudaSuccess)
            first = err;
    }
    p->dx = p->ds = p->dA = p->dB = p->dC = NULL;
    p->dw = NULL;
    return first;
}

static void rt_problem_free_host(rt_problem *p)
{
    free(p->hx);
    free(p->hA);
    free(p->hB);
    free(p->hC0);
    free(p->want_C);
    free(p->got_C);
}

#endif
