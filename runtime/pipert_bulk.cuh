/* pipert_bulk.cuh: bulk copies (cp.async.bulk, TMA without a tensor map) completing on an
 * mbarrier by transaction bytes, and the bytes a region's copies deliver (lowering bulk,
 * sm_90 and newer).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_BULK_CUH
#define PIPERT_BULK_CUH
#include "pipert_api_rows.cuh"
#include "pipert_mbarrier.cuh"

#ifdef __CUDACC__
/* Arrive on the barrier and expect `bytes` more bytes of transaction in its phase. */
__device__ __forceinline__ void pg_mbar_arrive_tx(uint64_t *bar, int64_t bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 ::"r"(pg_smem_addr(bar)), "r"((unsigned)bytes) : "memory");
#endif
}

/* A stage's L2 policy for its bulk copies (HINT: the stage has an `evict` policy, made by
 * pg_l2_policy; .L2::cache_hint), or none. */
template <bool HINT> struct pg_l2_hint { uint64_t policy; };

/* One bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from global
 * to shared memory, its bytes completing a transaction of the barrier's phase. */
template <bool HINT>
__device__ __forceinline__ void pg_bulk_copy(unsigned char *dst, const unsigned char *src,
                                             int bytes, uint64_t *bar, pg_l2_hint<HINT> l2)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (HINT)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                     ".L2::cache_hint [%0], [%1], %2, [%3], %4;\n"
                     ::"r"(pg_smem_addr(dst)), "l"(src), "r"(bytes), "r"(pg_smem_addr(bar)),
                       "l"(l2.policy) : "memory");
    else
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                     "[%0], [%1], %2, [%3];\n"
                     ::"r"(pg_smem_addr(dst)), "l"(src), "r"(bytes), "r"(pg_smem_addr(bar))
                     : "memory");
#endif
}

/* ---- A staged region through bulk copies. Bulk copies need 16-byte aligned addresses and
 * sizes and have no bounds: with 16-byte chunks (VEC, the launch's copy width) each row's
 * whole chunks inside the array ([lo, hi), pg_api_whole) are one bulk copy, all of them
 * issued by thread 0, the thread that arms the barrier for them (pg_bulk_bytes: before the
 * copies, or after them with producer warps). Everything else
 * (a halo left of the array, a row's partial end, rows outside the array: zero-filled) is
 * stored by every copying thread (pg_api_edges). Where the launch's pointers or row
 * pitches allow less than 16 bytes, no bulk copy is possible: every chunk is stored so,
 * and the barrier expects no bytes. The stores are published to the consumers by the
 * block barrier the schedule has between a step's copy and its compute, or with producer
 * warps by each producer thread's own arrival on the full barrier (docs/mechanisms.md). ---- */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, bool HINT>
__device__ __forceinline__ void pg_bulk_region(unsigned char *dst, const unsigned char *base,
                                               int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                               int64_t n1, int64_t n2b, int tid, uint64_t *bar,
                                               pg_l2_hint<HINT> l2)
{
    if constexpr (VEC == 16) {
        int lo, hi;
        pg_api_whole<VEC, ROWBYTES, 1>(o2b, n2b, &lo, &hi);
        if (tid == 0 && hi > lo)
            pg_api_rows<P, R, PITCH>(
                dst, base, o0, o1, o2b, n0, n1, n2b, 0, 1, lo,
                [&](unsigned char *d, const unsigned char *s) { pg_bulk_copy(d, s, hi - lo, bar, l2); });
        pg_api_edges<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid,
                                                     lo, hi);
    } else {
        (void)bar; (void)l2;
        pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
            dst, base, o0, o1, o2b, n0, n1, n2b, tid,
            [](unsigned char *d, const unsigned char *s, int v) { pg_copy_chunk_sync<VEC>(d, s, v); });
    }
}

/* How many of [o, o + e) lie in [0, n). */
__device__ __forceinline__ int64_t pg_span_in(int64_t o, int64_t n, int64_t e)
{
    const int64_t lo = o < 0 ? 0 : o, hi = o + e < n ? o + e : n;
    return hi > lo ? hi - lo : 0;
}

/* Add to tx the bytes pg_bulk_region's bulk copies deliver for the same region: the rows
 * inside the array (those pg_row_in admits) times the bytes [lo, hi) of each. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_bulk_bytes(const unsigned char *, const unsigned char *,
                                              int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                              int64_t n1, int64_t n2b, int, int64_t &tx)
{
    if constexpr (VEC == 16) {
        int lo, hi;
        pg_api_whole<VEC, ROWBYTES, 1>(o2b, n2b, &lo, &hi);
        tx += (int64_t)(hi - lo) * pg_span_in(o0, n0, P) * pg_span_in(o1, n1, R);
    }
}
#endif /* __CUDACC__ */
#endif /* PIPERT_BULK_CUH */
