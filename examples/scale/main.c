/* The example's host program, plain C: y = 3 x on the GPU through the launcher pipegen
 * generated from scale.pipe (scale_launch), on a stream of its own.
 * usage: scale [N]      (default 2^20 elements)
 * Exit status 0, 1 on a wrong result or a CUDA error, 77 where there is no CUDA device. */
#include "scale.cuh"

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "scale: %s: %s\n", #call, pipert_error_string(e_));             \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 20;
    size_t bytes = (size_t)n * sizeof(float);
    float *hx = malloc(bytes ? bytes : 1), *hy = malloc(bytes ? bytes : 1);
    float *dx = NULL, *dy = NULL;
    cudaStream_t stream;
    if (n < 0 || !hx || !hy) {
        fprintf(stderr, "scale: bad size or out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < n; ++i)
        hx[i] = (float)(i % 1000);

    /* No GPU (or no driver): say so, with the status test harnesses read as "skipped". */
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && !ndev)) {
        fprintf(stderr, "scale: no CUDA device (%s): libpipert %s loaded, nothing run\n",
                e == cudaSuccess ? "none found" : pipert_error_string(e), pipert_version());
        return 77;
    }
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaMalloc((void **)&dx, bytes));
    CHECK(cudaMalloc((void **)&dy, bytes));
    CHECK(cudaMemcpyAsync(dx, hx, bytes, cudaMemcpyHostToDevice, stream));
    struct scale_args args = { 3.0f, dx, dy, n };
    CHECK(scale_launch(&args, stream));
    CHECK(cudaMemcpyAsync(hy, dy, bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));

    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
        bad += hy[i] != 3.0f * hx[i];
    printf("scale: %lld elements, %lld wrong (libpipert %s, ABI %d)\n", (long long)n,
           (long long)bad, pipert_version(), pipert_abi_version());
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaStreamDestroy(stream));
    free(hx);
    free(hy);
    return bad != 0;
}
