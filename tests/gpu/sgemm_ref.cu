// make bench: the generated sgemm against cuBLAS SGEMM in the same process.
// C = alpha*A*B + beta*C, row-major fp32, M = N = K = each size given (default 4096 8192).
// Times are medians of 20 runs after 3 warm-up runs; results are compared once.
#include "sgemm.cuh"
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

template <class F> static float time_ms(F f, int reps)
{
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int r = 0; r < reps + 3; ++r) {
        CHECK(cudaEventRecord(e0));
        f();
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3)
            t.push_back(ms);
    }
    return median(t);
}

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
        size_t bytes = (size_t)n * n * sizeof(float);
        std::vector<float> host((size_t)n * n);
        unsigned long long s = 88172645463325252ULL;
        for (auto &x : host) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            x = (float)((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
        }
        float *A, *B, *C, *Cref;
        CHECK(cudaMalloc(&A, bytes)); CHECK(cudaMalloc(&B, bytes));
        CHECK(cudaMalloc(&C, bytes)); CHECK(cudaMalloc(&Cref, bytes));
        CHECK(cudaMemcpy(A, host.data(), bytes, cudaMemcpyHostToDevice));
        std::reverse(host.begin(), host.end());
        CHECK(cudaMemcpy(B, host.data(), bytes, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(C, 0, bytes)); CHECK(cudaMemset(Cref, 0, bytes));
        const float alpha = 1.0f, beta = 0.0f;
        struct sgemm_args a = {alpha, beta, A, B, C, n, n, n};
        // Row-major C = A B is column-major C^T = B^T A^T.
        auto blas = [&] { CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n,
                                                 &alpha, B, (int)n, A, (int)n, &beta, Cref, (int)n)); };
        auto ours = [&] { CHECK(sgemm_launch(&a, 0)); };
        float tb = time_ms(blas, 20), tp = time_ms(ours, 20);
        std::vector<float> c1((size_t)n * n), c2((size_t)n * n);
        CHECK(cudaMemcpy(c1.data(), C, bytes, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(c2.data(), Cref, bytes, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (size_t i = 0; i < c1.size(); ++i) {
            num += (double)(c1[i] - c2[i]) * (c1[i] - c2[i]);
            den += (double)c2[i] * c2[i];
        }
        double flop = 2.0 * n * n * n;
        printf("SGEMM n=%lld pipegen %.1f TFLOP/s cublas %.1f TFLOP/s ratio=%.3f rel_err=%.2e\n", n,
               flop / (tp * 1e-3) / 1e12, flop / (tb * 1e-3) / 1e12, tb / tp, sqrt(num / den));
        CHECK(cudaFree(A)); CHECK(cudaFree(B)); CHECK(cudaFree(C)); CHECK(cudaFree(Cref));
    }
    cublasDestroy(h);
    return 0;
}
