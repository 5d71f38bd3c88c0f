/* ---- pipegen CUDA API support (templates/pg_cuda_api.cuh, embedded after pg_device.cuh
 * in the .cu of a lowering through CUDA's own interfaces) ----
 * The lowerings cg, barrier, pipeline, pipeline-roles, pipeline-thread and primitives copy
 * with the APIs of cooperative groups, libcu++ and the pipeline primitives instead of
 * inline PTX. Each section below compiles where its lowering's #include lines (the
 * module's `includes`) define its PG_API_* macro, so that a kernel includes only the
 * headers its own API needs. */
#ifndef PIPEGEN_CUDA_API_SUPPORT
#define PIPEGEN_CUDA_API_SUPPORT 1
#ifdef __CUDACC__

#ifdef PG_API_PRIMITIVES
/* ---- primitives: one chunk through __pipeline_memcpy_async, `valid` bytes read and the
 * rest zero-filled (its zfill argument). The common whole chunk passes constants, so that
 * the primitive's switch over zfill folds to one cp.async. Below 4 bytes (the primitive's
 * smallest copy) the chunk is copied synchronously, as pg_copy_chunk_async does. ---- */
template <int VEC>
__device__ __forceinline__ void pg_prim_chunk(unsigned char *dst, const unsigned char *src,
                                              int valid)
{
    if constexpr (VEC >= 4) {
        if (valid == VEC)
            __pipeline_memcpy_async(dst, src, VEC);
        else
            __pipeline_memcpy_async(dst, src, VEC, (size_t)(VEC - valid));
    } else {
        pg_copy_chunk_sync<VEC>(dst, src, valid);
    }
}
#endif /* PG_API_PRIMITIVES */

#if defined(PG_API_MEMCPY_ASYNC) || defined(PG_API_CG)
/* ---- Row copies (barrier on sm_90, cg): the APIs copy one contiguous range per call and
 * have no zero-fill, so a region is copied as its rows' whole chunks inside the array by
 * the API, and everything else (a halo left of the array, the end of a row, rows outside
 * the array) by pg_api_edges, synchronously and zero-filled. ---- */

/* The whole chunks of a row inside the array: bytes [lo, hi) of the region's rows, hi - lo
 * a multiple of MULT chunks (the rest of the row goes to the edges). */
template <int VEC, long long ROWBYTES, int MULT>
__device__ __forceinline__ void pg_api_whole(int64_t o2b, int64_t n2b, int *lo, int *hi)
{
    const int64_t l = o2b < 0 ? (-o2b < ROWBYTES ? -o2b : ROWBYTES) : 0;
    const int64_t h = n2b - o2b >= ROWBYTES ? ROWBYTES : (n2b - o2b) / VEC * VEC;
    *lo = (int)l;
    *hi = (int)(h > l ? l + (h - l) / (VEC * MULT) * (VEC * MULT) : l);
}

/* The chunks of a region that the API does not copy: those outside bytes [lo, hi) of a
 * row, partial ones, rows outside the array, and all of them below cp.async's 4 bytes;
 * stored synchronously, dealt to the threads as pg_region deals chunks. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_api_edges(unsigned char *dst, const unsigned char *base,
                                             int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                             int64_t n1, int64_t n2b, int tid, int lo, int hi)
{
    pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
        dst, base, o0, o1, o2b, n0, n1, n2b, tid,
        [=](unsigned char *d, const unsigned char *s, int v) {
            const int col = (int)((d - dst) % PITCH);
            if (VEC < 4 || v < VEC || col < lo || col >= hi)
                pg_copy_chunk_sync<VEC>(d, s, v);
        });
}
#endif

#ifdef PG_API_MEMCPY_ASYNC
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
 * publishes the step to the other threads. */
template <int VEC, class Sync, int EVICT>
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
    pg_copy_chunk_sync<VEC>(dst, src, valid);
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
        for (int row = tid; row < P * R && hi > lo; row += NT) {
            int64_t g0, g1;
            if (pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
                (void)cuda::memcpy_async(dst + (int64_t)row * PITCH + lo,
                                         pg_evict_src(base + (g0 * n1 + g1) * n2b + o2b + lo, ev),
                                         cuda::aligned_size_t<16>((size_t)(hi - lo)), bar);
        }
        pg_api_edges<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid,
                                                     lo, hi);
        return;
    }
#endif
    pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
        dst, base, o0, o1, o2b, n0, n1, n2b, tid,
        [&](unsigned char *d, const unsigned char *s, int v) { pg_cuda_chunk<VEC>(d, s, v, bar, ev); });
}
#endif /* PG_API_MEMCPY_ASYNC */

#ifdef PG_API_CG
/* ---- cg: cooperative_groups::memcpy_async commits one cp.async group in every thread of
 * the group after each call (__pipeline_commit), also when it copies nothing;
 * cg::wait_prior<N> counts those calls (and waits as for 8 when N is larger:
 * __pipeline_wait_prior's limit). The rows of a region are dealt to tiles of G threads
 * (G a power of two up to a warp, at most the row's chunks): tile g copies rows g, g +
 * NT/G, ..., one call per row, and every tile makes the same number of calls
 * (pg_cg_calls), an empty call where it has no row or the row is outside the array, so
 * that a step commits the same number of groups in every thread and every step. A call
 * copies a multiple of G chunks: cg's tile path lets the last lanes of a tile copy a
 * row's last chunk again when the count is not one, and those duplicate writes are races
 * (racecheck); the chunks left over go to pg_api_edges. ---- */
template <int VEC, long long ROWBYTES, int NT>
__host__ __device__ constexpr int pg_cg_tile()
{
    int g = 1;
    while (g < 32 && 2 * g * VEC <= ROWBYTES && NT % (2 * g) == 0)
        g *= 2;
    return g;
}

/* The memcpy_async calls of one region per step, in every thread. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__host__ __device__ constexpr int pg_cg_calls()
{
    constexpr int tiles = NT / pg_cg_tile<VEC, ROWBYTES, NT>();
    return (P * R + tiles - 1) / tiles;
}

/* A staged region (pg_region's shape and place) through cooperative_groups::memcpy_async.
 * Every thread of the block calls it. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_cg_region(unsigned char *dst, const unsigned char *base,
                                             int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                             int64_t n1, int64_t n2b, int tid,
                                             const cooperative_groups::thread_block &block)
{
    constexpr int G = pg_cg_tile<VEC, ROWBYTES, NT>(), TILES = NT / G;
    const auto tile = cooperative_groups::tiled_partition<G>(block);
    int lo, hi;
    pg_api_whole<VEC, ROWBYTES, G>(o2b, n2b, &lo, &hi);
#pragma unroll 1
    for (int c = 0; c < pg_cg_calls<VEC, P, R, ROWBYTES, PITCH, NT>(); ++c) {
        const int row = tid / G + c * TILES;
        int64_t g0, g1;
        if (VEC >= 4 && row < P * R && hi > lo && pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
            cooperative_groups::memcpy_async(tile, dst + (int64_t)row * PITCH + lo,
                                             base + (g0 * n1 + g1) * n2b + o2b + lo,
                                             cuda::aligned_size_t<VEC>((size_t)(hi - lo)));
        else
            cooperative_groups::memcpy_async(tile, dst, base, cuda::aligned_size_t<VEC>(0));
    }
    pg_api_edges<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid, lo,
                                                 hi);
}

/* N empty memcpy_async calls: the batches of a step past the block's last, so that every
 * step commits as many groups as a copied one and the wait counts stay right. */
template <int N>
__device__ __forceinline__ void pg_cg_empty_batches(const cooperative_groups::thread_block &block,
                                                    unsigned char *dst, const unsigned char *src)
{
#pragma unroll 1
    for (int i = 0; i < N; ++i)
        cooperative_groups::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(0));
}
#endif /* PG_API_CG */

#endif /* __CUDACC__ */
#endif /* PIPEGEN_CUDA_API_SUPPORT */
