// Block-level pieces shared by the steps beyond the progression (12_types_ops, 13_segmented and the
// steps to come), in the manner of CUB's agent layer: a policy says how a block reads (threads, 16-byte
// loads in flight), a tile loader walks any range of elements with that policy, and the warp and block
// reductions fold any state with any operator. The progression's steps (00..11) keep their own copies
// on purpose: each of them reads on its own.
//
// Pieces:
//   Vec<T>                 16 bytes of T, one 128-bit load (LDG.E.128).
//   TilePolicy<B, L>       B threads read L independent 16-byte vectors each before the first combine.
//   TileLoader<T, P>       a range split into a misaligned head, a 16-byte-aligned body and a tail;
//                          walks the body in tiles of P::kThreads * P::kLoads vectors.
//   warp_reduce / block_reduce   a shuffle tree over any trivially copyable state and any operator.
//
// The operator passed to the reductions must be associative and commutative: lanes hold interleaved
// elements, and the shuffle tree hands lane i the state of lane i + offset as the right operand, which
// is not the order of the elements (see 12_types_ops/README.md).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace reduce::agent {

constexpr unsigned kFullMask = 0xffffffffu;

// 16 bytes of T: 4 floats or int32s, 2 doubles or int64s; loaded with one 128-bit instruction.
template <typename T>
struct alignas(16) Vec {
  static constexpr int kWidth = 16 / sizeof(T);
  T v[kWidth];
};

// How a group of threads reads: kThreads cooperating threads (a warp, a block), each with kLoads
// 16-byte loads issued before the first of them is consumed. A tile is kThreads * kLoads vectors.
template <unsigned Threads, int Loads>
struct TilePolicy {
  static constexpr unsigned kThreads = Threads;
  static constexpr int kLoads = Loads;
  static constexpr std::int64_t kTileVectors = std::int64_t{Threads} * Loads;
  static_assert(Threads % 32 == 0, "whole warps");
};

// The elements in[0..n) of one range, seen as 16-byte vectors: `head` elements before the first
// 16-byte boundary, `vectors` whole aligned vectors (the body), and the elements after the last whole
// vector (the tail, at most kWidth - 1). The head and tail together hold at most 2 * (kWidth - 1)
// elements: edge(i) for i < edges().
template <typename T, typename Policy>
struct TileLoader {
  static constexpr int kWidth = Vec<T>::kWidth;
  static constexpr int kLoads = Policy::kLoads;

  const T* in;
  std::int64_t n;
  std::int64_t head;     // elements before the body
  std::int64_t vectors;  // whole vectors in the body
  const Vec<T>* body;

  __device__ TileLoader(const T* in_, std::int64_t n_) : in(in_), n(n_) {
    const auto misalignment = reinterpret_cast<std::uintptr_t>(in) % 16;  // a multiple of sizeof(T)
    const std::int64_t unaligned = misalignment ? (16 - misalignment) / sizeof(T) : 0;
    head = n < unaligned ? n : unaligned;
    body = reinterpret_cast<const Vec<T>*>(in + head);
    vectors = (n - head) / kWidth;
  }

  // Elements outside the body: the head, then the tail.
  __device__ int edges() const { return static_cast<int>(n - kWidth * vectors); }
  __device__ T edge(int i) const { return i < head ? in[i] : in[head + kWidth * vectors + (i - head)]; }

  // The first vector that thread `rank` reads in tile `tile` (a peek, e.g. for a shift), or -1.
  __device__ std::int64_t first_vector(std::int64_t tile, unsigned rank) const {
    const std::int64_t v = tile * Policy::kTileVectors + rank;
    return v < vectors ? v : -1;
  }

  // Thread `rank` of the group reads tiles first, first + stride, ...: in tile t, the vectors
  // t * kTileVectors + k * kThreads + rank for k < kLoads, all loads issued before any is consumed.
  // full(x) takes a tile whose kLoads vectors all exist (no bounds test per vector in the hot loop);
  // partial(x, valid) takes the last, incomplete tile, where valid[k] says whether x[k] was loaded.
  template <typename Full, typename Partial>
  __device__ void tiles(std::int64_t first, std::int64_t stride, unsigned rank, Full&& full, Partial&& partial) const {
    const std::int64_t whole = vectors / Policy::kTileVectors;  // tiles with every vector present
    std::int64_t t = first;
    for (; t < whole; t += stride) {
      const Vec<T>* p = body + t * Policy::kTileVectors + rank;
      Vec<T> x[kLoads];
#pragma unroll
      for (int k = 0; k < kLoads; ++k) x[k] = p[k * Policy::kThreads];
      full(x);
    }
    if (t == whole && whole * Policy::kTileVectors < vectors) {  // the one incomplete tile, if any
      Vec<T> x[kLoads];
      bool valid[kLoads];
#pragma unroll
      for (int k = 0; k < kLoads; ++k) {
        const std::int64_t v = t * Policy::kTileVectors + k * Policy::kThreads + rank;
        valid[k] = v < vectors;
        if (valid[k]) x[k] = body[v];
      }
      partial(x, valid);
    }
  }
};

// A warp shuffle of any state (a float, an int64, a struct of them), one 32-bit word at a time.
template <typename S>
__device__ S shfl_down(const S& s, int offset) {
  static_assert(sizeof(S) % 4 == 0, "a state is shuffled in 32-bit words");
  unsigned w[sizeof(S) / 4];
  std::memcpy(w, &s, sizeof(S));
#pragma unroll
  for (auto& word : w) word = __shfl_down_sync(kFullMask, word, offset);
  S out;
  std::memcpy(&out, w, sizeof(S));
  return out;
}

// The combine of v over the warp, in lane 0 (other lanes hold partial results). Every lane of the
// warp must call it. combine(a, b) -> S; associative and commutative.
template <typename S, typename Combine>
__device__ S warp_reduce(S v, Combine combine) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = combine(v, shfl_down(v, offset));
  return v;
}

// The combine of v over a block of Block threads, in thread 0; identity fills the unused lanes of the
// second level. Uses kWarps states of shared memory: calls must be separated by __syncthreads().
template <unsigned Block, typename S, typename Combine>
__device__ S block_reduce(S v, Combine combine, const S& identity) {
  static_assert(Block % 32 == 0 && Block <= 1024, "whole warps, at most 1024 threads");
  constexpr unsigned kWarps = Block / 32;
  // Raw storage: a state with default member values cannot be declared __shared__ directly.
  __shared__ alignas(S) unsigned char storage[kWarps * sizeof(S)];
  S* const warp_states = reinterpret_cast<S*>(storage);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce(v, combine);
  if constexpr (kWarps == 1) return v;
  if (lane == 0) warp_states[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_reduce(lane < kWarps ? warp_states[lane] : identity, combine);
  return v;
}

// The float sum: the common case, as a functor for the reductions above.
struct Plus {
  template <typename S>
  __device__ S operator()(const S& a, const S& b) const {
    return a + b;
  }
};

}  // namespace reduce::agent
