// Step 13: segmented sums. Many sums at once, fast for every segment length.
//
// What it shows: one array of n floats cut into S segments by 64-bit CSR offsets, summed into S
// outputs. Lengths range from 0 to the whole array, so no single shape of work fits: a block per
// segment (the classic library shape) idles on segments of 10 floats and streams a segment
// of 10^8 floats through one SM. Here the array is cut into tiles of kTile floats, one block each, and
// every segment is summed by whoever fits its length:
//   len <= kThreadMax (32)   a thread, when the other segments of its batch of 32 consecutive ones are
//                            that short too: the warp copies the batch (at most 1024 floats, contiguous)
//                            into shared memory with asynchronous copies (cp.async, 16 bytes each, all
//                            in flight at once), then each lane adds its own segment serially from there;
//   len <= kWarpMax (2048)   a warp (so is a short segment in a batch with a longer one): float4 loads,
//                            eight in flight, then a shuffle tree (step 06's warp sum);
//   len <= kTile             the block of the tile where the segment begins, the same way with 256 threads;
//   len >  kTile             several blocks: every tile the segment touches adds its part (the segment's
//                            first tile into its tile's first slot, any other into its tile's second)
//                            and counts it in (a count per long segment in the scratch); the
//                            last of them to count in adds all the parts in an order fixed by the
//                            segment: a warp, or the whole block for a segment of more than 256 parts
//                            (kWarpParts). No float atomics (an integer count only): the same bits
//                            every run.
// Which segments a tile owns needs no classification pass: a warp-wide 32-ary search of the offsets
// finds the first segment that begins in each tile, in a first, small kernel for all tiles at once
// where the segments outnumber the tiles, else in each block at its start (step13::Search); where they are
// at most 2048, the block loads every offset at once and counts, one round instead of two or three.
// Block t then walks its batches of 32 segments: warp w takes batches w, w + 8, ..., sums each batch of
// tiny segments itself and lists the others, which all warps then share. Before anything else it asks
// L2 for its tile's first 16 KB (prefetch), so that DRAM is busy while the block finds its segments.
// On sm_90 the summing kernel is launched early behind the search kernel (programmatic dependent
// launch): its blocks take the SMs the search leaves free and wait there for its results, so that no
// SM idles through the gap between the two launches.
// The bounds keep every segment's longest chain of additions under the suite's tolerance rule
// (2 sqrt(len) + 64): a thread adds at most 32 floats in a row, a warp's lane at most 64 + 5, a block's
// thread at most 128 + 8, and the long path 128 + 8 per tile plus, across tiles, 3 + 1 + 5 in a warp (a
// lane's 8 parts as a tree of depth 3, one round, the shuffle tree) or at most 3 + len / kTile / 2048 + 2
// + 8 in the block (one add per round of 2048 parts, at most len / kTile + 2 parts, the block's tree):
// 149 + len / 2^26 in all, under 2 sqrt(len) + 64 for every len from kTile to 2^51.
// The fixed-size mode (--segment-size L) reads no offsets: the same kernels with offsets[s] = s L
// computed instead of loaded (each block searches its own tile there, in arithmetic); and where L is
// a multiple of 4 up to 32 on 16-byte aligned input, sum_short_fixed: groups of L / 4 lanes a segment
// where L / 4 is a power of two, else a thread a segment, every 16-byte load in flight before the
// first add (no search, no staging, no ballot).
// What changed from the library step: everything; 11_cub's cub::DeviceReduce::Sum sums one array, and
// cub::DeviceSegmentedReduce::Sum (timed beside this launcher in every run) is the bar.
// Usage: ./13_segmented [--segments powerlaw | --offsets FILE | --segment-size L] [--search auto] [--n 2^28] [--help]
#include <cuda_pipeline.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <cstdint>

#include "agent.cuh"
#include "segmented.cuh"

namespace step13 {
namespace {

constexpr int kBlock = 256;  // threads per block of both kernels
constexpr int kWarps = kBlock / 32;
constexpr int kLoadsInFlight = 8;  // float4 loads a thread issues before its first add
constexpr int kPrefetch = 4096;    // floats of a tile asked of L2 at the block's start (16 KB)
// sum_tiles' blocks per SM that its launch bounds aim at: 4, so up to 64 registers each (64K per SM),
// room for eight float4 loads in flight and the thread tier's 16-byte copies with no spills. Bytes in
// flight beat blocks here: 6 blocks of 40 registers with four loads each, and 5 of 48, streamed
// slower (docs/method.md, "What was tried and dropped"). Every GPU since sm_75 holds 4 blocks of
// 256 threads.
constexpr int kTileBlocksPerSm = 4;
constexpr int kMaxBlockSegments = kTile / kWarpMax;  // block-tier segments that can begin in one tile
// Batches with a segment longer than kThreadMax that can begin in one tile: such segments begin at
// least kThreadMax + 1 floats apart (the segments between them are empty or shorter).
constexpr int kMaxMixedBatches = static_cast<int>((kTile + kThreadMax) / (kThreadMax + 1));
constexpr unsigned kFullMask = reduce::agent::kFullMask;

// Programmatic dependent launch (sm_90): a kernel launched with the stream serialization attribute may
// start once every block of the kernel before it has called allow_dependents(); it calls
// wait_for_prerequisite() before it touches what that kernel writes. No-ops before sm_90.
__device__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ void wait_for_prerequisite() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Floats of a warp's staging buffer: a batch of 32 tiny segments (at most 32 x 32 floats), placed so
// that its 16-byte vectors land on 16-byte boundaries, with up to 3 floats before them and 3 after.
constexpr int kStaged = kThreadMax * 32 + 8;
// An sm_90 SM has 228 KB of shared memory and keeps 1 KB of it per block.
static_assert((kStaged * kWarps * sizeof(float) + kMaxMixedBatches * sizeof(unsigned) + 1024) * kTileBlocksPerSm <=
                  228 * 1024,
              "the staging buffers and the batch list leave room for kTileBlocksPerSm blocks to an sm_90 SM");

// The warp's and the block's sums (common/agent.cuh): in lane 0, in thread 0. Block calls must be
// separated by __syncthreads().
__device__ float warp_sum(float v) { return reduce::agent::warp_reduce(v, reduce::agent::Plus{}); }
__device__ float block_sum(float v) { return reduce::agent::block_reduce<kBlock>(v, reduce::agent::Plus{}, 0.0f); }

// Where the segments are: offsets[s] read from the 64-bit array, or s L computed (the fixed-size mode).
struct OffsetArray {
  static constexpr bool kSearchFirst = true;  // loaded: the tiles' searches may be a kernel of their own
  const std::int64_t* p;
  __device__ std::int64_t operator[](std::int64_t s) const { return p[s]; }
};
struct FixedOffsets {
  static constexpr bool kSearchFirst = false;  // arithmetic: each block searches its own tile
  std::int64_t length;
  __device__ std::int64_t operator[](std::int64_t s) const { return s * length; }
};

// The share of in[a..b) of thread `rank` of `Threads` cooperating threads: the floats before the
// first 16-byte boundary and after the last one, one each, the body as float4s, kLoadsInFlight loads
// issued before the first add. Which thread adds what depends only on (a, b): deterministic.
// The body is read with __ldcs (ld.global.cs, "cache streaming": L1 and L2 evict its lines first),
// since every float is read once and need not push out what is read again (the offsets). Plain
// loads streamed slower on most rows of mid and long segments (docs/method.md).
template <int Threads>
__device__ float range_share(const float* in, std::int64_t a, std::int64_t b, int rank) {
  const std::int64_t len = b - a;
  const auto misalignment = reinterpret_cast<std::uintptr_t>(in + a) % 16;
  const std::int64_t unaligned = misalignment ? (16 - misalignment) / 4 : 0;
  const std::int64_t head = len < unaligned ? len : unaligned;
  const float4* body = reinterpret_cast<const float4*>(in + a + head);
  const std::int64_t vectors = (len - head) / 4;
  const std::int64_t tail = head + 4 * vectors;

  float sum = 0.0f;
  if (rank < head) sum += in[a + rank];
  if (rank < len - tail) sum += in[a + tail + rank];
  for (std::int64_t base = 0; base < vectors; base += std::int64_t{Threads} * kLoadsInFlight) {
    float4 x[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      const std::int64_t v = base + k * Threads + rank;
      x[k] = v < vectors ? __ldcs(body + v) : float4{0.0f, 0.0f, 0.0f, 0.0f};
    }
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  }
  return sum;
}

// The first index s in [lo, hi) with offsets[s] >= x (hi when none), found by one warp: each round the
// 32 lanes probe 32 evenly spaced offsets and the ballot narrows the range 32-fold, so S = 2^24
// segments take five dependent loads instead of 24.
template <typename Offsets>
__device__ std::int64_t warp_lower_bound(const Offsets& offsets, std::int64_t lo, std::int64_t hi, std::int64_t x) {
  const unsigned lane = threadIdx.x % 32;
  while (hi - lo > 32) {
    const std::int64_t step = (hi - lo + 31) / 32;
    const std::int64_t p = lo + lane * step;
    const unsigned below = __ballot_sync(kFullMask, p < hi && offsets[p] < x);  // a prefix of the lanes
    const int c = __popc(below);
    const std::int64_t new_hi = lo + c * step;
    if (c > 0) lo = lo + (c - 1) * step + 1;
    if (new_hi < hi) hi = new_hi;
  }
  const std::int64_t p = lo + lane;
  return lo + __popc(__ballot_sync(kFullMask, p < hi && offsets[p] < x));
}

// Where the offsets are few (segments <= kBlockProbes), the block finds both of its tile's bounds in one
// round instead of a warp's two or three: every thread loads its kProbes offsets, offsets[j] for
// j = threadIdx.x + k kBlock (each load a warp's 32 consecutive ones), all in flight at once, and each
// warp counts with ballots how many of them are below x0 and below x1. The offsets are non-decreasing,
// so the counts, summed over the warps, are the two lower bounds (block_bound, after a barrier).
constexpr int kProbes = static_cast<int>(kBlockProbes / kBlock);  // 8
static_assert(kBlockProbes % kBlock == 0, "the block probes a whole number of offsets per thread");
template <typename Offsets>
__device__ void count_below(const Offsets& offsets, std::int64_t segments, std::int64_t x0, std::int64_t x1,
                            int (*below)[kWarps]) {
  std::int64_t v[kProbes];
#pragma unroll
  for (int k = 0; k < kProbes; ++k) {
    const std::int64_t j = threadIdx.x + std::int64_t{k} * kBlock;
    v[k] = j < segments ? offsets[j] : INT64_MAX;
  }
  int c0 = 0, c1 = 0;
#pragma unroll
  for (int k = 0; k < kProbes; ++k) {
    c0 += __popc(__ballot_sync(kFullMask, v[k] < x0));
    c1 += __popc(__ballot_sync(kFullMask, v[k] < x1));
  }
  if (threadIdx.x % 32 == 0) {
    below[0][threadIdx.x / 32] = c0;
    below[1][threadIdx.x / 32] = c1;
  }
}
__device__ std::int64_t block_bound(const int* below) {
  std::int64_t sum = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) sum += below[w];
  return sum;
}

// The scratch of the tiled kernels: one record per tile, and one more for tile[tiles].first.
// Invariant: tile t's count lies at the same bytes for every n (24 t + 16), and no other field ever
// lies there, so only count_in writes it, and count_in leaves it at 0: every launch finds its counts
// at 0 on a scratch that was zero-filled once, whatever n the launches before it had. A launch leaves
// its tiles' `first` and `part` behind, which it writes before it reads them; with the counts after
// them, at a place that moved with n, a later launch's counts started on those leftovers.
struct alignas(8) TileRecord {
  std::int64_t first;  // kernel 0's answer: the first segment that begins at or after the tile's first float
  float part[2];       // a long segment's part in this tile: [0] the one that begins here, [1] the one from before
  unsigned count;      // the parts counted in of the long segment that begins here (count_in)
};
static_assert(sizeof(TileRecord) == 24, "scratch_bytes() counts 24 bytes a tile");

// Kernel 0, one warp per tile boundary: tile[t].first = the first segment that begins at or after
// float tC (C = kTile) for t = 0 .. tiles - 1, and tile[tiles].first = segments (the last tile also owns
// the empty segments that begin at n). All the tiles' searches run at once, so the summing kernel
// starts every tile with two loads instead of two chains of dependent ones. Run where the segments
// outnumber the tiles (step13::Search); never for the fixed-size mode, whose offsets are arithmetic.
template <typename Offsets>
__global__ void __launch_bounds__(kBlock)
    find_tile_starts(Offsets offsets, std::int64_t segments, std::int64_t tiles, TileRecord* tile) {
  allow_dependents();  // sum_tiles' blocks may start (and prefetch) while these search
  const std::int64_t t = std::int64_t{blockIdx.x} * kWarps + threadIdx.x / 32;  // the same in every lane
  if (t > tiles) return;
  const std::int64_t s = t == tiles ? segments : warp_lower_bound(offsets, 0, segments, t * kTile);
  if (threadIdx.x % 32 == 0) tile[t].first = s;
}

// The begin and end offsets of a batch's segments, lane l holding segment first + 32 b + l's (0 and 0
// past `last`, and for a batch b past the tile's).
struct Batch {
  std::int64_t begin = 0, end = 0;
};
template <typename Offsets>
__device__ Batch load_batch(const Offsets& offsets, std::int64_t first, std::int64_t last, std::int64_t b,
                            std::int64_t batches) {
  const std::int64_t my = first + 32 * b + threadIdx.x % 32;
  Batch x;
  if (b < batches && my < last) x = {offsets[my], offsets[my + 1]};
  return x;
}

// The share of the parts of one long segment, beginning in tile t and touching `parts` tiles, of
// thread `rank` of `Threads` cooperating threads: part 0 is tile[t].part[0] (the tile where the
// segment begins), part j > 0 is tile[t + j].part[1]. Rounds of Threads * kPartLoads parts; in each, the thread
// issues its kPartLoads loads (parts base + k Threads + rank) before its first add, adds them as a tree
// of depth 3 and that into its sum. Which thread adds which part depends only on (t, parts).
constexpr int kPartLoads = 8;
template <int Threads>
__device__ float parts_share(const TileRecord* tile, std::int64_t t, std::int64_t parts, int rank) {
  static_assert(kPartLoads == 8, "the tree below adds 8 parts");
  float sum = 0.0f;
#pragma unroll 1
  for (std::int64_t base = 0; base < parts; base += std::int64_t{Threads} * kPartLoads) {
    float x[kPartLoads];
#pragma unroll
    for (int k = 0; k < kPartLoads; ++k) {
      const std::int64_t j = base + k * Threads + rank;
      x[k] = j < parts ? __ldcg(&tile[t + j].part[j > 0 ? 1 : 0]) : 0.0f;  // L2: other SMs wrote them
    }
    sum += ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
  }
  return sum;
}

// A warp sums the parts of a segment that touches at most this many tiles: one round of its lanes'
// kPartLoads loads. A longer segment goes to the block, whose rounds take 8 times as many parts.
constexpr std::int64_t kWarpParts = 32 * kPartLoads;

// Tile t's part of segment s (written by thread 0 into tile[t].part) counted in, by the whole block:
// tile[ts].count counts the parts of the segment that begins in tile ts and touches `parts` tiles, and
// the block whose count is the last adds them all into out[s] (parts_share's order, fixed by ts and
// parts: the same bits whichever block is last) and sets the count back to 0 for the next launch.
// Its __syncthreads_or separates the block sum before it from any after it.
__device__ void count_in(float* out, std::int64_t s, TileRecord* tile, std::int64_t ts, std::int64_t parts) {
  bool last = false;
  if (threadIdx.x == 0) {
    __threadfence();  // the part, visible to every SM before the count that says it is there
    last = atomicAdd(&tile[ts].count, 1u) == parts - 1;
  }
  if (!__syncthreads_or(last)) return;
  __threadfence();  // the other tiles' parts, read after the count that saw them all
  if (parts <= kWarpParts) {
    if (threadIdx.x < 32) {
      const float sum = warp_sum(parts_share<32>(tile, ts, parts, static_cast<int>(threadIdx.x)));
      if (threadIdx.x == 0) out[s] = sum;
    }
  } else {
    const float sum = block_sum(parts_share<kBlock>(tile, ts, parts, static_cast<int>(threadIdx.x)));
    if (threadIdx.x == 0) out[s] = sum;
  }
  if (threadIdx.x == 0) tile[ts].count = 0;
  __syncthreads();  // block_sum's shared memory is reused after this
}

// Kernel 1, block t owns tile [tC, tC + C) (C = kTile). It sums every segment that begins in the tile
// and is at most a tile long (thread, warp or block tier; such a segment may end in the next tile),
// and for the segments longer than a tile it adds their part inside the tile and counts it in
// (count_in): the one that begins here into tile[t].part[0], the one that covers the tile's first float
// from an earlier tile into tile[t].part[1]. The last tile also owns the empty segments that begin at n.
// searched: kernel 0's answers are in tile[].first; else the block searches (few offsets, or arithmetic
// ones: step13::Search).
template <typename Offsets>
__global__ void __launch_bounds__(kBlock, kTileBlocksPerSm)
    sum_tiles(const float* in, std::int64_t n, Offsets offsets, std::int64_t segments, bool searched, float* out,
              TileRecord* tile) {
  __shared__ std::int64_t bounds[2];                      // segments beginning in the tile: [bounds[0], bounds[1])
  __shared__ int below[2][kWarps];                        // or, with few offsets, each warp's share of them
  __shared__ std::int64_t block_tier[kMaxBlockSegments];  // segments this block sums as a whole
  __shared__ int block_tier_count;
  __shared__ std::int64_t long_start;           // the segment longer than a tile that begins here, or -1
  __shared__ unsigned mixed[kMaxMixedBatches];  // batches with a segment longer than kThreadMax
  __shared__ int mixed_count;
  __shared__ __align__(16) float staged[kWarps][kStaged];  // each warp's copy of its batch of tiny segments

  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t t = blockIdx.x, tile_begin = t * kTile, tile_end = tile_begin + kTile;
  const bool last_tile = t == gridDim.x - 1;
  // The tile's first kPrefetch floats asked of L2 now, one 128-byte line per thread: they are on their
  // way from DRAM while the block finds its segments, and its first loads of them hit L2.
  if (const std::int64_t i = tile_begin + 32 * threadIdx.x; threadIdx.x < kPrefetch / 32 && i < n)
    asm volatile("prefetch.L2 [%0];" ::"l"(in + i));  // a generic address: the PTX form without a state space
  wait_for_prerequisite();  // find_tile_starts' answers (or, launched plainly, nothing to wait for)
  const bool probe_all = !searched && Offsets::kSearchFirst && segments <= kBlockProbes;
  if (searched) {
    if (threadIdx.x < 2) bounds[threadIdx.x] = tile[t + threadIdx.x].first;
  } else if (probe_all) {
    count_below(offsets, segments, tile_begin, last_tile ? INT64_MAX : tile_end, below);
  } else if (warp == 0) {
    const std::int64_t s = warp_lower_bound(offsets, 0, segments, tile_begin);
    if (lane == 0) bounds[0] = s;
  } else if (warp == 1) {
    const std::int64_t s = last_tile ? segments : warp_lower_bound(offsets, 0, segments, tile_end);
    if (lane == 0) bounds[1] = s;
  }
  if (threadIdx.x == 64) {
    block_tier_count = 0;
    long_start = -1;
    mixed_count = 0;
  }
  __syncthreads();
  const std::int64_t first = probe_all ? block_bound(below[0]) : bounds[0];
  const std::int64_t last = probe_all ? block_bound(below[1]) : bounds[1];

  // Batches of 32 consecutive segments, batch b to warp b % kWarps. A batch of segments no longer than
  // kThreadMax is that warp's whole (the thread tier); any other is listed for all warps (below). The
  // next batch's offsets are loaded while this one is summed.
  const std::int64_t batches = (last - first + 31) / 32;
  Batch cur = load_batch(offsets, first, last, warp, batches);
  for (std::int64_t b = warp; b < batches; b += kWarps) {
    const Batch next = load_batch(offsets, first, last, b + kWarps, batches);
    if (__ballot_sync(kFullMask, cur.end - cur.begin > kThreadMax) != 0) {
      if (lane == 0) mixed[atomicAdd(&mixed_count, 1)] = static_cast<unsigned>(b);  // order does not matter
      cur = next;
      continue;
    }
    // Thread tier: the batch's floats (contiguous, at most 32 x 32) copied into shared memory, every
    // copy in flight at once (cp.async: no registers wait for them), 16 bytes at a time from the
    // batch's first 16-byte boundary; lanes 0-2 copy the floats before it, lanes 29-31 those after
    // the last whole vector, one each...
    const int count = static_cast<int>(last - first - 32 * b < 32 ? last - first - 32 * b : 32);
    const std::int64_t batch_begin = __shfl_sync(kFullMask, cur.begin, 0);
    const std::int64_t batch_len = __shfl_sync(kFullMask, cur.end, count - 1) - batch_begin;
    const int misalignment = static_cast<int>(reinterpret_cast<std::uintptr_t>(in + batch_begin) % 16 / 4);
    const std::int64_t to_boundary = misalignment ? 4 - misalignment : 0;
    const int head = static_cast<int>(to_boundary < batch_len ? to_boundary : batch_len);
    const int vectors = static_cast<int>((batch_len - head) / 4), tail = static_cast<int>(batch_len - head) % 4;
    const std::int64_t body = batch_begin + head;  // staged[warp][i - body + 4] holds in[i]
    if (static_cast<int>(lane) < head)
      __pipeline_memcpy_async(&staged[warp][4 - head + lane], in + batch_begin + lane, 4);
    if (static_cast<int>(lane) >= 32 - tail)
      __pipeline_memcpy_async(&staged[warp][4 + 4 * vectors + lane - (32 - tail)],
                              in + body + 4 * vectors + lane - (32 - tail), 4);
    for (int v = lane; v < vectors; v += 32) __pipeline_memcpy_async(&staged[warp][4 + 4 * v], in + body + 4 * v, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();
    // ...then each lane adds its own segment from there.
    float sum = 0.0f;
    for (std::int64_t i = cur.begin; i < cur.end; ++i) sum += staged[warp][i - body + 4];
    if (static_cast<int>(lane) < count) out[first + 32 * b + lane] = sum;
    __syncwarp();  // the buffer is refilled by this warp's next batch
    cur = next;
  }
  __syncthreads();

  // excerpt: tiers
  // The listed batches, one segment per warp: a warp sums a segment of up to kWarpMax itself and lists
  // a longer one for the block (or, longer than a tile, for the several-block path).
  for (int i = 0; i < mixed_count; ++i) {
    const std::int64_t s0 = first + 32 * std::int64_t{mixed[i]};
    const Batch x = load_batch(offsets, first, last, mixed[i], batches);  // from L1: loaded above
    for (int j = warp; j < 32; j += kWarps) {
      const std::int64_t s = s0 + j;
      const std::int64_t a = __shfl_sync(kFullMask, x.begin, j), e = __shfl_sync(kFullMask, x.end, j);
      if (s >= last) break;
      const std::int64_t len = e - a;
      if (len <= kWarpMax) {  // warp tier
        const float sum = warp_sum(range_share<32>(in, a, e, lane));
        if (lane == 0) out[s] = sum;
      } else if (lane == 0) {
        if (len <= kTile)
          block_tier[atomicAdd(&block_tier_count, 1)] = s;  // integer atomic: order does not matter
        else
          long_start = s;  // at most one segment longer than a tile begins in a tile
      }
    }
  }
  __syncthreads();

  // Block tier: each segment of (kWarpMax, kTile] that begins here, summed by the whole block.
  for (int i = 0; i < block_tier_count; ++i) {
    const std::int64_t s = block_tier[i];
    const float sum = block_sum(range_share<kBlock>(in, offsets[s], offsets[s + 1], threadIdx.x));
    if (threadIdx.x == 0) out[s] = sum;
    __syncthreads();
  }
  // end excerpt

  // Several blocks: this tile's parts of the segments longer than a tile.
  if (first > 0 && offsets[first] > tile_begin) {  // segment first - 1 covers the tile's first float
    const std::int64_t a = offsets[first - 1], e = offsets[first];
    if (e - a > kTile) {
      const float part = block_sum(range_share<kBlock>(in, tile_begin, e < tile_end ? e : tile_end, threadIdx.x));
      if (threadIdx.x == 0) tile[t].part[1] = part;
      const std::int64_t ts = a / kTile;
      count_in(out, first - 1, tile, ts, (e - 1) / kTile - ts + 1);
    }
  }
  if (const std::int64_t s = long_start; s >= 0) {
    const float part = block_sum(range_share<kBlock>(in, offsets[s], tile_end, threadIdx.x));
    if (threadIdx.x == 0) tile[t].part[0] = part;
    count_in(out, s, tile, t, (offsets[s + 1] - 1) / kTile - t + 1);
  }
}

// The fixed-size mode's short segments, L = 4 Vectors <= 32 on 16-byte aligned input, 32 segments to a
// warp. Where Vectors is a power of two the warp reads its segments' 32 L floats in whole 512-byte
// rows: load k gives lane l the float4 32 k + l of the warp's span, part of segment (32 k + l) / Vectors,
// so each load fills 32 / Vectors groups of Vectors lanes, a segment each, and each group adds its
// segment with log2(Vectors) shuffles. Every sector a load asks for is used whole by that load. Other
// lengths (12, 20, 24, 28 floats) keep a segment to a thread, its L / 4 loads all issued before the first
// add; a warp's loads then cover its segments' 32 L floats whole only together, and L1 must keep each
// sector for the loads that read its other half.
template <int Vectors>
__global__ void __launch_bounds__(kBlock) sum_short_fixed(const float* in, std::int64_t segments, float* out) {
  if constexpr ((Vectors & (Vectors - 1)) == 0) {
    const int lane = static_cast<int>(threadIdx.x % 32);
    const std::int64_t first = std::int64_t{blockIdx.x} * kBlock + threadIdx.x - lane;  // the warp's first segment
    if (first >= segments) return;  // the whole warp: the shuffles below need every lane
    const float4* p = reinterpret_cast<const float4*>(in) + first * Vectors;
    const std::int64_t vectors = (segments - first) * Vectors;  // float4s from p to the last segment's end
    float4 x[Vectors];
#pragma unroll
    for (int k = 0; k < Vectors; ++k) {
      const std::int64_t v = 32 * k + lane;
      x[k] = v < vectors ? p[v] : float4{0.0f, 0.0f, 0.0f, 0.0f};
    }
#pragma unroll
    for (int k = 0; k < Vectors; ++k) {
      float sum = (x[k].x + x[k].y) + (x[k].z + x[k].w);
#pragma unroll
      for (int d = Vectors / 2; d > 0; d /= 2) sum += __shfl_xor_sync(kFullMask, sum, d);
      const std::int64_t s = first + (32 * k + lane) / Vectors;
      if (lane % Vectors == 0 && s < segments) out[s] = sum;
    }
  } else {
    const std::int64_t s = std::int64_t{blockIdx.x} * kBlock + threadIdx.x;
    if (s >= segments) return;
    const float4* p = reinterpret_cast<const float4*>(in) + s * Vectors;
    float4 x[Vectors];
#pragma unroll
    for (int k = 0; k < Vectors; ++k) x[k] = p[k];
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < Vectors; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    out[s] = sum;
  }
}

std::int64_t tiles(std::int64_t n) { return n > 0 ? reduce::ceil_div(n, kTile) : 1; }

// Whether this process's GPU is sm_90 or newer, where a kernel may be launched early. Asked once, as
// step 10 asks its occupancy once, so that no timed launch pays for the question.
cudaError_t early_launch_supported(bool* supported) {
  static int major = 0;  // 0: not asked yet
  if (major == 0) {
    int device = 0;
    CUDA_TRY(cudaGetDevice(&device));
    CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  }
  *supported = major >= 9;
  return cudaSuccess;
}

// A launch of `kernel` on `grid` blocks of kBlock threads that, where `early` and the GPU allows it,
// may begin before the kernel before it in the stream has ended (programmatic dependent launch: that
// kernel lets it, with allow_dependents(), and this one waits for it, wait_for_prerequisite()).
template <typename... Params, typename... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), unsigned grid, cudaStream_t stream, bool early, Args... args) {
  bool supported = false;
  if (early) CUDA_TRY(early_launch_supported(&supported));
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kBlock);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = early && supported ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// Kernel 0 (with loaded offsets, where search_first), then kernel 1.
template <typename Offsets>
cudaError_t launch_tiles(const float* in, std::int64_t n, Offsets offsets, std::int64_t segments, float* out,
                         reduce::Scratch scratch, cudaStream_t stream, bool search_first = false) {
  search_first = search_first && Offsets::kSearchFirst;
  if (segments == 0) return cudaSuccess;
  const std::int64_t grid = tiles(n);
  if (scratch.bytes < scratch_bytes(n) || grid > 0x7fffffff) return cudaErrorInvalidValue;
  auto* const tile = static_cast<TileRecord*>(scratch.data);  // TileRecord: the same place for every n
  if constexpr (Offsets::kSearchFirst) {                      // no such kernel for arithmetic offsets
    if (search_first) {
      find_tile_starts<<<static_cast<unsigned>(reduce::ceil_div(grid + 1, kWarps)), kBlock, 0, stream>>>(
          offsets, segments, grid, tile);
      CUDA_TRY(cudaGetLastError());
    }
  }
  return launch_dependent(sum_tiles<Offsets>, static_cast<unsigned>(grid), stream, search_first, in, n, offsets,
                          segments, search_first, out, tile);
}

template <int Vectors>
cudaError_t launch_short_fixed(const float* in, std::int64_t segments, float* out, cudaStream_t stream) {
  const std::int64_t grid = reduce::ceil_div(segments, kBlock);
  if (grid > 0x7fffffff) return cudaErrorInvalidValue;
  sum_short_fixed<Vectors><<<static_cast<unsigned>(grid), kBlock, 0, stream>>>(in, segments, out);
  return cudaGetLastError();
}

}  // namespace

std::size_t scratch_bytes(std::int64_t n) { return static_cast<std::size_t>(tiles(n) + 1) * sizeof(TileRecord); }

bool search_in_kernel(std::int64_t n, std::int64_t segments, Search search) {
  return search == Search::kernel || (search == Search::automatic && segments > tiles(n));
}

cudaError_t launch(const float* in, std::int64_t n, const std::int64_t* offsets, std::int64_t segments, float* out,
                   reduce::Scratch scratch, cudaStream_t stream, Search search) {
  return launch_tiles(in, n, OffsetArray{offsets}, segments, out, scratch, stream,
                      search_in_kernel(n, segments, search));
}

cudaError_t launch_fixed(const float* in, std::int64_t n, std::int64_t segment_size, std::int64_t segments, float* out,
                         reduce::Scratch scratch, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  if (segment_size <= 0 || segments > n / segment_size) return cudaErrorInvalidValue;
  if (scratch.bytes < scratch_bytes(n)) return cudaErrorInvalidValue;
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  if (aligned && segment_size % 4 == 0 && segment_size <= kThreadMax) {
    switch (segment_size / 4) {
      case 1:
        return launch_short_fixed<1>(in, segments, out, stream);
      case 2:
        return launch_short_fixed<2>(in, segments, out, stream);
      case 3:
        return launch_short_fixed<3>(in, segments, out, stream);
      case 4:
        return launch_short_fixed<4>(in, segments, out, stream);
      case 5:
        return launch_short_fixed<5>(in, segments, out, stream);
      case 6:
        return launch_short_fixed<6>(in, segments, out, stream);
      case 7:
        return launch_short_fixed<7>(in, segments, out, stream);
      case 8:
        return launch_short_fixed<8>(in, segments, out, stream);
      default:
        break;
    }
  }
  return launch_tiles(in, n, FixedOffsets{segment_size}, segments, out, scratch, stream);
}

std::size_t cub_scratch_bytes(std::int64_t segments) {
  std::size_t bytes = 0;
  const cudaError_t e = cub::DeviceSegmentedReduce::Sum(
      nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), segments,
      static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(nullptr));
  return e == cudaSuccess ? std::max<std::size_t>(bytes, 1) : 1;
}

cudaError_t launch_cub(const float* in, const std::int64_t* offsets, std::int64_t segments, float* out,
                       reduce::Scratch scratch, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  std::size_t bytes = scratch.bytes;
  return cub::DeviceSegmentedReduce::Sum(scratch.data, bytes, in, out, segments, offsets, offsets + 1, stream);
}

}  // namespace step13
