// Step 13: segmented sums. Many sums at once, fast for every segment length.
//
// What it shows: one array of n floats cut into S segments by 64-bit CSR offsets, summed into S
// outputs. Lengths range from 0 to the whole array, so no worker sized by segment fits them all: a
// block per segment (the classic library shape) idles on segments of 10 floats and streams a segment
// of 10^8 floats through one SM. Here the work is cut by ELEMENTS, not by segments (the load-balanced
// shape CCCL issue 6171 asks for):
//   - the array is cut into rounds of 128 floats (32 lanes x one float4); every warp of the grid takes
//     an equal, contiguous run of rounds, so every warp reads the same number of bytes, coalesced,
//     whatever the lengths. The grid is one wave: SM count x resident blocks (occupancy API).
//   - a round with no segment boundary in it (a long segment) costs four adds per lane, as in a plain
//     sum; a round with boundaries runs a segmented warp scan: head flags from the offsets, each lane
//     chains its four floats, __ballot_sync finds each lane's segment head, five __shfl_up_sync add
//     the lanes of one segment, and the lane holding an offset fetches the running sum at the float
//     before it with a shuffle and writes the segment it ends (consecutive offsets, coalesced stores).
//   - a segment that crosses from one warp's run into the next is joined in warp order by the block;
//     one that crosses blocks leaves a part per block, and the last block to finish its part (an
//     integer counter per segment) adds the parts in block order. No second kernel, no float atomics:
//     which thread adds which float depends only on n, the offsets and the grid, so the same GPU
//     gives the same bits every run.
// The longest chain of additions in a segment's sum: 4 floats per lane plus 5 scan steps plus one add
// per round of its warp's run (fast rounds: a lane adds its float4s in a chain, folded by a 5-step
// tree), plus one per warp of the block and the block parts (a 32-lane strided sum and a 5-step tree).
// What changed from the library step: everything; 11_cub's cub::DeviceReduce::Sum sums one array, and
// cub::DeviceSegmentedReduce::Sum (timed beside this launcher in every run) is the bar.
// Usage: ./13_segmented [--segments powerlaw] [--n 2^28] [--pattern int] [--help]
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cstdint>

#include "agent.cuh"
#include "segmented.cuh"

namespace seg {
namespace {

namespace agent = reduce::agent;
using agent::kFullMask;

constexpr int kBlock = 256;                        // threads per block
constexpr int kWarps = kBlock / 32;
constexpr std::int64_t kRound = 128;               // floats per warp round: 32 lanes x one float4
constexpr int kLoads = 8;                          // rounds a lane loads ahead (8 float4 in flight, double-buffered)
constexpr std::int64_t kMinRoundsPerWarp = 16;     // fewer blocks than one wave when n is small
constexpr std::int64_t kMaxBlocks = 4096;          // scratch is sized for this many (a wave of today's GPUs is ~1000)
constexpr std::int64_t kNoBoundary = INT64_MAX;    // "offsets[k]" for k > S

// What a warp leaves for its block: the segment open at the start of its run (ks, when it began before
// the run) and the one open at the end (ke, when it goes on after it), with their partial sums.
struct WarpRecord {
  std::int64_t ks, ke;
  float in_val, out_val;
  int crossing_in, closes_in, crossing_out, empty;
};

__device__ float warp_sum_all(float v) {  // the same bits in every lane
  return __shfl_sync(kFullMask, agent::warp_reduce(v, agent::Plus{}), 0);
}

__device__ std::int64_t boundary(const std::int64_t* offsets, std::int64_t segments, std::int64_t k) {
  return k <= segments ? __ldg(offsets + k) : kNoBoundary;
}

// The first index s in [lo, hi) with offsets[s] >= x (hi when none), found by one warp: each round the
// 32 lanes probe 32 evenly spaced offsets and the ballot narrows the range 32-fold (five rounds for
// S = 2^24 instead of 24 steps of a binary search). Once per warp per launch.
__device__ std::int64_t warp_lower_bound(const std::int64_t* offsets, std::int64_t lo, std::int64_t hi, std::int64_t x) {
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

// Floats p .. p+3 (zeros past n). Aligned: `in` is 16-byte aligned, so one LDG.E.128 when all four exist.
template <bool Aligned>
__device__ float4 load4(const float* in, std::int64_t n, std::int64_t p) {
  if (Aligned && p + 3 < n) return __ldg(reinterpret_cast<const float4*>(in + p));
  float4 x;
  x.x = p < n ? in[p] : 0.0f;
  x.y = p + 1 < n ? in[p + 1] : 0.0f;
  x.z = p + 2 < n ? in[p + 2] : 0.0f;
  x.w = p + 3 < n ? in[p + 3] : 0.0f;
  return x;
}

// Which block's run holds round c, when `chunks` rounds are split over `blocks` as blockIdx b owns
// [b * chunks / blocks, (b + 1) * chunks / blocks).
__device__ std::int64_t block_of_round(std::int64_t c, std::int64_t chunks, std::int64_t blocks) {
  return ((c + 1) * blocks - 1) / chunks;
}

// One warp's walk over its rounds. State between rounds (warp-uniform except acc): kf, the first
// offset index with offsets[kf] >= the round's start, next_b = offsets[kf], and the running sum of the
// segment open at the round's start: carry, plus acc (each lane's float4s of boundary-free rounds, folded
// into carry by a tree when the next boundary comes).
struct Walk {
  const std::int64_t* offsets;
  std::int64_t segments;
  float* out;
  unsigned* flag_words;  // this warp's 128 head flags in shared memory
  float* in_val;         // where the segment open at the run's start gets its partial sum
  std::int64_t ks;       // that segment, when it began before the run (else -1)
  std::int64_t kf, next_b;
  float carry = 0.0f, acc = 0.0f;
  bool dirty = false;

  __device__ void round(const float4 x, std::int64_t r0) {
    const unsigned lane = threadIdx.x % 32;
    const std::int64_t r1 = r0 + kRound;
    if (next_b > r1) {  // no offset in [r0, r1]: the segment goes on, a plain sum
      acc += (x.x + x.y) + (x.z + x.w);
      dirty = true;
      return;
    }
    if (dirty) {
      carry += warp_sum_all(acc);
      acc = 0.0f;
      dirty = false;
    }
    // Head flags: bit e of the round is set when a segment begins at r0 + e (offsets in [r0, r1)).
    if (lane < kRound / 32) flag_words[lane] = 0;
    __syncwarp();
    std::int64_t below = 0;
    for (std::int64_t k0 = kf;; k0 += 32) {
      const std::int64_t b = boundary(offsets, segments, k0 + lane);
      const bool head = b < r1;  // and b >= r0, since k0 >= kf
      if (head) atomicOr(&flag_words[(b - r0) / 32], 1u << ((b - r0) % 32));
      const unsigned m = __ballot_sync(kFullMask, head);
      below += __popc(m);
      if (m != kFullMask) break;
    }
    __syncwarp();
    const unsigned f = (flag_words[lane / 8] >> (4 * (lane % 8))) & 0xfu;

    // Each lane chains its four floats, restarting at a head; lane 0 continues the carry.
    float y0 = (lane == 0 && !(f & 1)) ? carry + x.x : x.x;
    float y1 = (f & 2) ? x.y : y0 + x.y;
    float y2 = (f & 4) ? x.z : y1 + x.z;
    float y3 = (f & 8) ? x.w : y2 + x.w;
    // Segmented inclusive scan of the lanes' last chains: a lane adds lanes only back to the nearest
    // lane (itself included) that holds a head.
    const unsigned heads = __ballot_sync(kFullMask, f != 0) & (kFullMask >> (31 - lane));
    const int first = heads ? 31 - __clz(heads) : 0;
    float v = y3;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const float u = __shfl_up_sync(kFullMask, v, d);
      if (static_cast<int>(lane) - d >= first) v += u;
    }
    const float before = __shfl_up_sync(kFullMask, v, 1);  // the running sum at the lane's first float - 1
    if (lane > 0 && !(f & 1)) {
      y0 = before + y0;
      if (!(f & 2)) {
        y1 = before + y1;
        if (!(f & 4)) {
          y2 = before + y2;
          if (!(f & 8)) y3 = before + y3;
        }
      }
    }
    carry = __shfl_sync(kFullMask, v, 31);

    // Ends: the offset k in (r0, r1] ends segment k - 1; its lane fetches the running sum at the float
    // before it (0 when the segment is empty). Round 0 also takes the offsets at 0 (empty segments).
    std::int64_t prev_last = kf > 0 ? boundary(offsets, segments, kf - 1) : -1;
    for (std::int64_t k0 = kf;; k0 += 32) {
      const std::int64_t k = k0 + lane;
      const std::int64_t b = boundary(offsets, segments, k);
      const std::int64_t up = __shfl_up_sync(kFullMask, b, 1);
      const std::int64_t prev = lane == 0 ? prev_last : up;
      const bool ends = k >= 1 && b <= r1 && (b > r0 || r0 == 0);
      const int e = ends && b > prev ? static_cast<int>(b - 1 - r0) : 0;
      const float z0 = __shfl_sync(kFullMask, y0, e / 4), z1 = __shfl_sync(kFullMask, y1, e / 4);
      const float z2 = __shfl_sync(kFullMask, y2, e / 4), z3 = __shfl_sync(kFullMask, y3, e / 4);
      if (ends) {
        const float sum = b == prev ? 0.0f : (e % 4 == 0 ? z0 : e % 4 == 1 ? z1 : e % 4 == 2 ? z2 : z3);
        if (k - 1 == ks) *in_val = sum;  // began before this warp's run: the block adds the rest
        else out[k - 1] = sum;
      }
      const unsigned m = __ballot_sync(kFullMask, b <= r1);
      if (m != kFullMask) break;
      prev_last = __shfl_sync(kFullMask, b, 31);
    }
    kf += below;
    next_b = boundary(offsets, segments, kf);
  }
};

template <bool Aligned>
__global__ void __launch_bounds__(kBlock) segmented_sum(const float* in, std::int64_t n, const std::int64_t* offsets,
                                                       std::int64_t segments, float* out, std::int64_t chunks,
                                                       unsigned* arrivals, float* head_parts, float* tail_parts) {
  __shared__ WarpRecord records[kWarps];
  __shared__ unsigned flag_words[kWarps][kRound / 32];
  __shared__ std::int64_t finish[2];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t blocks = gridDim.x, all_warps = blocks * kWarps, g = blockIdx.x * std::int64_t{kWarps} + warp;
  const std::int64_t c0 = g * chunks / all_warps, c1 = (g + 1) * chunks / all_warps;
  const std::int64_t p0 = c0 * kRound, p1 = c1 * kRound;

  if (c0 == c1) {
    if (lane == 0) records[warp].empty = 1;
  } else {
    // The first loads go out before the searches, which they do not depend on.
    float4 next[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      if (c0 + u < c1) next[u] = load4<Aligned>(in, n, (c0 + u) * kRound + 4 * lane);
    const std::int64_t kf = warp_lower_bound(offsets, 0, segments + 1, p0);           // first offset >= p0
    const std::int64_t ks = warp_lower_bound(offsets, kf, segments + 1, p0 + 1) - 1;  // the segment holding p0
    const bool crossing_in = ks >= 0 && ks < segments && offsets[ks] < p0;
    const bool closes_in = crossing_in && offsets[ks + 1] <= p1;
    Walk w{offsets, segments, out, flag_words[warp], &records[warp].in_val, crossing_in ? ks : -1, kf,
           boundary(offsets, segments, kf)};
    for (std::int64_t c = c0; c < c1; c += kLoads) {
      float4 x[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) x[u] = next[u];
#pragma unroll
      for (int u = 0; u < kLoads; ++u)
        if (c + kLoads + u < c1) next[u] = load4<Aligned>(in, n, (c + kLoads + u) * kRound + 4 * lane);
#pragma unroll
      for (int u = 0; u < kLoads; ++u)
        if (c + u < c1) w.round(x[u], (c + u) * kRound);
    }
    if (w.dirty) w.carry += warp_sum_all(w.acc);
    if (lane == 0) {
      WarpRecord& r = records[warp];
      r.empty = 0;
      r.ks = ks;
      r.ke = w.kf - 1;  // the segment holding p1 - 1
      r.crossing_in = crossing_in;
      r.closes_in = closes_in;
      r.crossing_out = r.ke >= 0 && r.ke < segments && w.next_b > p1;
      r.out_val = w.carry;
      if (crossing_in && !closes_in) r.in_val = w.carry;  // one segment spans the whole run
    }
  }
  __syncthreads();
  if (warp != 0) return;

  // Thread 0 joins the warps' records in warp order. What crosses the block's edges becomes a part:
  // the segment that began before the block (head part) and the one that goes on after it (tail part).
  if (lane == 0) {
    bool pending = false, pending_head = false, have_head = false, have_tail = false;
    std::int64_t pseg = -1, hseg = -1, tseg = -1;
    float pval = 0.0f, hval = 0.0f, tval = 0.0f;
    for (int i = 0; i < kWarps; ++i) {
      const WarpRecord& r = records[i];
      if (r.empty) continue;
      if (r.crossing_in) {
        const float v = pending ? pval + r.in_val : r.in_val;
        const bool head = pending ? pending_head : true;
        if (!r.closes_in) {
          pending = true, pseg = r.ks, pval = v, pending_head = head;
          continue;
        }
        if (head) have_head = true, hseg = r.ks, hval = v;
        else out[r.ks] = v;
      }
      pending = r.crossing_out;
      if (pending) pseg = r.ke, pval = r.out_val, pending_head = false;
    }
    if (pending && pending_head) have_head = true, hseg = pseg, hval = pval;
    if (pending && !pending_head) have_tail = true, tseg = pseg, tval = pval;
    finish[0] = finish[1] = -1;
    // Each part: publish it, then count it; the block that counts last adds the parts.
    for (int j = 0; j < 2; ++j) {
      if (!(j == 0 ? have_head : have_tail)) continue;
      const std::int64_t s = j == 0 ? hseg : tseg;
      (j == 0 ? head_parts : tail_parts)[blockIdx.x] = j == 0 ? hval : tval;
      __threadfence();
      const std::int64_t bs = block_of_round(offsets[s] / kRound, chunks, blocks);
      const std::int64_t be = block_of_round((offsets[s + 1] - 1) / kRound, chunks, blocks);
      if (atomicAdd(&arrivals[bs], 1u) == static_cast<unsigned>(be - bs)) finish[j] = s;
    }
  }
  __syncwarp();
  for (int j = 0; j < 2; ++j) {
    const std::int64_t s = finish[j];
    if (s < 0) continue;
    __threadfence();
    const std::int64_t bs = block_of_round(offsets[s] / kRound, chunks, blocks);
    const std::int64_t be = block_of_round((offsets[s + 1] - 1) / kRound, chunks, blocks);
    float v = 0.0f;
    for (std::int64_t b = bs + lane; b <= be; b += 32) v += b == bs ? __ldcg(tail_parts + b) : __ldcg(head_parts + b);
    v = agent::warp_reduce(v, agent::Plus{});
    if (lane == 0) {
      out[s] = v;
      arrivals[bs] = 0;  // ready for the next launch
    }
  }
}

std::int64_t rounds(std::int64_t n) { return std::max<std::int64_t>(1, reduce::ceil_div(n, kRound)); }
std::int64_t max_blocks(std::int64_t n) {
  return std::min(kMaxBlocks, reduce::ceil_div(rounds(n), kWarps * kMinRoundsPerWarp));
}

// Blocks of one wave on the current device: SM count x resident blocks from the occupancy API,
// asked once per device and kernel (a launch must not pay for the query inside a timed region).
template <bool Aligned>
cudaError_t wave_blocks(std::int64_t& blocks) {
  constexpr int kMaxDevices = 64;
  static int cached[kMaxDevices] = {};
  int device = 0;
  CUDA_TRY(cudaGetDevice(&device));
  if (device < kMaxDevices && cached[device] > 0) {
    blocks = cached[device];
    return cudaSuccess;
  }
  int sms = 0, per_sm = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, segmented_sum<Aligned>, kBlock, 0));
  blocks = std::max(1, sms * per_sm);
  if (device < kMaxDevices) cached[device] = static_cast<int>(blocks);
  return cudaSuccess;
}

template <bool Aligned>
cudaError_t launch_aligned(const float* in, std::int64_t n, const std::int64_t* offsets, std::int64_t segments,
                           float* out, reduce::Scratch scratch, cudaStream_t stream) {
  std::int64_t wave = 0;
  CUDA_TRY(wave_blocks<Aligned>(wave));
  const std::int64_t blocks = std::min(wave, max_blocks(n)), cap = max_blocks(n);
  auto* const arrivals = static_cast<unsigned*>(scratch.data);
  auto* const head_parts = reinterpret_cast<float*>(arrivals + cap);
  auto* const tail_parts = head_parts + cap;
  // The counters must start at zero; each launch leaves them at zero, but a fresh scratch is not.
  CUDA_TRY(cudaMemsetAsync(arrivals, 0, blocks * sizeof(unsigned), stream));
  segmented_sum<Aligned><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(in, n, offsets, segments, out, rounds(n),
                                                                               arrivals, head_parts, tail_parts);
  return cudaGetLastError();
}

}  // namespace

std::size_t scratch_bytes(std::int64_t n) {
  return static_cast<std::size_t>(max_blocks(n)) * (sizeof(unsigned) + 2 * sizeof(float));
}

cudaError_t launch(const float* in, std::int64_t n, const std::int64_t* offsets, std::int64_t segments, float* out,
                   reduce::Scratch scratch, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  if (n < 0 || scratch.bytes < scratch_bytes(n)) return cudaErrorInvalidValue;
  if (reinterpret_cast<std::uintptr_t>(in) % 16 == 0)
    return launch_aligned<true>(in, n, offsets, segments, out, scratch, stream);
  return launch_aligned<false>(in, n, offsets, segments, out, scratch, stream);
}

std::size_t cub_scratch_bytes(std::int64_t segments) {
  std::size_t bytes = 0;
  const cudaError_t e = cub::DeviceSegmentedReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                                                        static_cast<float*>(nullptr), segments,
                                                        static_cast<const std::int64_t*>(nullptr),
                                                        static_cast<const std::int64_t*>(nullptr));
  return e == cudaSuccess ? std::max<std::size_t>(bytes, 1) : 1;
}

cudaError_t launch_cub(const float* in, const std::int64_t* offsets, std::int64_t segments, float* out,
                       reduce::Scratch scratch, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  std::size_t bytes = scratch.bytes;
  return cub::DeviceSegmentedReduce::Sum(scratch.data, bytes, in, out, segments, offsets, offsets + 1, stream);
}

}  // namespace seg
