/* pipert_bulk.cuh: bulk copies (cp.async.bulk, TMA without a tensor map) completing on an
 * mbarrier by transaction bytes, the bytes a region's copies deliver, and bulk stores of
 * staged outputs (lowering bulk, sm_90 and newer).
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
 * whole chunks inside the array ([lo, hi), pg_api_whole) are one bulk copy, the rows dealt
 * to the copying threads in turn (row r by thread r % NT: a region of many rows is issued
 * by many threads at once, not one after another by one). One thread arms the barrier for
 * all of them (pg_bulk_bytes); a copy that lands before that arrival takes the phase's
 * tx-count below zero, and the phase cannot complete without the arrival. Everything else
 * (a halo left of the array, a row's partial end, rows outside the array: zero-filled) is
 * stored by every copying thread (pg_api_edges). Where the launch's pointers or row
 * pitches allow less than 16 bytes, no bulk copy is possible: every chunk is stored so,
 * and the barrier expects no bytes. The stores are published to the consumers by the
 * block barrier the schedule has between a step's copy and its compute, or with producer
 * warps by each producer thread's own arrival on the full barrier (docs/lowerings.md). ---- */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, bool HINT>
__device__ __forceinline__ void pg_bulk_region(unsigned char *dst, const unsigned char *base,
                                               int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                               int64_t n1, int64_t n2b, int tid, uint64_t *bar,
                                               pg_l2_hint<HINT> l2)
{
    if constexpr (VEC == 16) {
        int lo, hi;
        pg_api_whole<VEC, ROWBYTES, 1>(o2b, n2b, &lo, &hi);
        if (hi > lo)
            pg_api_rows<P, R, PITCH>(
                dst, base, o0, o1, o2b, n0, n1, n2b, tid, NT, lo,
                [&](unsigned char *d, const unsigned char *s) { pg_bulk_copy(d, s, hi - lo, bar, l2); });
        pg_api_edges<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid,
                                                     lo, hi);
    } else {
        (void)bar; (void)l2;
        pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
            dst, base, o0, o1, o2b, n0, n1, n2b, tid,
            [](unsigned char *d, const unsigned char *s, int v) { pg_copy_chunk_sync<VEC, true>(d, s, v); });
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
/* ---- Staged outputs written back by bulk stores (cp.async.bulk.global.shared::cta): the
 * compute's writes are made visible to the async proxy by each writing thread
 * (pg_fence_proxy_async) before the block barrier that precedes the store; each row's
 * 16-byte aligned middle inside the array is one bulk store, the rows dealt to the
 * threads; the rest of a row (its partial end) is stored with ordinary stores (a bulk
 * store has no bounds). Each thread commits its stores as one bulk group and waits for
 * their reads of shared memory (.read) before the barrier after which the slot is written
 * again; the global writes complete on their own (before the kernel ends). ---- */
__device__ __forceinline__ void pg_fence_proxy_async()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void pg_bulk_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/* Wait until at most N of the thread's bulk groups still read their shared memory. */
template <int N>
__device__ __forceinline__ void pg_bulk_wait_read()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}

/* One bulk store of `bytes` (a multiple of 16; both addresses 16-byte aligned). */
__device__ __forceinline__ void pg_bulk_store(unsigned char *dst, const unsigned char *src,
                                              int bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 ::"l"(dst), "r"(pg_smem_addr(src)), "r"(bytes) : "memory");
#endif
}

/* pg_store_region's work: the rows' middles [lo, hi) by bulk stores, the chunks outside
 * them by ordinary stores (none for a tile inside the array); with copies narrower than
 * 16 bytes (the launch's pointers or pitches) every chunk by ordinary stores. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_bulk_store_region(unsigned char *base, const unsigned char *src,
                                                     int64_t o0, int64_t o1, int64_t o2b,
                                                     int64_t n0, int64_t n1, int64_t n2b, int tid)
{
    if constexpr (VEC == 16) {
        constexpr int CPR = (int)(ROWBYTES / VEC), ROWS = P * R;
        int lo, hi;
        pg_api_whole<VEC, ROWBYTES, 1>(o2b, n2b, &lo, &hi);
        for (int r = tid; r < ROWS && hi > lo; r += NT) {
            int64_t g0, g1;
            if (pg_row_in<R>(r, o0, o1, n0, n1, &g0, &g1))
                pg_bulk_store(base + (g0 * n1 + g1) * n2b + o2b + lo, src + r * PITCH + lo, hi - lo);
        }
        if (lo == 0 && hi == ROWBYTES)
            return;
        for (int c = tid; c < ROWS * CPR; c += NT) {
            const int row = c / CPR, col = (c % CPR) * VEC;
            const int64_t gb = o2b + col;
            const int valid = pg_valid<VEC>(gb, n2b);
            int64_t g0, g1;
            if ((col < lo || col >= hi) && valid && pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
                pg_store_chunk<VEC>(base + (g0 * n1 + g1) * n2b + gb, src + row * PITCH + col, valid);
        }
    } else {
        pg_store_region<VEC, P, R, ROWBYTES, PITCH, NT>(base, src, o0, o1, o2b, n0, n1, n2b, tid);
    }
}
#endif /* __CUDACC__ */
#endif /* PIPERT_BULK_CUH */
