/* ---- pipegen device support (templates/pg_device.cuh, embedded in every generated .cu) ----
 * View types that index staged shared-memory copies with global coordinates (and plain
 * host arrays in the reference), the copy primitives each mechanism's IR operations print
 * as, and the deterministic block reduction used by accumulators. */
#ifndef PIPEGEN_DEVICE_SUPPORT
#define PIPEGEN_DEVICE_SUPPORT 1
#include <stdint.h>

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
    int64_t origin;
    __host__ __device__ T &operator[](int64_t i) const { return base[pg_local(i, origin)]; }
};

/* A rank-2 view: v[j][i] reads base[(j - o0) * pitch + (i - o1)]. */
template <class T> struct pg_row {
    T *row;
    int64_t origin;
    __host__ __device__ T &operator[](int64_t i) const { return row[i - origin]; }
};
template <class T> struct pg_view2 {
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
template <class T, int PITCH> struct pg_sview2 {
    T *base;
    int64_t origin0, origin1;
    __device__ pg_srow<T> operator[](int64_t j) const {
        return pg_srow<T>{base + pg_local(j, origin0) * PITCH, origin1};
    }
};
template <class T, int PITCH1, int PITCH0> struct pg_sview3 {
    T *base;
    int64_t origin0, origin1, origin2;
    __device__ pg_sview2<T, PITCH1> operator[](int64_t k) const {
        return pg_sview2<T, PITCH1>{base + pg_local(k, origin0) * PITCH0, origin1, origin2};
    }
};

/* A rank-3 view: v[k][j][i]. */
template <class T> struct pg_view3 {
    T *base;
    int64_t origin0, origin1, origin2, pitch0, pitch1;
    __host__ __device__ pg_view2<T> operator[](int64_t k) const {
        return pg_view2<T>{base + (k - origin0) * pitch0, origin1, origin2, pitch1};
    }
};

#ifdef __CUDACC__
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

/* ---- synchronous copies (mechanism `sync`, and the fallback for pointers aligned to
 * less than 4 bytes) ---- */
template <int VEC> struct pg_chunk;
template <> struct pg_chunk<16> { typedef int4 type; };
template <> struct pg_chunk<8>  { typedef int2 type; };
template <> struct pg_chunk<4>  { typedef int type; };
template <> struct pg_chunk<2>  { typedef short type; };
template <> struct pg_chunk<1>  { typedef char type; };

/* Copy `valid` bytes (0..VEC) of one chunk, zero-filling the rest of it. */
template <int VEC>
__device__ __forceinline__ void pg_copy_chunk_sync(unsigned char *dst, const unsigned char *src,
                                                   int valid)
{
    typedef typename pg_chunk<VEC>::type chunk_t;
    if (valid == VEC) {
        *reinterpret_cast<chunk_t *>(dst) = *reinterpret_cast<const chunk_t *>(src);
        return;
    }
    for (int b = 0; b < VEC; ++b)
        dst[b] = b < valid ? src[b] : (unsigned char)0;
}

/* ---- cp.async (sm_80+) ---- */
__device__ __forceinline__ unsigned pg_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* One cp.async of VEC bytes, `valid` of them read (src-size), the rest zero-filled.
 * CG selects .cg (16-byte copies only), PF the L2 prefetch size (0, 64, 128, 256), and
 * POLICY an L2 cache policy made by createpolicy (used when HINT). */
template <int VEC, bool CG, int PF, bool HINT>
__device__ __forceinline__ void pg_cp_async(unsigned char *dst, const unsigned char *src,
                                            int valid, uint64_t policy)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(VEC == 4 || VEC == 8 || VEC == 16, "cp.async copies 4, 8 or 16 bytes");
    static_assert(!CG || VEC == 16, "cp.async.cg copies 16 bytes only");
    const unsigned s = pg_smem_addr(dst);
#define PG_CP(LVL, PFX, HINTX, HARG)                                                        \
    asm volatile("cp.async." LVL ".shared.global" HINTX PFX " [%0], [%1], %2, %3" HARG ";\n" \
                 ::"r"(s), "l"(src), "n"(VEC), "r"(valid) HINT_OPERAND : "memory")
#define HINT_OPERAND , "l"(policy)
#define PG_CP_LVL(LVL)                                                                      \
    if (HINT) {                                                                             \
        if (PF == 64) PG_CP(LVL, ".L2::64B", ".L2::cache_hint", ", %4");                     \
        else if (PF == 128) PG_CP(LVL, ".L2::128B", ".L2::cache_hint", ", %4");              \
        else if (PF == 256) PG_CP(LVL, ".L2::256B", ".L2::cache_hint", ", %4");              \
        else PG_CP(LVL, "", ".L2::cache_hint", ", %4");                                      \
    } else {                                                                                \
        if (PF == 64) PG_CP(LVL, ".L2::64B", "", "");                                        \
        else if (PF == 128) PG_CP(LVL, ".L2::128B", "", "");                                 \
        else if (PF == 256) PG_CP(LVL, ".L2::256B", "", "");                                 \
        else PG_CP(LVL, "", "", "");                                                         \
    }
    if (CG) { PG_CP_LVL("cg") } else { PG_CP_LVL("ca") }
#undef PG_CP_LVL
#undef HINT_OPERAND
#undef PG_CP
#else
    (void)dst; (void)src; (void)valid; (void)policy;
#endif
}

__device__ __forceinline__ void pg_cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void pg_cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* One chunk through cp.async, or synchronously where the width is below cp.async's
 * smallest (4 bytes: pointers aligned to less, the documented fallback). */
template <int VEC, bool CG, int PF, bool HINT>
__device__ __forceinline__ void pg_copy_chunk_async(unsigned char *dst, const unsigned char *src,
                                                    int valid, uint64_t policy)
{
    if constexpr (VEC >= 4)
        pg_cp_async<VEC, CG && VEC == 16, PF, HINT>(dst, src, valid, policy);
    else
        pg_copy_chunk_sync<VEC>(dst, src, valid);
}

/* ---- mbarrier (sm_80+; try_wait on sm_90, test_wait before) ---- */
__device__ __forceinline__ void pg_mbar_init(uint64_t *bar, unsigned count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(pg_smem_addr(bar)), "r"(count)
                 : "memory");
#endif
}

/* Make barrier initialisation visible to the async proxy (sm_90: TMA completes on them). */
__device__ __forceinline__ void pg_fence_mbar_init()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void pg_mbar_arrive(uint64_t *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n"
                 ::"r"(pg_smem_addr(bar)) : "memory");
#endif
}

/* Arrive on the barrier when all of this thread's earlier cp.async copies complete; the
 * arrival is one of the barrier's expected count (.noinc). */
__device__ __forceinline__ void pg_cp_async_mbar_arrive(uint64_t *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(pg_smem_addr(bar))
                 : "memory");
#endif
}

__device__ __forceinline__ bool pg_mbar_test_parity(uint64_t *bar, unsigned parity)
{
    unsigned done = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done)
                 : "r"(pg_smem_addr(bar)), "r"(parity) : "memory");
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done)
                 : "r"(pg_smem_addr(bar)), "r"(parity) : "memory");
#endif
    return done != 0;
}

/* Wait until the barrier completed the phase of the given parity. With WATCHDOG (a cycle
 * bound, 0 for none) a wait that outlasts it traps with a message naming the pipeline,
 * the barrier, its slot and the phase, instead of hanging. */
template <long long WATCHDOG>
__device__ __forceinline__ void pg_mbar_wait(uint64_t *bar, unsigned parity, const char *what,
                                             int slot, long long use)
{
    if constexpr (WATCHDOG > 0) {
        const long long start = clock64();
        while (!pg_mbar_test_parity(bar, parity)) {
            if (clock64() - start > WATCHDOG) {
                printf("pipegen watchdog: %s: block %d thread %d waited %lld cycles on slot %d "
                       "for use %lld (parity %u)\n", what, (int)blockIdx.x, (int)threadIdx.x,
                       WATCHDOG, slot, use, parity);
                __trap();
            }
        }
    } else {
        (void)what; (void)slot; (void)use;
        while (!pg_mbar_test_parity(bar, parity)) {
        }
    }
}

/* A barrier of `count` threads of one role (named barrier 1; 0 is __syncthreads). */
template <int COUNT>
__device__ __forceinline__ void pg_role_barrier()
{
    asm volatile("bar.sync 1, %0;\n" ::"n"(COUNT) : "memory");
}

/* An L2 cache policy for cp.async's cache_hint (EVICT: 1 normal, 2 first, 3 last,
 * 4 unchanged). */
template <int EVICT>
__device__ __forceinline__ uint64_t pg_l2_policy()
{
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (EVICT == 1) asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
    if (EVICT == 2) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    if (EVICT == 3) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    if (EVICT == 4) asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
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

template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, class Copy>
__device__ __forceinline__ void pg_region(unsigned char *dst, const unsigned char *base,
                                          int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                          int64_t n1, int64_t n2b, int tid, Copy copy)
{
    static_assert(ROWBYTES % VEC == 0, "region rows must be a multiple of the copy width");
    static_assert(PITCH % VEC == 0, "shared rows must keep the copy width's alignment");
    constexpr int CPR = (int)(ROWBYTES / VEC), ROWS = P * R;
    if constexpr (NT % CPR == 0) {
        /* Each thread keeps one column and walks the rows: no division per chunk. */
        const int col = tid % CPR;
        const int64_t gb = o2b + (int64_t)col * VEC;
        const int cvalid = pg_valid<VEC>(gb, n2b);
#pragma unroll
        for (int row = tid / CPR; row < ROWS; row += NT / CPR) {
            int64_t g0, g1;
            const int valid = pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1) ? cvalid : 0;
            copy(dst + row * PITCH + col * VEC,
                 valid ? base + (g0 * n1 + g1) * n2b + gb : base, valid);
        }
    } else {
        /* The chunk's row and column advance by constant steps: no division per chunk. */
        int row = tid / CPR, col = tid % CPR;
#pragma unroll 4
        for (int c = tid; c < ROWS * CPR; c += NT) {
            const int64_t gb = o2b + (int64_t)col * VEC;
            int64_t g0, g1;
            const int valid = pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1) ? pg_valid<VEC>(gb, n2b) : 0;
            copy(dst + row * PITCH + col * VEC, valid ? base + (g0 * n1 + g1) * n2b + gb : base,
                 valid);
            col += NT % CPR;
            row += NT / CPR + (col >= CPR);
            col -= col >= CPR ? CPR : 0;
        }
    }
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
#endif /* PIPEGEN_DEVICE_SUPPORT */
