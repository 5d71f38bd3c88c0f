/* pipert_tensor.cuh: tensor copies (cp.async.bulk.tensor, TMA with a CUtensorMap) of staged
 * regions, completing on an mbarrier by transaction bytes, and the launcher's encoding of
 * the maps (lowering tensor, sm_90 and newer).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 * <cuda.h> gives the types only (CUtensorMap, the encoder's signature): the encoder is
 * found through the runtime (cudaGetDriverEntryPointByVersion), so nothing links -lcuda.
 */
#ifndef PIPERT_TENSOR_CUH
#define PIPERT_TENSOR_CUH
#include <cuda.h>
#include <cudaTypedefs.h>
#include <string.h>
#include "pipert_bulk.cuh"

/* The driver's encoder, looked up once per process (a driver call, on every launch
 * otherwise; a local static is initialised once, thread-safely); NULL where the driver
 * has none. */
static inline PFN_cuTensorMapEncodeTiled_v12000 pipert_tensor_encoder(void)
{
    static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn,
                                                           12000, cudaEnableDefault, &found);
        return err == cudaSuccess && found == cudaDriverEntryPointSuccess
                   ? (PFN_cuTensorMapEncodeTiled_v12000)fn
                   : (PFN_cuTensorMapEncodeTiled_v12000)NULL;
    }();
    return encoder;
}

/* What a map is encoded from: a launch of the same arrays and sizes gets the same map. */
struct pipert_tensor_map_key {
    const void *base;
    uint64_t dim[3];
    uint32_t box[3];
    int rank, elem_bytes, swizzle, l2_promotion;
};

/* The maps this thread encoded last, by key (a small ring: a launcher encodes one per
 * staged array, and a program launches a few pipelines over the same arrays in turn). A
 * local static of a static inline function: one cache per generated source and thread. */
static inline CUtensorMap *pipert_tensor_map_cached(const pipert_tensor_map_key *key, bool put)
{
    enum { ENTRIES = 8 };
    static thread_local struct {
        pipert_tensor_map_key key;
        CUtensorMap map;
        bool valid;
    } cache[ENTRIES];
    static thread_local unsigned next;
    for (int i = 0; i < ENTRIES && !put; ++i)
        if (cache[i].valid && memcmp(&cache[i].key, key, sizeof *key) == 0)
            return &cache[i].map;
    if (!put)
        return NULL;
    unsigned i = next++ % ENTRIES;
    cache[i].key = *key;
    cache[i].valid = true;
    return &cache[i].map;
}

/* The map of a staged input over its whole array: rank 1 to 3, dimensions `dim` and box
 * `box` fastest first, elements of elem_bytes (1, 2, 4 or 8: copied as unsigned integers
 * of that size), swizzled by a span of `swizzle` bytes (0: none; 32, 64 or 128, the box's
 * rows that many bytes), out-of-bounds elements zero-filled, each L2 miss of its loads
 * filling l2_promotion bytes (0: the sectors asked for; 64, 128 or 256). With use 0 (the
 * launch's copy width is under 16 bytes: the kernel copies without the map) or an empty
 * dimension (no copy reads the array) the map is zeroed. Host-only and capture-safe:
 * nothing is allocated or enqueued. cudaErrorInvalidValue where the array cannot be mapped
 * (a dimension past 2^31 - 1 elements: box coordinates are 32-bit), cudaErrorNotSupported
 * where the driver has no encoder. */
static inline cudaError_t pipert_encode_tensor_map(CUtensorMap *map, const void *base, int rank,
                                                   const uint64_t *dim, const uint32_t *box,
                                                   int elem_bytes, int use, int swizzle = 0,
                                                   int l2_promotion = 128)
{
    const CUtensorMapDataType type = elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                      : elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                      : elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                        : CU_TENSOR_MAP_DATA_TYPE_UINT64;
    cuuint64_t dims[3], strides[2];
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    uint64_t pitch = (uint64_t)elem_bytes;
    memset(map, 0, sizeof *map);
    for (int d = 0; d < rank; ++d) {
        if (dim[d] == 0)
            return cudaSuccess;
        if (dim[d] > 0x7fffffffu)
            return cudaErrorInvalidValue;
        dims[d] = dim[d];
        if (d > 0)
            strides[d - 1] = pitch;
        pitch *= dim[d];
    }
    if (!use)
        return cudaSuccess;
    pipert_tensor_map_key key;
    memset(&key, 0, sizeof key);   /* the padding too: keys compare by memcmp */
    key.base = base;
    memcpy(key.dim, dim, sizeof *dim * (size_t)rank);
    memcpy(key.box, box, sizeof *box * (size_t)rank);
    key.rank = rank;
    key.elem_bytes = elem_bytes;
    key.swizzle = swizzle;
    key.l2_promotion = l2_promotion;
    if (const CUtensorMap *hit = pipert_tensor_map_cached(&key, false)) {
        *map = *hit;
        return cudaSuccess;
    }
    const PFN_cuTensorMapEncodeTiled_v12000 encode = pipert_tensor_encoder();
    if (!encode)
        return cudaErrorNotSupported;
    const CUtensorMapSwizzle swz = swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                   : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                   : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                   : CU_TENSOR_MAP_SWIZZLE_NONE;
    const CUtensorMapL2promotion promotion =
        l2_promotion == 256  ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
        : l2_promotion == 64 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
        : l2_promotion == 0  ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                             : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    CUresult r = encode(
        map, type, (cuuint32_t)rank, (void *)base, dims, strides, box,
        elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swz,
        promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    *pipert_tensor_map_cached(&key, true) = *map;
    return cudaSuccess;
}

#ifdef __CUDACC__
/* The planned box of a stage's map: the array's rank, its element size, the box's
 * extents B0 (planes), B1 (rows), B2 (elements of a row), and the map's swizzle span SW
 * (bytes; 0 none); the box tiles the region. MC > 1: the region is multicast to the MC
 * blocks of the cluster, block r copying share r of its slowest dimension (planes of rank
 * 3, rows of rank 2) into every block. */
template <int RANK, int ES, int B0, int B1, int B2, int SW = 0, int MC = 1> struct pg_tbox {};

/* The PTX of one box copy of RANK dimensions, coordinates {%3[, %4[, %5]]} fastest first,
 * multicast (MC_SFX, MC_OP) to the blocks of mask %7, with the L2 policy %6 (HINT_SFX,
 * HINT_OP); PG_TENSOR_COPIES picks the rank's and the hint's. */
#define PG_TENSOR_COPY(DIM, COORDS, MC_SFX, MC_OP, HINT_SFX, HINT_OP)                         \
    asm volatile("cp.async.bulk.tensor." DIM ".shared::cluster.global.mbarrier::complete_tx"  \
                 "::bytes" MC_SFX HINT_SFX " [%0], [%1, " COORDS "], [%2]" MC_OP HINT_OP      \
                 ";\n" ::"r"(pg_smem_addr(dst)), "l"((uint64_t)map), "r"(pg_smem_addr(bar)),  \
                 "r"(c2), "r"(c1), "r"(c0), "l"(l2.policy), "h"(mask) : "memory")
#define PG_TENSOR_COPIES(MC_SFX, MC_OP)                                                       \
    if constexpr (HINT && RANK == 1)                                                          \
        PG_TENSOR_COPY("1d", "{%3}", MC_SFX, MC_OP, ".L2::cache_hint", ", %6");               \
    else if constexpr (HINT && RANK == 2)                                                     \
        PG_TENSOR_COPY("2d", "{%3, %4}", MC_SFX, MC_OP, ".L2::cache_hint", ", %6");           \
    else if constexpr (HINT)                                                                  \
        PG_TENSOR_COPY("3d", "{%3, %4, %5}", MC_SFX, MC_OP, ".L2::cache_hint", ", %6");       \
    else if constexpr (RANK == 1)                                                             \
        PG_TENSOR_COPY("1d", "{%3}", MC_SFX, MC_OP, "", "");                                  \
    else if constexpr (RANK == 2)                                                             \
        PG_TENSOR_COPY("2d", "{%3, %4}", MC_SFX, MC_OP, "", "");                              \
    else                                                                                      \
        PG_TENSOR_COPY("3d", "{%3, %4, %5}", MC_SFX, MC_OP, "", "")

/* One box at coordinates (c0, c1, c2) (plane, row, element; those beyond RANK unused) into
 * dst (128-byte aligned), its bytes, all of the box's, completing a transaction of the
 * barrier's phase; the part of the box outside the array is zero-filled. With MC, into the
 * same place of every block of the cluster in mask, completing on each one's barrier at
 * bar's address. */
template <int RANK, bool HINT, bool MC = false>
__device__ __forceinline__ void pg_tensor_copy(unsigned char *dst, const CUtensorMap *map,
                                               int c0, int c1, int c2, uint64_t *bar,
                                               pg_l2_hint<HINT> l2, unsigned short mask = 0)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (MC) {
        PG_TENSOR_COPIES(".multicast::cluster", ", %7");
    } else {
        PG_TENSOR_COPIES("", "");
    }
#endif
}
#undef PG_TENSOR_COPIES
#undef PG_TENSOR_COPY

/* The boxes (B0 planes, B1 rows, B2 elements of ES bytes) that tile a region of P planes of
 * R rows of ROWBYTES, PITCH apart, dealt to NT threads: f(at, p, r, c) for each box of
 * thread tid, at its byte offset in the slot, p and r its first plane and row, c its first
 * byte in the row. Swizzled by a span of SW bytes, column block c / SW holds every row's
 * bytes [c, c + SW) back to back. With MC > 1 only share `share` of MC, the boxes of that
 * share of the slowest dimension (consecutive in this order), dealt from thread 0 on. */
template <int P, int R, long long ROWBYTES, long long PITCH, int NT, int ES, int B0, int B1,
          int B2, int SW, int MC = 1, class F>
__device__ __forceinline__ void pg_tensor_boxes(int tid, F f, unsigned share = 0)
{
    constexpr int NC = (int)(ROWBYTES / (B2 * ES)), NR = R / B1, NB = P / B0 * NR * NC;
    constexpr int NS = NB / MC;
    /* One box per share (gemm's operands): thread 0's, with no loop around it (a loop of
     * the same single trip cost gemm_bf16 over 10% of its speed). */
    const int first = NS == 1 ? (tid == 0 ? 0 : NS) : tid;
    for (int i = first; i < NS; i += NT) {
        const int b = (int)share * NS + i;
        const int p = b / (NR * NC) * B0, r = b / NC % NR * B1;
        const long long c = (long long)(b % NC) * B2 * ES;
        f(SW ? c / SW * P * R * SW + (p * R + r) * SW : (p * R + r) * PITCH + c, p, r, c);
    }
}

/* ---- A staged region through tensor copies: with 16-byte copies (VEC, the launch's copy
 * width: every staged pointer and row pitch 16-byte aligned, as the map needs) the boxes
 * that tile the region as copied, dealt to the copying threads in turn (box b by thread
 * b % NT; thread 0 arms the barrier for all of them, and one landing before that takes
 * the tx-count below zero until it) (P planes of R rows of ROWBYTES, rows back to back in shared memory where a box
 * spans several: PITCH == ROWBYTES). The box's origin may lie outside the array (a halo,
 * a tail tile): the hardware zero-fills that part and counts it in the transaction.
 * Below 16 bytes the map is not encoded: every thread stores the region with ordinary
 * loads and stores, as bulk does, and the barrier expects no bytes. ---- */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, int RANK, int ES,
          int B0, int B1, int B2, int SW, int MC, bool HINT>
__device__ __forceinline__ void pg_tensor_region(unsigned char *dst, const unsigned char *base,
                                                 int64_t o0, int64_t o1, int64_t o2b,
                                                 int64_t n0, int64_t n1, int64_t n2b, int tid,
                                                 const CUtensorMap *map,
                                                 pg_tbox<RANK, ES, B0, B1, B2, SW, MC>,
                                                 uint64_t *bar, pg_l2_hint<HINT> l2)
{
    if constexpr (VEC == 16) {
        static_assert(P % B0 == 0 && R % B1 == 0 && ROWBYTES % (B2 * ES) == 0,
                      "pipert: the boxes tile the region");
        static_assert(SW ? B2 * ES == SW && PITCH == ROWBYTES && (B0 == 1 || B1 == R)
                         : (B0 == 1 && B1 == 1) || (PITCH == ROWBYTES && B2 * ES == ROWBYTES),
                      "pipert: a box of several rows spans whole rows (of its column block "
                      "where swizzled), stored back to back");
        static_assert(MC == 1 || (RANK == 3 ? P % (MC * B0) == 0 : P == 1 && R % (MC * B1) == 0),
                      "pipert: a multicast region's shares are whole boxes");
        if constexpr (MC == 1)
            pg_tensor_boxes<P, R, ROWBYTES, PITCH, NT, ES, B0, B1, B2, SW>(
                tid, [&](long long at, int p, int r, long long c) {
                    pg_tensor_copy<RANK>(dst + at, map, (int)(o0 + p), (int)(o1 + r),
                                         (int)((o2b + c) / ES), bar, l2);
                });
        else
            pg_tensor_boxes<P, R, ROWBYTES, PITCH, NT, ES, B0, B1, B2, SW, MC>(
                tid, [&](long long at, int p, int r, long long c) {
                    pg_tensor_copy<RANK, HINT, true>(dst + at, map, (int)(o0 + p), (int)(o1 + r),
                                                     (int)((o2b + c) / ES), bar, l2,
                                                     (unsigned short)((1u << MC) - 1));
                }, pg_cluster_rank());
    } else {
        (void)map;
        pg_bulk_region<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid,
                                                      bar, l2);
    }
}

/* The PTX of one box store of RANK dimensions, coordinates {%2[, %3[, %4]]} fastest first. */
#define PG_TENSOR_STORE(DIM, COORDS)                                                         \
    asm volatile("cp.async.bulk.tensor." DIM ".global.shared::cta.bulk_group [%0, " COORDS  \
                 "], [%1];\n" ::"l"((uint64_t)map), "r"(pg_smem_addr(src)), "r"(c2), "r"(c1),  \
                 "r"(c0) : "memory")

/* One box from src (128-byte aligned) to coordinates (c0, c1, c2) (plane, row, element),
 * in the thread's bulk group: the copy engine writes the part inside the array only. */
template <int RANK>
__device__ __forceinline__ void pg_tensor_store(const CUtensorMap *map, const unsigned char *src,
                                                int c0, int c1, int c2)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (RANK == 1)
        PG_TENSOR_STORE("1d", "{%2}");
    else if constexpr (RANK == 2)
        PG_TENSOR_STORE("2d", "{%2, %3}");
    else
        PG_TENSOR_STORE("3d", "{%2, %3, %4}");
#endif
}
#undef PG_TENSOR_STORE

/* ---- A staged output back through tensor stores (the region's rows back to back, PITCH
 * == ROWBYTES): with 16-byte copies the boxes that tile it, dealt to the threads as the
 * copies' are, each in its thread's bulk group (the caller commits and waits for the
 * reads); tail tiles need nothing more, the engine writing inside the array only. Below
 * 16 bytes the map is not encoded: ordinary stores, as pg_store_region. ---- */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT, int RANK, int ES,
          int B0, int B1, int B2>
__device__ __forceinline__ void pg_tensor_store_region(unsigned char *base,
                                                       const unsigned char *src, int64_t o0,
                                                       int64_t o1, int64_t o2b, int64_t n0,
                                                       int64_t n1, int64_t n2b, int tid,
                                                       const CUtensorMap *map,
                                                       pg_tbox<RANK, ES, B0, B1, B2>)
{
    if constexpr (VEC == 16) {
        static_assert(P % B0 == 0 && R % B1 == 0 && ROWBYTES % (B2 * ES) == 0
                          && ((B0 == 1 && B1 == 1) || (PITCH == ROWBYTES && B2 * ES == ROWBYTES)),
                      "pipert: the boxes tile the region, whole rows back to back");
        pg_tensor_boxes<P, R, ROWBYTES, PITCH, NT, ES, B0, B1, B2, 0>(
            tid, [&](long long at, int p, int r, long long c) {
                pg_tensor_store<RANK>(map, src + at, (int)(o0 + p), (int)(o1 + r),
                                      (int)((o2b + c) / ES));
            });
    } else {
        (void)map;
        pg_store_region<VEC, P, R, ROWBYTES, PITCH, NT>(base, src, o0, o1, o2b, n0, n1, n2b, tid);
    }
}

/* Add to tx the bytes pg_tensor_region's boxes deliver for the same region: all of it, the
 * zero-filled part outside the array included, or nothing below 16-byte copies. A
 * constant: pipegen now prints it as a number (VEC == 16 ? bytes : 0); kept for the
 * sources of this ABI that call it. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_tensor_bytes(const unsigned char *, const unsigned char *,
                                                int64_t, int64_t, int64_t, int64_t, int64_t,
                                                int64_t, int, int64_t &tx)
{
    if constexpr (VEC == 16)
        tx += (int64_t)P * R * ROWBYTES;
}
#endif /* __CUDACC__ */
#endif /* PIPERT_TENSOR_CUH */
