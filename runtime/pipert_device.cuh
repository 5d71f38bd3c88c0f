/* pipert_device.cuh: the device support every generated kernel uses.
 * View types that index staged shared-memory copies with global coordinates (and plain
 * host arrays in the reference), synchronous chunk copies, region copies and stores, and
 * the deterministic block reduction used by accumulators.
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use. */
#ifndef PIPERT_DEVICE_CUH
#define PIPERT_DEVICE_CUH
#include <stdint.h>
#include "pipert.h"

/* The offset of a global coordinate inside a staged region: it fits in 32 bits, so the
 * difference is taken in 32 bits (exact modulo 2^32), which keeps index arithmetic out of
 * 64-bit instructions. */
__host__ __device__ __forceinline__ int pg_local(int64_t i, int64_t origin)
{
    return (int)((uint32_t)i - (uint32_t)origin);
}

/* A rank-1 view of a staged slot: v[i] reads base[i - origin]. */
template <class T> struct pg_view1 {
    T *base;
    int64_t origin0;
    __host__ __device__ T &operator[](int64_t i) const { return base[pg_local(i, origin0)]; }
};

/* A rank-2 view: v[j][i] reads base[(j - o0) * pitch + (i - o1)]. */
template <class T> struct pg_row {
    T *row;
    int64_t origin;
    __host__ __device__ T &operator[](int64_t i) const { return row[i - origin]; }
};
template <class T> struct pg_view2 {
    static constexpr int swizzle = 0;
    T *base;
    int64_t origin0, origin1, pitch;
    __host__ __device__ pg_row<T> operator[](int64_t j) const {
        return pg_row<T>{base + (j - origin0) * pitch, origin1};
    }
};

/* Views of staged slots: as above, with the pitch a constant and offsets inside the slot
 * computed in 32 bits (a slot is far smaller than 2^31 elements). */
template <class T> struct pg_srow {
    T *row;
    int64_t origin;
    __device__ T &operator[](int64_t i) const { return row[pg_local(i, origin)]; }
};
/* A row of a swizzled slot (lowering tensor; SW, the span, 32, 64 or 128 bytes): the byte
 * b of row `row` lies in column block b / SW (ROWS rows of SW bytes each) at row * SW +
 * b % SW, and its 16-byte chunk is XORed with the 128-byte line's index (bits 7 on of the
 * offset, as many as the span has chunks to spare): the copy engine's swizzle, the slot
 * being 1024-byte aligned as the pattern's repeat needs. */
template <class T, int SW, int ROWS> struct pg_zrow {
    T *base;
    int row;
    int64_t origin;
    __device__ T &operator[](int64_t i) const {
        static_assert(SW == 32 || SW == 64 || SW == 128, "pipert: swizzle spans");
        const unsigned b = (unsigned)pg_local(i, origin) * (unsigned)sizeof(T);
        const unsigned o = b / SW * (ROWS * SW) + (unsigned)row * SW + b % SW;
        return *(T *)((uintptr_t)base + (o ^ ((o >> 3) & (SW - 16))));
    }
};

/* Slot views, unswizzled (SW 0: rows PITCH elements apart) or swizzled (pg_zrow; ROWS
 * the region's rows, planes included, and row0 the first of a plane's). */
template <class T, int PITCH, int SW = 0, int ROWS = 0> struct pg_sview2 {
    static constexpr int swizzle = SW;
    T *base;
    int64_t origin0, origin1;
    int row0 = 0;
    __device__ auto operator[](int64_t j) const {
        if constexpr (SW == 0)
            return pg_srow<T>{base + pg_local(j, origin0) * PITCH, origin1};
        else
            return pg_zrow<T, SW, ROWS>{base, row0 + pg_local(j, origin0), origin1};
    }
};
template <class T, int PITCH1, int PITCH0, int SW = 0, int ROWS = 0> struct pg_sview3 {
    static constexpr int swizzle = SW;
    T *base;
    int64_t origin0, origin1, origin2;
    __device__ pg_sview2<T, PITCH1, SW, ROWS> operator[](int64_t k) const {
        if constexpr (SW == 0)
            return {base + pg_local(k, origin0) * PITCH0, origin1, origin2};
        else
            return {base, origin1, origin2, pg_local(k, origin0) * (PITCH0 / PITCH1)};
    }
};

/* A rank-3 view: v[k][j][i]. */
template <class T> struct pg_view3 {
    static constexpr int swizzle = 0;
    T *base;
    int64_t origin0, origin1, origin2, pitch0, pitch1;
    __host__ __device__ pg_view2<T> operator[](int64_t k) const {
        return pg_view2<T>{base + (k - origin0) * pitch0, origin1, origin2, pitch1};
    }
};

/* Halo borders (`halo W clamp|mirror`): the coordinate a read outside [0, n) of its
 * dimension takes instead. Clamp: the edge element. Mirror: reflected about the edge
 * element (-1 reads 1, n reads n - 2), then clamped, for an array narrower than the halo.
 * The copies fill a region's out-of-array part with zeros; a view with a border never
 * reads it, so no step fixes it up. */
enum { PG_BORDER_CLAMP = 1, PG_BORDER_MIRROR = 2 };
template <int B> __host__ __device__ __forceinline__ int64_t pg_border(int64_t i, int64_t n)
{
    if (B == PG_BORDER_MIRROR) {
        i = i < 0 ? -i : i;
        i = i >= n ? 2 * (n - 1) - i : i;
    }
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* One dimension's border for a view whose origin is o over an array of n elements. On the
 * device the coordinate is mapped in the view's local coordinates, 32 bits (a slot's
 * offsets are), against bounds [lo, hi] computed once with the view: two integer min/max
 * a coordinate for clamp. The host (the reference, over whole arrays) maps in 64 bits. */
struct pg_edge {
    int64_t origin, n;
    int lo, hi;
    __host__ __device__ pg_edge(int64_t o, int64_t n_)
        : origin(o), n(n_), lo((int)(-o < -(1LL << 30) ? -(1LL << 30) : -o)),
          hi((int)(n_ - 1 - o > (1LL << 30) ? (1LL << 30) : n_ - 1 - o)) {}
    template <int B> __host__ __device__ __forceinline__ int64_t at(int64_t i) const
    {
#ifdef __CUDA_ARCH__
        int l = pg_local(i, origin);
        if (B == PG_BORDER_MIRROR)
            l = l < lo ? 2 * lo - l : l > hi ? 2 * hi - l : l;
        l = l < lo ? lo : l > hi ? hi : l;
        return origin + l;
#else
        return pg_border<B>(i, n);
#endif
    }
};

/* A view V (a slot's in the kernel, the whole array's in the reference) whose coordinates
 * go through border B first, n0.. the array's extents: v[i], v[j][i], v[k][j][i]. */
template <int B, class R> struct pg_brow {
    R row;
    pg_edge e;
#pragma nv_exec_check_disable
    __host__ __device__ decltype(auto) operator[](int64_t i) const { return row[e.at<B>(i)]; }
};
template <int B, class V> struct pg_bview1 {
    V v;
    pg_edge e0;
    __host__ __device__ pg_bview1(V v_, int64_t n0) : v(v_), e0(v_.origin0, n0) {}
#pragma nv_exec_check_disable
    __host__ __device__ decltype(auto) operator[](int64_t i) const { return v[e0.at<B>(i)]; }
};
template <int B, class V> struct pg_bview2 {
    V v;
    pg_edge e0, e1;
    __host__ __device__ pg_bview2(V v_, int64_t n0, int64_t n1)
        : v(v_), e0(v_.origin0, n0), e1(v_.origin1, n1) {}
    __host__ __device__ pg_bview2(V v_, pg_edge e0_, pg_edge e1_) : v(v_), e0(e0_), e1(e1_) {}
#pragma nv_exec_check_disable
    __host__ __device__ auto operator[](int64_t j) const
    {
        return pg_brow<B, decltype(v[0])>{v[e0.at<B>(j)], e1};
    }
};
template <int B, class V> struct pg_bview3 {
    V v;
    pg_edge e0, e1, e2;
    __host__ __device__ pg_bview3(V v_, int64_t n0, int64_t n1, int64_t n2)
        : v(v_), e0(v_.origin0, n0), e1(v_.origin1, n1), e2(v_.origin2, n2) {}
#pragma nv_exec_check_disable
    __host__ __device__ auto operator[](int64_t k) const
    {
        return pg_bview2<B, decltype(v[0])>(v[e0.at<B>(k)], e1, e2);
    }
};

#ifdef __CUDACC__
/* setmaxnreg (arch-specific targets only: sm_90a): the registers a thread of this
 * warpgroup has from here on, every warp of the warpgroup executing it. keep gives the
 * rest back to the block's pool; take waits until the pool holds what it asks (pipegen
 * plans no more than the keeps leave of the launch's registers). */
template <int N> __device__ __forceinline__ void pg_regs_keep()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void pg_regs_take()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* Quotient and remainder of non-negative 64-bit values, in 32 bits when both fit (the
 * usual case: 64-bit division is a long software sequence on the GPU). */
__device__ __forceinline__ int64_t pg_div(int64_t a, int64_t b)
{
    return ((uint64_t)a | (uint64_t)b) >> 32 ? a / b : (int64_t)((uint32_t)a / (uint32_t)b);
}
__device__ __forceinline__ int64_t pg_mod(int64_t a, int64_t b)
{
    return ((uint64_t)a | (uint64_t)b) >> 32 ? a % b : (int64_t)((uint32_t)a % (uint32_t)b);
}

/* The work item of a block's step on a persistent grid. The first AHEAD steps of every
 * block, and every step without a tile counter, take the static order's
 * blockIdx.x + step * gridDim.x: no block starts on a round trip to the counter. Later
 * steps take AHEAD * gridDim.x plus the counter's next index (the launcher zeroes it;
 * every block draws from it, so a block that runs slower takes fewer items). Either way a
 * block's items only grow, and each item below the end is taken once. */
template <int AHEAD>
__device__ __forceinline__ int64_t pg_claim_fetch(unsigned long long *counter, int64_t step)
{
    if (counter && step >= AHEAD)
        return (int64_t)AHEAD * gridDim.x + (int64_t)atomicAdd(counter, 1ull);
    return (int64_t)blockIdx.x + step * (int64_t)gridDim.x;
}

/* ---- synchronous copies (mechanism `sync`, and the fallback for pointers aligned to
 * less than 4 bytes) ---- */
template <int VEC> struct pg_chunk;
template <> struct pg_chunk<16> { typedef int4 type; };
template <> struct pg_chunk<8>  { typedef int2 type; };
template <> struct pg_chunk<4>  { typedef int type; };
template <> struct pg_chunk<2>  { typedef short type; };
template <> struct pg_chunk<1>  { typedef char type; };

/* Copy `valid` bytes (0..VEC) of one chunk, zero-filling the rest of it. ZERO_WHOLE: a
 * chunk wholly outside the array is one store of zeros. Where a tile is planned at a
 * bound (`cols <= N`) most of a short row's slot lies past the array's end on every tile:
 * byte by byte its lanes, 16 bytes apart, met 4 to a bank, and rmsnorm's packed kernel (g
 * staged at its bound, 28 of 32 KiB past the array's end at rows of 1024) spent 105
 * million bank conflicts of 197 million shared wavefronts on it (ncu, H200; 0.62 -> 0.97
 * of cudaMemcpy with the store). Elsewhere such chunks are a halo's or the last tile's;
 * where every chunk of every tile is checked (pg_region) and the whole chunk is an async
 * copy (pipeline, pipeline-thread), the branch moves the loop's schedule: jacobi2d per
 * tile 0.859 of cudaMemcpy with it against 0.887 without under pipeline, 0.872 against
 * 0.888 under pipeline-thread, but colsum under pipeline persistent, whose tiles never
 * reach the array's end, 0.944 of the same-shape reference against 0.924 (H100, one
 * process); jacobi2d is the older row. The generated chunk copies say which
 * (emit_zero_whole). Tested once per chunk in pg_region_chunks' loop instead, it made
 * ptxas spill in saxpy's 16-byte kernel under cp.async persistent and in reduce_sum's
 * under pipeline-roles (sm_90). The partial chunk keeps the unrolled select:
 * a store of zeros before a loop to `valid` took 8 more registers in most 16-byte
 * kernels. The test is `<= 0`: as `== 0` ptxas spilled 24 bytes in hash's 16-byte kernel
 * under cp.async (sm_90, CUDA 13.0). */
template <int VEC, bool ZERO_WHOLE>
__device__ __forceinline__ void pg_copy_chunk_sync(unsigned char *dst, const unsigned char *src,
                                                   int valid)
{
    typedef typename pg_chunk<VEC>::type chunk_t;
    if (valid == VEC) {
        *reinterpret_cast<chunk_t *>(dst) = *reinterpret_cast<const chunk_t *>(src);
        return;
    }
    if constexpr (ZERO_WHOLE) {
        if (valid <= 0) {
            *reinterpret_cast<chunk_t *>(dst) = chunk_t{};
            return;
        }
    }
    for (int b = 0; b < VEC; ++b)
        dst[b] = b < valid ? src[b] : (unsigned char)0;
}

/* A kernel run in clusters of N blocks (sm_90 and newer): where a variant's kernel is
 * also compiled for an older architecture (its body compiled out there) nvcc refuses the
 * attribute. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define PG_CLUSTER_DIMS(N)
#else
#define PG_CLUSTER_DIMS(N) __cluster_dims__(N, 1, 1)
#endif

__device__ __forceinline__ unsigned pg_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
/* ---- region copies. A region of a global array is P planes x R rows x ROWBYTES bytes
 * (rank 1: P = R = 1). Row (p, r) is global row (o0 + p, o1 + r) of an array of n0 planes
 * of n1 rows of n2b bytes, starting at byte o2b of the row; in shared memory it starts at
 * (p * R + r) * PITCH. The region is split into VEC-byte chunks dealt to the NT threads
 * of the copying role (tid is the thread's index among them). A chunk outside the array
 * is zero-filled (valid = 0, its source the array's base, which is always a valid
 * address); a chunk crossing the end of a row is partly valid. Chunks never cross the
 * start of a row: the planner aligns origins to VEC. COPY(dst, src, valid) moves one. ---- */
template <int VEC>
__device__ __forceinline__ int pg_valid(int64_t gb, int64_t n2b)
{
    const int64_t v = n2b - gb;
    return gb < 0 ? 0 : (v < 0 ? 0 : (v > VEC ? VEC : (int)v));
}

template <int R>
__device__ __forceinline__ bool pg_row_in(int row, int64_t o0, int64_t o1, int64_t n0, int64_t n1,
                                          int64_t *g0, int64_t *g1)
{
    *g0 = o0 + row / R;
    *g1 = o1 + row % R;
    return *g0 >= 0 && *g0 < n0 && *g1 >= 0 && *g1 < n1;
}

/* Where a region inside its array is copied by one or two producer warps, each thread
 * issues dozens of chunks and the index math per chunk bounds the copy: the source is the
 * column's chunk in the region's first row plus the row's offset. jacobi2d under
 * cp.async.mbarrier persistent, one producer warp: 0.816 of cudaMemcpy against 0.782. Not
 * for a whole block: the same form measured 0.829 against 0.978 on jacobi2d under
 * cp.async per tile, 256 threads (H100, same process; the loops' SASS did not show why). */
#define PG_FEW_COPIERS 64

template <int P, int R>
__device__ __forceinline__ const unsigned char *pg_inside_src(const unsigned char *base,
                                                              int64_t o0, int64_t o1, int64_t gb,
                                                              int64_t n1, int64_t n2b, int row)
{
    const unsigned char *first = base + (o0 * n1 + o1) * n2b + gb;
    if constexpr (P == 1)
        return first + (int64_t)row * n2b;
    else
        return first + ((int64_t)(row / R) * n1 + row % R) * n2b;
}

/* The chunks of a region; INSIDE: the caller has seen the whole region lie inside the
 * array, so that every chunk is whole and nothing is checked per chunk. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, bool INSIDE,
          class Copy>
__device__ __forceinline__ void pg_region_chunks(unsigned char *dst, const unsigned char *base,
                                                 int64_t o0, int64_t o1, int64_t o2b,
                                                 int64_t n0, int64_t n1, int64_t n2b, int tid,
                                                 Copy copy)
{
    static_assert(ROWBYTES % VEC == 0, "region rows must be a multiple of the copy width");
    static_assert(PITCH % VEC == 0, "shared rows must keep the copy width's alignment");
    constexpr int CPR = (int)(ROWBYTES / VEC), ROWS = P * R;
    if constexpr (NT % CPR == 0) {
        /* Each thread keeps one column and walks the rows: no division per chunk. */
        const int col = tid % CPR;
        const int64_t gb = o2b + (int64_t)col * VEC;
        const int cvalid = INSIDE ? VEC : pg_valid<VEC>(gb, n2b);
#pragma unroll
        for (int row = tid / CPR; row < ROWS; row += NT / CPR) {
            if constexpr (INSIDE && NT <= PG_FEW_COPIERS) {
                copy(dst + row * PITCH + col * VEC,
                     pg_inside_src<P, R>(base, o0, o1, gb, n1, n2b, row), VEC);
                continue;
            }
            int64_t g0, g1;
            const bool in = pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1);
            const int valid = INSIDE ? VEC : (in ? cvalid : 0);
            copy(dst + row * PITCH + col * VEC,
                 valid ? base + (g0 * n1 + g1) * n2b + gb : base, valid);
        }
    } else if constexpr (CPR % NT == 0 && ROWS > 1) {
        /* Rows of a multiple of the threads' chunks: each thread its chunks t, t + NT, ...
         * of every row, no stepping state. */
#pragma unroll 4
        for (int row = 0; row < ROWS; ++row) {
            int64_t g0, g1;
            const bool in = pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1);
#pragma unroll
            for (int k = 0; k < CPR / NT; ++k) {
                const int col = tid + k * NT;
                const int64_t gb = o2b + (int64_t)col * VEC;
                const int valid = INSIDE ? VEC : (in ? pg_valid<VEC>(gb, n2b) : 0);
                copy(dst + row * PITCH + col * VEC,
                     valid ? base + (g0 * n1 + g1) * n2b + gb : base, valid);
            }
        }
    } else {
        /* The chunk's row and column advance by constant steps: no division per chunk. */
        int row = tid / CPR, col = tid % CPR;
#pragma unroll 4
        for (int c = tid; c < ROWS * CPR; c += NT) {
            const int64_t gb = o2b + (int64_t)col * VEC;
            if constexpr (INSIDE && NT <= PG_FEW_COPIERS) {
                copy(dst + row * PITCH + col * VEC,
                     pg_inside_src<P, R>(base, o0, o1, gb, n1, n2b, row), VEC);
            } else {
                int64_t g0, g1;
                const bool in = pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1);
                const int valid = INSIDE ? VEC : (in ? pg_valid<VEC>(gb, n2b) : 0);
                copy(dst + row * PITCH + col * VEC,
                     valid ? base + (g0 * n1 + g1) * n2b + gb : base, valid);
            }
            col += NT % CPR;
            row += NT / CPR + (col >= CPR);
            col -= col >= CPR ? CPR : 0;
        }
    }
}

/* Whether every row of a region (P planes x R rows from (o0, o1)) lies inside the array. */
template <int P, int R>
__device__ __forceinline__ bool pg_rows_inside(int64_t o0, int64_t o1, int64_t n0, int64_t n1)
{
    return o0 >= 0 && o0 + P <= n0 && o1 >= 0 && o1 + R <= n1;
}

template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, class Copy>
__device__ __forceinline__ void pg_region(unsigned char *dst, const unsigned char *base,
                                          int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                          int64_t n1, int64_t n2b, int tid, Copy copy)
{
    pg_region_chunks<VEC, P, R, ROWBYTES, PITCH, NT, false>(dst, base, o0, o1, o2b, n0, n1,
                                                            n2b, tid, copy);
}

/* pg_region, but a region wholly inside its array (every tile but those at an edge)
 * takes a loop that checks nothing per chunk. For the lowerings whose chunk copy branches
 * around a part chunk's byte copy (cp.async, cp.async.mbarrier, primitives): those checks
 * and that branch, inlined at every unrolled chunk, held jacobi2d under cp.async per
 * tile at 0.84 of cudaMemcpy against 0.98 split (H100, same process). For pipeline-roles,
 * whose producer warps issue every chunk of a step: colsum's producer loop ran some 60
 * instructions a chunk (130 with the part chunk's byte copy it carries inline), split
 * some 20 (SASS, sm_90); with one producer warp, of cudaMemcpy or the same-shape
 * reference, colsum 0.16 -> 0.97, rmsnorm 0.21 -> 0.73, layernorm 0.53 -> 0.94 and
 * sgemm_roles 0.30 -> 0.64 of cuBLAS (H100, same process). For pipeline, and
 * pipeline-thread over tiles with rows, whose memcpy_async calls the checks sat between:
 * colsum 0.65 -> 0.89 and 0.68 -> 0.94 of the same-shape reference (H200, in turns; the
 * lowerings' print_copy has the rest). Not for the others: the
 * second loop costs registers (ptxas, sm_90: rgba under sync 32 -> 40, hash under
 * pipeline-thread 32 -> 40 and spills, jacobi2d under bulk 48 -> 80), and split,
 * rgba under sync per tile measured 0.91 against 0.98, hash under pipeline-thread 0.90
 * against 0.98 (H100, same process). */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, class Copy>
__device__ __forceinline__ void pg_region_split(unsigned char *dst, const unsigned char *base,
                                                int64_t o0, int64_t o1, int64_t o2b,
                                                int64_t n0, int64_t n1, int64_t n2b, int tid,
                                                Copy copy)
{
    if (pg_rows_inside<P, R>(o0, o1, n0, n1) && o2b >= 0 && o2b + ROWBYTES <= n2b)
        pg_region_chunks<VEC, P, R, ROWBYTES, PITCH, NT, true>(dst, base, o0, o1, o2b, n0, n1,
                                                               n2b, tid, copy);
    else
        pg_region_chunks<VEC, P, R, ROWBYTES, PITCH, NT, false>(dst, base, o0, o1, o2b, n0,
                                                                n1, n2b, tid, copy);
}

/* Write a staged output's region back: the mirror of pg_region, with ordinary stores;
 * only the bytes inside the array are written. */
template <int VEC>
__device__ __forceinline__ void pg_store_chunk(unsigned char *d, const unsigned char *s, int valid)
{
    typedef typename pg_chunk<VEC>::type chunk_t;
    if (valid == VEC) {
        *reinterpret_cast<chunk_t *>(d) = *reinterpret_cast<const chunk_t *>(s);
        return;
    }
    for (int b = 0; b < valid; ++b)
        d[b] = s[b];
}

template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_store_region(unsigned char *base, const unsigned char *src,
                                                int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                                int64_t n1, int64_t n2b, int tid)
{
    constexpr int CPR = (int)(ROWBYTES / VEC), ROWS = P * R;
    if constexpr (NT % CPR == 0) {
        const int col = tid % CPR;
        const int64_t gb = o2b + (int64_t)col * VEC;
        const int cvalid = pg_valid<VEC>(gb, n2b);
#pragma unroll
        for (int row = tid / CPR; row < ROWS; row += NT / CPR) {
            int64_t g0, g1;
            if (cvalid && pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
                pg_store_chunk<VEC>(base + (g0 * n1 + g1) * n2b + gb,
                                    src + row * PITCH + col * VEC, cvalid);
        }
    } else {
        int row = tid / CPR, col = tid % CPR;
#pragma unroll 4
        for (int c = tid; c < ROWS * CPR; c += NT) {
            const int64_t gb = o2b + (int64_t)col * VEC;
            int64_t g0, g1;
            const int valid = pg_valid<VEC>(gb, n2b);
            if (valid && pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
                pg_store_chunk<VEC>(base + (g0 * n1 + g1) * n2b + gb,
                                    src + row * PITCH + col * VEC, valid);
            col += NT % CPR;
            row += NT / CPR + (col >= CPR);
            col -= col >= CPR ? CPR : 0;
        }
    }
}

/* ---- array accumulators: accum T NAME[N] combine sum ----
 * A block adds into bins in shared memory and writes them as its partial; the combine
 * kernel adds the partials in block order. Integers add with shared atomics into one copy
 * of the bins, in a 32- or 64-bit word whose sums wrap as T's own do (exact, in any
 * order). Floating point adds into one copy per warp, the lanes of an update that hit
 * the same bin summed in lane order first and added by the lowest: a warp that reaches
 * its updates together adds in the same order on every run, and the warps' copies are
 * added in warp order, so the result has the same bits run to run. (The atomic add only
 * keeps lanes that reach an update apart, in divergent code, from losing each other's.) */
template <class T> struct pg_acc_word { typedef T type; };
template <> struct pg_acc_word<signed char> { typedef unsigned type; };
template <> struct pg_acc_word<unsigned char> { typedef unsigned type; };
template <> struct pg_acc_word<short> { typedef unsigned type; };
template <> struct pg_acc_word<unsigned short> { typedef unsigned type; };
template <> struct pg_acc_word<int> { typedef unsigned type; };
template <> struct pg_acc_word<unsigned> { typedef unsigned type; };
template <> struct pg_acc_word<long long> { typedef unsigned long long type; };
template <> struct pg_acc_word<unsigned long long> { typedef unsigned long long type; };

/* Integers add exactly in any order (shared atomics); floating point in a fixed one. (A
 * copy of integer bins per warp measured the same as one a block, H100: histogram 0.55
 * of cudaMemcpy either way, histogram_uchar4 0.71 and 0.69.) */
template <class W> struct pg_acc_exact { static constexpr bool value = true; };
template <> struct pg_acc_exact<float> { static constexpr bool value = false; };
template <> struct pg_acc_exact<double> { static constexpr bool value = false; };

template <class T>
__device__ __forceinline__ void pg_acc_add_ordered(T *bins, unsigned k, T v)
{
    /* The common case first, two warp instructions to see it: the whole warp is here, its
     * lanes' bins in increasing order (a row's columns), so each lane adds alone; the
     * __syncwarp orders the adds before the warp's next ones. */
    if (__activemask() == 0xffffffffu) {
        const unsigned next = __shfl_down_sync(0xffffffffu, k, 1);
        if (__all_sync(0xffffffffu, (threadIdx.x & 31) == 31 || k < next)) {
            bins[k] += v;
            __syncwarp();
            return;
        }
    }
    const unsigned peers = __match_any_sync(__activemask(), k);
    const int leader = __ffs(peers) - 1;
    if (peers & (peers - 1)) {
        T r = __shfl_sync(peers, v, leader);
        for (unsigned rest = peers & (peers - 1); rest; rest &= rest - 1)
            r += __shfl_sync(peers, v, __ffs(rest) - 1);
        v = r;
    }
    if ((int)(threadIdx.x & 31) == leader)
        atomicAdd(&bins[k], v);
}

/* COPIES copies of N bins: a copy a warp, one after another (floating point), or with
 * LANES a copy a lane, interleaved (integers: bin k of lane l at k * 32 + l, so that a
 * warp's atomics fall in 32 banks whatever bins they hit). */
template <class T, int N, int COPIES, bool LANES = false>
struct pg_acc_array {
    typedef typename pg_acc_word<T>::type word;
    static constexpr int STRIDE = LANES ? 32 : 1;
    word *bins;

    struct ref {
        word *bins;     /* the thread's copy */
        long long k;
        /* An index outside [0, N) adds nothing (rather than into a neighbour's bins). */
        __device__ __forceinline__ void operator+=(T v) const
        {
            if ((unsigned long long)k >= (unsigned long long)N)
                return;
            if (pg_acc_exact<word>::value)
                atomicAdd(&bins[k * STRIDE], (word)v);
            else
                pg_acc_add_ordered<word>(bins, (unsigned)k, (word)v);
        }
        __device__ __forceinline__ void operator-=(T v) const { *this += (T)-v; }
        __device__ __forceinline__ void operator++() const { *this += (T)1; }
        __device__ __forceinline__ void operator++(int) const { *this += (T)1; }
        __device__ __forceinline__ void operator--() const { *this += (T)-1; }
        __device__ __forceinline__ void operator--(int) const { *this += (T)-1; }
    };

    __device__ __forceinline__ ref operator[](long long k) const
    {
        if (LANES)
            return ref{bins + (threadIdx.x & 31), k};
        return ref{bins + (COPIES > 1 ? (int)(threadIdx.x >> 5) * N : 0), k};
    }

    /* By every thread of the block before its first add; a __syncthreads follows. */
    template <int NT>
    __device__ __forceinline__ void clear() const
    {
        for (int e = threadIdx.x; e < COPIES * N; e += NT)
            bins[e] = 0;
    }

    /* By every thread of the block after its last add and a __syncthreads: the block's
     * bins, its copies added in order, into part[0, N). The lanes' copies of a bin are
     * integers, added in any order: thread e starts at lane e, so that a warp's reads fall
     * in 32 banks. */
    template <int NT>
    __device__ __forceinline__ void flush(T *part) const
    {
        for (int e = threadIdx.x; e < N; e += NT) {
            word r = 0;
            if (LANES)
                for (int c = 0; c < 32; ++c)
                    r += bins[e * 32 + ((c + e) & 31)];
            else
                for (int c = 0; c < COPIES; ++c)
                    r += bins[c * N + e];
            part[e] = (T)r;
        }
    }
};

/* ---- array accumulators: accum T NAME[N] combine min|max, in shared bins ----
 * One copy of the bins a block. A min or a max comes out the same in any order, so a
 * shared atomic a store is exact; floating point included, ordered by its bits: -0 below
 * +0, and a NaN above +inf (a positive one) or below -inf (a negative one). The body reads
 * its bin and stores the fold (`m[k] = v > m[k] ? v : m[k];`): what it reads may be behind
 * other threads' stores, never ahead of them, and the store folds into the bin whatever it
 * read. The bins hold int for the signed types up to 32 bits and unsigned for the
 * unsigned ones, so that an atomic orders them as T; half and bfloat16 a float (W). */
template <class T> struct pg_acc_xword { typedef T type; };
template <> struct pg_acc_xword<signed char> { typedef int type; };
template <> struct pg_acc_xword<short> { typedef int type; };
template <> struct pg_acc_xword<unsigned char> { typedef unsigned type; };
template <> struct pg_acc_xword<unsigned short> { typedef unsigned type; };

template <bool MAX, class W>
__device__ __forceinline__ void pg_atomic_extreme(W *p, W v)
{
    if (MAX)
        atomicMax(p, v);
    else
        atomicMin(p, v);
}

/* A float's bits order as a signed int where its sign is clear and in reverse as an
 * unsigned one where it is set: a max of a non-negative value is a signed max of its bits,
 * of a negative one an unsigned min (every non-negative float is below it as unsigned). */
template <bool MAX>
__device__ __forceinline__ void pg_atomic_extreme(float *p, float v)
{
    if (__float_as_int(v) >= 0)
        pg_atomic_extreme<MAX>((int *)p, __float_as_int(v));
    else
        pg_atomic_extreme<!MAX>((unsigned *)p, __float_as_uint(v));
}

template <bool MAX>
__device__ __forceinline__ void pg_atomic_extreme(double *p, double v)
{
    const long long b = __double_as_longlong(v);
    if (b >= 0)
        pg_atomic_extreme<MAX>((long long *)p, b);
    else
        pg_atomic_extreme<!MAX>((unsigned long long *)p, (unsigned long long)b);
}

template <class T, int N, bool MAX, class W = typename pg_acc_xword<T>::type>
struct pg_acc_extreme {
    typedef W word;
    word *bins;
    T id;

    struct ref {
        word *bins;
        long long k;
        T id;
        /* An index outside [0, N) reads the identity and folds nothing. */
        __device__ __forceinline__ bool in() const
        {
            return (unsigned long long)k < (unsigned long long)N;
        }
        __device__ __forceinline__ operator T() const
        {
            return in() ? (T) * (volatile word *)&bins[k] : id;
        }
        __device__ __forceinline__ const ref &operator=(T v) const
        {
            if (in())
                pg_atomic_extreme<MAX>(&bins[k], (word)v);
            return *this;
        }
    };

    __device__ __forceinline__ ref operator[](long long k) const { return ref{bins, k, id}; }

    /* By every thread of the block before its first store; a __syncthreads follows. */
    template <int NT>
    __device__ __forceinline__ void clear() const
    {
        for (int e = threadIdx.x; e < N; e += NT)
            bins[e] = (word)id;
    }

    /* By every thread of the block after its last store and a __syncthreads. */
    template <int NT>
    __device__ __forceinline__ void flush(T *part) const
    {
        for (int e = threadIdx.x; e < N; e += NT)
            part[e] = (T)bins[e];
    }
};

/* An accumulator by column as a body sees it in one of its thread's columns: NAME[c] is
 * that column's register (the planner proved every index is the column, so k is c). */
template <class T>
struct pg_acc_column {
    T &reg;
    struct ref {
        T &reg;
        __device__ __forceinline__ void operator+=(T v) const { reg += v; }
        __device__ __forceinline__ void operator-=(T v) const { reg -= v; }
        __device__ __forceinline__ void operator++() const { reg += (T)1; }
        __device__ __forceinline__ void operator++(int) const { reg += (T)1; }
        __device__ __forceinline__ void operator--() const { reg -= (T)1; }
        __device__ __forceinline__ void operator--(int) const { reg -= (T)1; }
        /* combine min and max: the body reads its column's value and stores the fold
         * (`m[c] = v > m[c] ? v : m[c];`), as a scalar accumulator's does */
        __device__ __forceinline__ const ref &operator=(T v) const { reg = v; return *this; }
        __device__ __forceinline__ operator T() const { return reg; }
    };
    __device__ __forceinline__ ref operator[](long long) const { return ref{reg}; }
};

/* out[e] = the fold of part[p * N + e] over the parts p, from id, in a fixed tree (the same
 * bits on every run): a block takes 32 elements at a time, its warp w the parts w, w +
 * NT/32, ... in order, and then warp 0 the warps' results in warp order. */
template <class T, int N, int NT, class Fold>
__device__ __forceinline__ void pg_acc_combine_fold(const T *part, unsigned parts, T *out,
                                                    T id, Fold fold)
{
    constexpr int W = NT / 32;
    __shared__ T red[W][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int base = blockIdx.x * 32; base < N; base += gridDim.x * 32) {
        const int e = base + lane;
        T acc = id;
        if (e < N)
            for (unsigned p = w; p < parts; p += W)
                acc = fold(acc, part[(size_t)p * N + e]);
        red[w][lane] = acc;
        __syncthreads();
        if (w == 0 && e < N) {
            T r = red[0][lane];
            for (int j = 1; j < W; ++j)
                r = fold(r, red[j][lane]);
            out[e] = r;
        }
        __syncthreads();
    }
}

/* The sum: an array accumulator's `combine sum`. */
template <class T, int N, int NT>
__device__ __forceinline__ void pg_acc_combine(const T *part, unsigned parts, T *out)
{
    pg_acc_combine_fold<T, N, NT>(part, parts, out, T(0),
                                  [](T x, T y) -> T { return x + y; });
}

/* ---- reductions along a tile's rows: reduce T NAME combine OP (...) { expr } ---- */
/* argmin and argmax: the value and its index along the row; on a tie the lower index, so
 * that picking is commutative and a butterfly gives every lane the same candidate. */
template <class T>
struct pg_arg {
    T value;
    long long index;
};

template <bool MAX, class T>
__device__ __forceinline__ pg_arg<T> pg_arg_pick(pg_arg<T> a, pg_arg<T> b)
{
    const bool better = MAX ? b.value > a.value : b.value < a.value;
    return better || (b.value == a.value && b.index < a.index) ? b : a;
}

template <class T>
__device__ __forceinline__ T pg_shfl_xor(T v, int m)
{
    return __shfl_xor_sync(0xffffffffu, v, m);
}

template <class T>
__device__ __forceinline__ pg_arg<T> pg_shfl_xor(pg_arg<T> v, int m)
{
    return pg_arg<T>{pg_shfl_xor(v.value, m), pg_shfl_xor(v.index, m)};
}

template <class T>
__device__ __forceinline__ T pg_shfl_idx(T v, int lane)
{
    return __shfl_sync(0xffffffffu, v, lane);
}

template <class T>
__device__ __forceinline__ pg_arg<T> pg_shfl_idx(pg_arg<T> v, int lane)
{
    return pg_arg<T>{pg_shfl_idx(v.value, lane), pg_shfl_idx(v.index, lane)};
}

/* The compute threads' barrier: __syncthreads where every thread of the block computes,
 * else named barrier BAR of their CNT (the producers are elsewhere). */
template <int BAR, int CNT>
__device__ __forceinline__ void pg_compute_barrier()
{
    if (BAR == 0)
        __syncthreads();
    else
        asm volatile("bar.sync %0, %1;\n" ::"n"(BAR), "n"(CNT) : "memory");
}

/* v[r] of a warp's lanes folded into every lane: xor butterflies, a fixed tree. */
template <int R, class T, class Op>
__device__ __forceinline__ void pg_warp_rows_reduce(T (&v)[R], Op op)
{
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int m = 16; m > 0; m >>= 1)
            v[r] = op(v[r], pg_shfl_xor(v[r], m));
}

/* v[r] of the CNT compute threads folded into every one of them, in a fixed tree (the same
 * bits on every run): xor butterflies in each warp, then the warps' results through red
 * (CNT / 32 * R values of shared memory, warp w's row r at w * R + r).
 * Where the R * W partials deal evenly to a warp's lanes with each lane's all of one row
 * (R divides 32, 32 divides R * W), lane l folds those of row l % R, the lanes of a row
 * fold by butterfly, and each row's total is shuffled from its lane: R * W / 32 shared
 * loads a thread. Otherwise every thread folds all R * W in warp order: for a packed
 * tile of 8 rows over 512 threads that is 128 shared loads and 120 folds a thread, where
 * its 8 rows of 1024 are 16 elements a thread. */
template <int R, int W, class T, class Op>
__device__ __forceinline__ void pg_rows_fold_partials(T (&v)[R], const T *red, int ctid, Op op)
{
    if constexpr (32 % R == 0 && (R * W) % 32 == 0) {
        const int lane = ctid & 31;
        T a = red[lane];
#pragma unroll
        for (int k = 1; k < R * W / 32; ++k)
            a = op(a, red[lane + 32 * k]);
#pragma unroll
        for (int m = R; m < 32; m <<= 1)
            a = op(a, pg_shfl_xor(a, m));
#pragma unroll
        for (int r = 0; r < R; ++r)
            v[r] = pg_shfl_idx(a, r);
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            T a = red[r];
            for (int w = 1; w < W; ++w)
                a = op(a, red[w * R + r]);
            v[r] = a;
        }
    }
}

template <int R, int CNT, int BAR, class T, class Op>
__device__ __forceinline__ void pg_rows_reduce(T (&v)[R], T *red, int ctid, Op op)
{
    pg_warp_rows_reduce(v, op);
    if ((ctid & 31) == 0)
#pragma unroll
        for (int r = 0; r < R; ++r)
            red[(ctid >> 5) * R + r] = v[r];
    pg_compute_barrier<BAR, CNT>();
    pg_rows_fold_partials<R, CNT / 32>(v, red, ctid, op);
    pg_compute_barrier<BAR, CNT>();
}

/* v[0] of the CNT compute threads folded within groups of G warps (warp w in group w / G,
 * a row each) into every thread of its group, in a fixed tree: xor butterflies in each
 * warp, then the group's G warp results through red (a value a warp): where G is a power
 * of two lane l reads its group's warp l % G and the lanes fold by butterfly, one shared
 * load a thread; otherwise each thread folds the G in warp order. */
template <int G, int CNT, int BAR, class T, class Op>
__device__ __forceinline__ void pg_group_rows_reduce(T (&v)[1], T *red, int ctid, Op op)
{
    pg_warp_rows_reduce(v, op);
    if ((ctid & 31) == 0)
        red[ctid >> 5] = v[0];
    pg_compute_barrier<BAR, CNT>();
    const T *group = red + (ctid >> 5) / G * G;
    if constexpr ((G & (G - 1)) == 0 && G <= 32) {
        T a = group[ctid & (G - 1)];
#pragma unroll
        for (int m = 1; m < G; m <<= 1)
            a = op(a, pg_shfl_xor(a, m));
        v[0] = a;
    } else {
        T a = group[0];
#pragma unroll
        for (int w = 1; w < G; ++w)
            a = op(a, group[w]);
        v[0] = a;
    }
    pg_compute_barrier<BAR, CNT>();
}

/* ---- deterministic block reduction: a fixed tree, the same bits every run ---- */
template <int NT, class T, class Op>
__device__ __forceinline__ T pg_block_reduce(T v, T *scratch, Op op)
{
    scratch[threadIdx.x] = v;
    __syncthreads();
    constexpr int P = NT <= 1 ? 1 : 1 << (32 - __builtin_clz(NT - 1)); /* pow2 >= NT */
#pragma unroll
    for (int w = P / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w && (int)threadIdx.x + w < NT)
            scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + w]);
        __syncthreads();
    }
    T r = scratch[0];
    __syncthreads();
    return r;
}
#endif /* __CUDACC__ */
#endif /* PIPERT_DEVICE_CUH */
