// Step 13: segmented sums. Many sums at once, at the memory's speed for every distribution of lengths.
//
// What it shows: one array of n floats cut into S segments by 64-bit CSR offsets (or into segments of
// one fixed length L), summed into S outputs. Lengths range from 0 to the whole array, so no shape of
// work that follows the segments fits all of them: a block per segment idles on segments of 10 floats
// and streams a segment of 10^8 floats through one SM. This step splits the work, not the segments
// (the merge path of Merrill and Garland's merge-based SpMV): the work is the merge of the N values and
// the S segment ends, N + S items in one sorted sequence where end s comes right after the last value
// of segment s. Every block gets an equal run of that sequence, every thread an equal piece of its
// block's tile, whatever the lengths are:
//   - a block finds where its run starts with one block-wide search of the offsets (kBlock probes per
//     round, four rounds for 2^24 segments), and then walks its run tile by tile (kTileItems items);
//   - per tile, every thread issues its 16-byte loads of the tile's values first; a tile with no end
//     in it (a part of a long segment, known from the next end's position without a barrier) is added
//     straight from those registers;
//   - otherwise the block counts the tile's ends (kBlock offsets per round, __syncthreads_count), stages
//     the values and the ends in shared memory, and each thread walks its kItemsPerThread items: a value
//     is added, an end closes the running sum. A thread's first end needs the sums of the threads
//     before it: a block-wide segmented scan of (ended, running sum) pairs hands it over;
//   - the segment still open at the end of a block's run leaves a carry; a tiny second kernel adds the
//     carries, in block order, to the segments they belong to. No float atomics: the same bits every run.
// The fixed-size mode is the same kernel with the ends computed (s + 1) * L instead of read.
// What changed from the library step: everything; 11_cub's cub::DeviceReduce::Sum sums one array, and
// cub::DeviceSegmentedReduce::Sum (timed beside this launcher in every run) is the bar.
// Usage: ./13_segmented [--segments powerlaw | --offsets FILE | --segment-size L] [--n 2^28] [--help]
#include <cub/device/device_segmented_reduce.cuh>

#include <climits>
#include <cstdint>

#include "agent.cuh"
#include "segmented.cuh"

namespace seg {
namespace {

namespace agent = reduce::agent;

constexpr int kWarps = kBlock / 32;
constexpr int kMaxBlocks = 4096;  // more than any GPU keeps resident at once: bounds the scratch
constexpr int kMinBlocks = 5;     // resident blocks per SM asked of the compiler (registers <= 65536 / (5 x 256))

// The segment that a block's run leaves open at its end, and that run's part of it.
struct Carry {
  std::int64_t segment;  // S when no segment is open
  float value;
};

// Where the segments are: absolute float indices of segment 0's start and of segment i's end.
struct OffsetEnds {
  const std::int64_t* offsets;
  __device__ std::int64_t first() const { return offsets[0]; }
  __device__ std::int64_t end(std::int64_t i) const { return offsets[i + 1]; }
};
struct FixedEnds {
  std::int64_t length;
  __device__ std::int64_t first() const { return 0; }
  __device__ std::int64_t end(std::int64_t i) const { return (i + 1) * length; }
};

// The 16 bytes at float index f of in[0, n): one vector load inside the array, else float by float
// (zero outside), for the one or two vectors at the array's edges.
__device__ float4 load4(const float* in, std::int64_t n, std::int64_t f, const float4* p) {
  if (f >= 0 && f + 4 <= n) return *p;
  auto at = [&](std::int64_t q) { return q >= 0 && q < n ? in[q] : 0.0f; };
  return make_float4(at(f), at(f + 1), at(f + 2), at(f + 3));
}

// How many ends come before position d of the merge: the ends i < S with i + (end(i) - base) < d
// (end i's position is i ends and end(i) - base values in). Block-wide: each round the kBlock threads
// probe evenly spaced ends and __syncthreads_count narrows the range kBlock-fold.
template <typename Ends>
__device__ std::int64_t block_path_search(const Ends& ends, std::int64_t base, std::int64_t segments, std::int64_t d) {
  std::int64_t lo = 0, hi = segments < d ? segments : d;  // the answer lies in [lo, hi]
  while (lo < hi) {
    const std::int64_t step = (hi - lo + kBlock - 1) / kBlock;
    const std::int64_t p = lo + threadIdx.x * step;
    const int c = __syncthreads_count(p < hi && p + (ends.end(p) - base) < d);
    if (c == 0) {
      hi = lo;
    } else {
      const std::int64_t next_lo = lo + (c - 1) * step + 1;
      hi = min(hi, lo + c * step);
      lo = next_lo;
    }
  }
  return lo;
}

// Kernel 1, block b: items [b P, (b + 1) P) of the merge of the N values and the S ends, P = ceil((N + S) / blocks).
template <int Items, int MinBlocks, typename Ends>
__global__ void __launch_bounds__(kBlock, MinBlocks) merge_path_sum(const float* in, std::int64_t n, std::int64_t segments,
                                                                    Ends ends, float* out, Carry* carries) {
  constexpr int kTile = kBlock * Items;     // items per tile
  constexpr int kVectors = Items / 4;       // 16-byte loads per thread per tile
  static_assert(Items % 4 == 0, "whole vectors per thread");
  // A tile's values, from the aligned vector at or before its first one; float p is kept at p + p / 32,
  // so that the lanes of a warp, 16 floats apart in the walk, read 32 different banks.
  __shared__ float staged[kTile + kTile / 32 + 4];
  __shared__ int tile_ends[kTile + 1];      // a tile's ends, relative to its first value, then a sentinel
  __shared__ float warp_sum[kWarps];
  __shared__ int warp_ended[kWarps];
  __shared__ float carry_in, carry_out;

  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const std::int64_t base = ends.first(), items = ends.end(segments - 1) - base + segments;
  const std::int64_t per_block = (items + gridDim.x - 1) / gridDim.x;
  const std::int64_t d0 = min(blockIdx.x * per_block, items), d1 = min(d0 + per_block, items);
  std::int64_t i = block_path_search(ends, base, segments, d0);  // ends before the tile
  std::int64_t j = d0 - i;                                       // values before the tile
  auto next_end_position = [&] { return i < segments ? i + (ends.end(i) - base) : items; };
  std::int64_t next_end = next_end_position();
  float carry = 0.0f;   // thread 0's: the open segment's sum over this run's tiles with ends so far
  float acc = 0.0f;     // every thread's: its share of the tiles without ends since then
  bool pending = false;

  for (std::int64_t d = d0; d < d1;) {
    const float* first = in + base + j;
    const int skew = static_cast<int>(reinterpret_cast<std::uintptr_t>(first) % 16 / 4);

    // A long stretch without an end (the inside of a long segment), from an aligned value: two tiles
    // per step, eight 16-byte loads in flight per thread, no masks, no barrier.
    if (skew == 0) {
      const std::int64_t stop = min(next_end, d1);
      if (d + 2 * kTile <= stop) {
        float part = 0.0f;
        do {
          const float4* p = reinterpret_cast<const float4*>(in + base + j) + t;
          float4 y[2 * kVectors];
#pragma unroll
          for (int k = 0; k < 2 * kVectors; ++k) y[k] = p[k * kBlock];
#pragma unroll
          for (int k = 0; k < 2 * kVectors; ++k) part += (y[k].x + y[k].y) + (y[k].z + y[k].w);
          j += 2 * kTile;
          d += 2 * kTile;
        } while (d + 2 * kTile <= stop);
        acc += part;
        pending = true;
        continue;
      }
    }

    // One tile: at most `tile` values from value j on, as aligned 16-byte vectors, all issued first. A
    // tile whose first value is not 16-byte aligned is shorter by its skew (1 to 3 items), so that its
    // values always fit the block's kTile / 4 vectors.
    const int tile = static_cast<int>(min(std::int64_t{kTile - skew}, d1 - d));
    const std::int64_t f0 = base + j - skew;  // the float index of vector 0
    const float4* vectors = reinterpret_cast<const float4*>(first - skew);
    const int lo = skew, hi = skew + tile;    // the tile's floats from vector 0 on: [lo, hi)
    float4 x[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const int v = k * kBlock + t;
      x[k] = 4 * v < hi ? load4(in, n, f0 + 4 * v, vectors + v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }

    if (next_end >= d + tile) {  // no end in this tile: part of one segment, added from the registers
      float part = 0.0f;
#pragma unroll
      for (int k = 0; k < kVectors; ++k) {
        const int r = 4 * (k * kBlock + t);
        if (r >= lo && r + 4 <= hi) {
          part += (x[k].x + x[k].y) + (x[k].z + x[k].w);
        } else {
          if (r >= lo && r < hi) part += x[k].x;
          if (r + 1 >= lo && r + 1 < hi) part += x[k].y;
          if (r + 2 >= lo && r + 2 < hi) part += x[k].z;
          if (r + 3 >= lo && r + 3 < hi) part += x[k].w;
        }
      }
      acc += part;
      pending = true;
      j += tile;
      d += tile;
      continue;
    }

    // The tile's ends, kBlock offsets per round, relative to value j; a sentinel after the last.
    int ne = 0;
    for (;;) {
      const std::int64_t e = i + ne + t;
      bool inside = false;
      if (e < segments) {
        const std::int64_t end = ends.end(e) - base;
        inside = e + end < d + tile;
        if (inside) tile_ends[ne + t] = static_cast<int>(end - j);
      }
      const int c = __syncthreads_count(inside);
      ne += c;
      if (c < kBlock) break;
    }
    const int nv = tile - ne;
    if (t == 0) {
      tile_ends[ne] = INT_MAX;
      carry_in = carry;
    }
    if (pending) {  // the tiles without ends before this one join the open segment
      const float folded = agent::block_reduce<kBlock>(acc, agent::Plus{}, 0.0f);
      if (t == 0) carry_in = carry + folded;
      acc = 0.0f;
      pending = false;
    }
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const int p = 4 * (k * kBlock + t);
      if (p < hi) {
        float* s = staged + p + p / 32;
        s[0] = x[k].x;
        s[1] = x[k].y;
        s[2] = x[k].z;
        s[3] = x[k].w;
      }
    }
    __syncthreads();

    // This thread's items [a, b) of the tile: where its piece of the merge path starts, then the walk,
    // one item per step: the next end if it comes before value v, else value v. Predicated, so the
    // lanes of a warp do not diverge where their ends fall.
    const int a = min(t * Items, tile), b = min(a + Items, tile);
    int lo_k = max(0, a - nv), hi_k = min(a, ne);
    while (lo_k < hi_k) {
      const int mid = (lo_k + hi_k) / 2;
      if (mid + tile_ends[mid] < a) lo_k = mid + 1;
      else hi_k = mid;
    }
    int k = lo_k, v = a - lo_k;
    float run = 0.0f, head = 0.0f;  // the running sum; the sum before this thread's first end
    bool ended = false;
    int head_k = 0;
#pragma unroll
    for (int q = 0; q < Items; ++q) {
      if (a + q < b) {
        const bool is_end = tile_ends[k] <= v;
        const int p = skew + v;
        const float value = staged[p + p / 32];
        if (is_end) {
          if (ended) out[i + k] = run;
          else head = run, head_k = k;
          ended = true;
        }
        run = is_end ? 0.0f : run + value;
        k += is_end;
        v += !is_end;
      }
    }

    // The sum entering this thread: a segmented scan of (ended, run) over the block, after the carry.
    float scan = run;
    int flag = ended;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const float up = __shfl_up_sync(agent::kFullMask, scan, offset);
      const int up_flag = __shfl_up_sync(agent::kFullMask, flag, offset);
      if (lane >= offset) {
        if (!flag) scan = up + scan;
        flag |= up_flag;
      }
    }
    if (lane == 31) {
      warp_sum[warp] = scan;
      warp_ended[warp] = flag;
    }
    __syncthreads();
    float before = carry_in;  // entering this warp: the carry, then the warps before it in order
    for (int w = 0; w < warp; ++w) before = warp_ended[w] ? warp_sum[w] : before + warp_sum[w];
    const float up = __shfl_up_sync(agent::kFullMask, scan, 1);
    const int up_flag = __shfl_up_sync(agent::kFullMask, flag, 1);
    const float incoming = lane == 0 ? before : up_flag ? up : before + up;
    if (ended) out[i + head_k] = incoming + head;
    if (t == kBlock - 1) carry_out = ended ? run : incoming + run;
    __syncthreads();
    if (t == 0) carry = carry_out;
    i += ne;
    j += nv;
    d += tile;
    next_end = next_end_position();
  }
  if (pending) {
    const float folded = agent::block_reduce<kBlock>(acc, agent::Plus{}, 0.0f);
    if (t == 0) carry += folded;
  }
  if (t == 0) carries[blockIdx.x] = Carry{i, carry};
}

// Kernel 2: the carries of consecutive blocks that left the same segment open, added in block order
// into that segment's sum (written by the block where it ends).
__global__ void __launch_bounds__(kBlock) add_carries(const Carry* carries, int blocks, std::int64_t segments,
                                                     float* out) {
  for (int b = threadIdx.x; b < blocks; b += kBlock) {
    const std::int64_t s = carries[b].segment;
    if (s >= segments || (b > 0 && carries[b - 1].segment == s)) continue;
    float sum = carries[b].value;
    for (int k = b + 1; k < blocks && carries[k].segment == s; ++k) sum += carries[k].value;
    out[s] = sum + out[s];
  }
}

// Blocks of merge_path_sum<Items, MinBlocks, Ends> resident at once on the current device, asked once per device.
template <int Items, int MinBlocks, typename Ends>
cudaError_t resident(std::int64_t* blocks) {
  static int cached[64] = {};
  int device = 0;
  CUDA_TRY(cudaGetDevice(&device));
  if (device < 0 || device >= 64) return cudaErrorInvalidDevice;
  if (cached[device] == 0) {
    int per_sm = 0, sms = 0;
    CUDA_TRY(cudaFuncSetAttribute(merge_path_sum<Items, MinBlocks, Ends>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, merge_path_sum<Items, MinBlocks, Ends>, kBlock, 0));
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    cached[device] = std::max(1, std::min(kMaxBlocks, per_sm * sms));
  }
  *blocks = cached[device];
  return cudaSuccess;
}

// Both modes: at most `bound` items (N + S), as many blocks as are resident, at least a tile each.
template <int Items, int MinBlocks, typename Ends>
cudaError_t run(const float* in, std::int64_t n, std::int64_t segments, std::int64_t bound, Ends ends, float* out,
                reduce::Scratch scratch, cudaStream_t stream) {
  if (segments == 0) return cudaSuccess;
  if (scratch.bytes < scratch_bytes()) return cudaErrorInvalidValue;
  std::int64_t blocks = 0;
  CUDA_TRY((resident<Items, MinBlocks, Ends>(&blocks)));
  blocks = std::max<std::int64_t>(1, std::min(blocks, reduce::ceil_div(bound, std::int64_t{kBlock} * Items)));
  // The kernel splits the exact count N + S (it reads offsets[0] and offsets[S]) over these blocks.
  auto* const carries = static_cast<Carry*>(scratch.data);
  merge_path_sum<Items, MinBlocks><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(in, n, segments, ends, out, carries);
  CUDA_TRY(cudaGetLastError());
  add_carries<<<1, kBlock, 0, stream>>>(carries, static_cast<int>(blocks), segments, out);
  return cudaGetLastError();
}

template <typename Ends>
cudaError_t dispatch(const float* in, std::int64_t n, std::int64_t segments, std::int64_t bound, Ends ends, float* out,
                     reduce::Scratch scratch, cudaStream_t stream) {
  return run<kItemsPerThread, kMinBlocks>(in, n, segments, bound, ends, out, scratch, stream);
}

}  // namespace

std::size_t scratch_bytes() { return kMaxBlocks * sizeof(Carry); }

cudaError_t launch(const float* in, std::int64_t n, const std::int64_t* offsets, std::int64_t segments, float* out,
                   reduce::Scratch scratch, cudaStream_t stream) {
  return dispatch(in, n, segments, n + segments, OffsetEnds{offsets}, out, scratch, stream);
}

cudaError_t launch_fixed(const float* in, std::int64_t n, std::int64_t segment_size, std::int64_t segments, float* out,
                         reduce::Scratch scratch, cudaStream_t stream) {
  if (segments > 0 && (segment_size <= 0 || segments > n / segment_size)) return cudaErrorInvalidValue;
  return dispatch(in, n, segments, segments * segment_size + segments, FixedEnds{segment_size}, out, scratch, stream);
}

std::int64_t resident_blocks() {
  std::int64_t blocks = 0;
  return resident<kItemsPerThread, kMinBlocks, OffsetEnds>(&blocks) == cudaSuccess ? blocks : 0;
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
