/* pipert_memcpy_async.cuh: chunk and region copies through cuda::memcpy_async (lowerings barrier, pipeline,
 * pipeline-roles and pipeline-thread).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_MEMCPY_ASYNC_CUH
#define PIPERT_MEMCPY_ASYNC_CUH
#include <cooperative_groups.h>
#include <cuda/annotated_ptr>
#include <cuda/barrier>
#include <cuda/pipeline>
#include "pipert_api_rows.cuh"
#include "pipert_mbarrier.cuh"

#ifdef __CUDACC__
/* ---- A stage's `evict` policy (the numbering of pg_l2_policy) as the access property of
 * an annotated_ptr to the copy's source: first is streaming, last persisting, normal
 * normal; none and unchanged (no property of annotated_ptr says "leave the priority as it
 * is") pass the plain pointer. ---- */
template <int EVICT> struct pg_evict {};

template <int EVICT>
__device__ __forceinline__ auto pg_evict_src(const unsigned char *src, pg_evict<EVICT>)
{
    if constexpr (EVICT == 1)
        return cuda::annotated_ptr<const unsigned char, cuda::access_property::normal>(src);
    else if constexpr (EVICT == 2)
        return cuda::annotated_ptr<const unsigned char, cuda::access_property::streaming>(src);
    else if constexpr (EVICT == 3)
        return cuda::annotated_ptr<const unsigned char, cuda::access_property::persisting>(src);
    else
        return src;
}

/* ---- barrier, pipeline, pipeline-roles, pipeline-thread: one chunk through
 * cuda::memcpy_async(dst, src, aligned_size_t<VEC>, SYNC), SYNC a cuda::pipeline or a
 * cuda::barrier. The API copies whole objects and has no zero-fill: a chunk that is partly
 * or wholly outside the array, and every chunk below 4 bytes (no cp.async), is stored
 * synchronously with its tail zero-filled. Such stores are complete in the thread before
 * its arrival (barrier, block pipelines) or the block barrier (pipeline-thread) that
 * publishes the step to the other threads. ZERO_WHOLE as pg_copy_chunk_sync's. */
template <int VEC, bool ZERO_WHOLE, class Sync, int EVICT>
__device__ __forceinline__ void pg_cuda_chunk(unsigned char *dst, const unsigned char *src,
                                              int valid, Sync &sync, pg_evict<EVICT> ev)
{
    if constexpr (VEC >= 4) {
        if (valid == VEC) {
            (void)cuda::memcpy_async(dst, pg_evict_src(src, ev), cuda::aligned_size_t<VEC>(VEC),
                                     sync);
            return;
        }
    }
    pg_copy_chunk_sync<VEC, ZERO_WHOLE>(dst, src, valid);
}

/* ---- barrier: a staged region into the slot whose cuda::barrier is `bar`. On sm_90 with
 * 16-byte chunks, libcu++ makes each memcpy_async on a block barrier one bulk copy (TMA)
 * completing by transaction count, whatever its size: one call per 16-byte chunk would be
 * one bulk copy per chunk, which runs at a third of the copy engine's rate (measured on
 * H100: saxpy 0.41 of cudaMemcpy). So there each row's whole chunks are one call, by one
 * thread (rows dealt to the threads), and the edges are stored by pg_api_edges. Elsewhere
 * (sm_80, or narrower chunks: cp.async either way) a call per chunk as the pipelines do.
 * The copies hold the barrier's phase (expect_tx) until they land; the thread's arrive()
 * follows its calls and stores, so the phase completes only with every row in place. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, int EVICT>
__device__ __forceinline__ void pg_bar_region(unsigned char *dst, const unsigned char *base,
                                              int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                              int64_t n1, int64_t n2b, int tid,
                                              cuda::barrier<cuda::thread_scope_block> &bar,
                                              pg_evict<EVICT> ev)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (VEC == 16) {
        int lo, hi;
        pg_api_whole<VEC, ROWBYTES, 1>(o2b, n2b, &lo, &hi);
        if (hi > lo)
            pg_api_rows<P, R, PITCH>(
                dst, base, o0, o1, o2b, n0, n1, n2b, tid, NT, lo,
                [&](unsigned char *d, const unsigned char *s) {
                    (void)cuda::memcpy_async(d, pg_evict_src(s, ev),
                                             cuda::aligned_size_t<16>((size_t)(hi - lo)), bar);
                });
        pg_api_edges<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid,
                                                     lo, hi);
        return;
    }
#endif
    pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
        dst, base, o0, o1, o2b, n0, n1, n2b, tid,
        [&](unsigned char *d, const unsigned char *s, int v) { pg_cuda_chunk<VEC, true>(d, s, v, bar, ev); });
}
#endif /* __CUDACC__ */
#endif /* PIPERT_MEMCPY_ASYNC_CUH */
