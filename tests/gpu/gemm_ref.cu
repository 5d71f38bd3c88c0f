// make bench: a generated GEMM against cuBLAS in the same process, M = N = K = each size
// given (default 4096 8192). Times are medians of 50 runs after 5 warm-up runs, cuBLAS's
// and ours alternating (one after the other in each run, so that clocks throttled by
// power or heat weigh on both alike); results are compared once (relative RMS error).
//   default: sgemm, C = alpha*A*B + beta*C, row-major fp32, against cublasSgemm;
//   -DGEMM_REF_BF16: gemm_bf16, C = A*B^T, A and B bf16 K-major, C fp32, against
//     cublasGemmEx with BF16 inputs, FP32 output and compute (cuBLAS's "TN" case).
#ifdef GEMM_REF_BF16
#include "gemm_bf16.cuh"
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem;
#define GEMM_NAME "GEMM_BF16"
#else
#include "sgemm.cuh"
typedef float elem;
#define GEMM_NAME "SGEMM"
#endif
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)
#define CHECK_BLAS(x) do { if ((x) != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "%s failed\n", #x); exit(2); } } while (0)

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static float elapsed_ms(cudaEvent_t e0, cudaEvent_t e1)
{
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

/* The medians of a's and b's times, a and b run in turns. */
template <class A, class B> static void time_pair(A a, B b, int reps, float *ta, float *tb)
{
    const int warm = 5;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> va, vb;
    for (int r = 0; r < reps + warm; ++r) {
        CHECK(cudaEventRecord(e0));
        a();
        CHECK(cudaEventRecord(e1));
        const float ms_a = elapsed_ms(e0, e1);
        CHECK(cudaEventRecord(e0));
        b();
        CHECK(cudaEventRecord(e1));
        const float ms_b = elapsed_ms(e0, e1);
        if (r >= warm) {
            va.push_back(ms_a);
            vb.push_back(ms_b);
        }
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    *ta = median(va);
    *tb = median(vb);
}

#ifdef GEMM_REF_BF16
static void run_ours(const elem *A, const elem *B, float *C, long long n)
{
    struct gemm_bf16_args a = {A, B, C, n, n, n};
    CHECK(gemm_bf16_launch(&a, 0));
}
// Row-major C = A B^T is column-major C^T = B^T A, B^T being B (K x N column-major) transposed.
static void run_blas(cublasHandle_t h, const elem *A, const elem *B, float *C, long long n)
{
    const float alpha = 1.0f, beta = 0.0f;
    CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)n, (int)n, &alpha, B,
                            CUDA_R_16BF, (int)n, A, CUDA_R_16BF, (int)n, &beta, C, CUDA_R_32F,
                            (int)n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
#else
static void run_ours(const elem *A, const elem *B, float *C, long long n)
{
    struct sgemm_args a = {1.0f, 0.0f, A, B, C, n, n, n};
    CHECK(sgemm_launch(&a, 0));
}
// Row-major C = A B is column-major C^T = B^T A^T.
static void run_blas(cublasHandle_t h, const elem *A, const elem *B, float *C, long long n)
{
    const float alpha = 1.0f, beta = 0.0f;
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &alpha, B,
                           (int)n, A, (int)n, &beta, C, (int)n));
}
#endif

int main(int argc, char **argv)
{
    std::vector<long long> sizes;
    for (int i = 1; i < argc; ++i)
        sizes.push_back(atoll(argv[i]));
    if (sizes.empty())
        sizes = {4096, 8192};
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));
    for (long long n : sizes) {
        const size_t count = (size_t)n * n, bytes = count * sizeof(float);
        std::vector<elem> host(count);
        unsigned long long s = 88172645463325252ULL;
        for (auto &x : host) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            x = (elem)((float)((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5f);
        }
        elem *A, *B;
        float *C, *Cref;
        CHECK(cudaMalloc(&A, count * sizeof(elem))); CHECK(cudaMalloc(&B, count * sizeof(elem)));
        CHECK(cudaMalloc(&C, bytes)); CHECK(cudaMalloc(&Cref, bytes));
        CHECK(cudaMemcpy(A, host.data(), count * sizeof(elem), cudaMemcpyHostToDevice));
        std::reverse(host.begin(), host.end());
        CHECK(cudaMemcpy(B, host.data(), count * sizeof(elem), cudaMemcpyHostToDevice));
        CHECK(cudaMemset(C, 0, bytes)); CHECK(cudaMemset(Cref, 0, bytes));
        auto blas = [&] { run_blas(h, A, B, Cref, n); };
        auto ours = [&] { run_ours(A, B, C, n); };
        float tb, tp;
        time_pair(blas, ours, 50, &tb, &tp);
        std::vector<float> c1(count), c2(count);
        CHECK(cudaMemcpy(c1.data(), C, bytes, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(c2.data(), Cref, bytes, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (size_t i = 0; i < c1.size(); ++i) {
            num += (double)(c1[i] - c2[i]) * (c1[i] - c2[i]);
            den += (double)c2[i] * c2[i];
        }
        double flop = 2.0 * n * n * n;
        printf(GEMM_NAME " n=%lld pipegen %.1f TFLOP/s cublas %.1f TFLOP/s ratio=%.3f rel_err=%.2e\n",
               n, flop / (tp * 1e-3) / 1e12, flop / (tb * 1e-3) / 1e12, tb / tp, sqrt(num / den));
        CHECK(cudaFree(A)); CHECK(cudaFree(B)); CHECK(cudaFree(C)); CHECK(cudaFree(Cref));
    }
    cublasDestroy(h);
    return 0;
}
