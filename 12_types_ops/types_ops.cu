// Step 12: any type, any associative operator with an identity.
//
// What it shows: nothing in step 10's loop is special to a float sum. The loop needs an operator that
// is associative (so blocks may combine their parts in any grouping) and an identity (what an empty
// part contributes); the element type only sets how many elements one 16-byte load brings. Here the
// same loop is written once over T (float, double, int32, int64) and the operator (sum, min, max,
// stats), both template parameters; common/ops.hpp defines the operators for the device and for the
// CPU reference alike.
// What changed from step 10: thread_sum() became thread_reduce<T, O>(), which folds each tile of
// kLoadsInFlight 16-byte loads with O (stats: a two-pass mean and M2 over the tile's registers, then
// one Chan merge); block_sum() became block_reduce() (a shuffle of the whole state, word by word);
// the flagged slots carry a flag beside a state of any size, so the hand-over to block 0 is a release
// store of the flag after the state, and an acquire load of it before reading the state.
// Usage: ./12_types_ops [--type float|double|int32|int64] [--op sum|min|max|stats] [--n 2^28] [--help]
#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>

#include <cstring>

#include "types_ops.cuh"

namespace step12 {
namespace {

using reduce::Op;

constexpr int kLoadsInFlight = 4;  // independent 16-byte loads per thread before the first combine
constexpr unsigned kFullMask = 0xffffffffu;

// 16 bytes of T: 4 floats or int32s, 2 doubles or int64s; one 128-bit load.
template <typename T>
struct alignas(16) Vec {
  static constexpr int kWidth = 16 / sizeof(T);
  T v[kWidth];
};

// A warp shuffle of any state (a float, an int64, a Stats struct), one 32-bit word at a time.
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

template <typename T, Op O>
__device__ State<T, O> warp_reduce(State<T, O> v) {
  using OpT = reduce::op_t<O, T>;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = OpT::combine(v, shfl_down(v, offset));
  return v;
}

// The reduction of v over the block, in thread 0.
template <typename T, Op O, unsigned Block>
__device__ State<T, O> block_reduce(State<T, O> v) {
  using S = State<T, O>;
  constexpr unsigned kWarps = Block / 32;
  // Raw storage: a state with default member values cannot be declared __shared__ directly.
  __shared__ alignas(S) unsigned char storage[kWarps * sizeof(S)];
  S* const warp_states = reinterpret_cast<S*>(storage);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  v = warp_reduce<T, O>(v);
  if constexpr (kWarps == 1) return v;
  if (lane == 0) warp_states[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_reduce<T, O>(lane < kWarps ? warp_states[lane] : reduce::op_t<O, T>::identity());
  return v;
}

// One tile's registers folded into one state. Loads past the end (valid[k] false) take no part.
template <typename T, Op O>
__device__ State<T, O> fold(const Vec<T> (&x)[kLoadsInFlight], const bool (&valid)[kLoadsInFlight]) {
  using OpT = reduce::op_t<O, T>;
  constexpr int kWidth = Vec<T>::kWidth;
  if constexpr (O != Op::stats) {
    State<T, O> s = OpT::identity();
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (valid[k]) {
#pragma unroll
        for (int j = 0; j < kWidth; ++j) s = OpT::combine(s, OpT::lift(x[k].v[j]));
      }
    return s;
  } else {
    // Count, sum, min, max and the sum of squares as they come; then the tile's own mean, and M2
    // about it in a second pass over the registers (exact as a two-pass can be, and no division per
    // element as Welford's update would take); the caller merges the tile into its state (Chan).
    using R = reduce::real_t<T>;
    State<T, O> s = OpT::identity();
    R total = 0;
    int count = 0;
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (valid[k]) {
#pragma unroll
        for (int j = 0; j < kWidth; ++j) {
          const T v = x[k].v[j];
          s.sum = reduce::wrapping_add(s.sum, static_cast<reduce::sum_t<T>>(v));
          s.min = reduce::min_of(s.min, v);
          s.max = reduce::max_of(s.max, v);
          total += static_cast<R>(v);
          s.sum_squares += static_cast<R>(v) * static_cast<R>(v);
        }
        count += kWidth;
      }
    if (count == 0) return s;
    const R mean = total / static_cast<R>(count);
    R m2 = 0;
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (valid[k]) {
#pragma unroll
        for (int j = 0; j < kWidth; ++j) {
          const R d = static_cast<R>(x[k].v[j]) - mean;
          m2 += d * d;
        }
      }
    s.moments = reduce::Moments<R>{count, mean, m2};
    return s;
  }
}

// This thread's share of in[0..n): the 16-byte-aligned body in tiles of Block * kLoadsInFlight
// vectors, block b reading tiles b, b + gridDim.x, ...; block 0's first threads also take the
// elements before the first 16-byte boundary (head) and after the last whole vector (tail).
template <typename T, Op O, unsigned Block>
__device__ State<T, O> thread_reduce(const T* in, std::int64_t n) {
  using OpT = reduce::op_t<O, T>;
  constexpr int kWidth = Vec<T>::kWidth;
  const auto misalignment = reinterpret_cast<std::uintptr_t>(in) % 16;  // a multiple of sizeof(T)
  const std::int64_t unaligned = misalignment ? (16 - misalignment) / sizeof(T) : 0;
  const std::int64_t head = n < unaligned ? n : unaligned;
  const Vec<T>* body = reinterpret_cast<const Vec<T>*>(in + head);
  const std::int64_t vectors = (n - head) / kWidth;
  const std::int64_t tail = head + kWidth * vectors;  // the first element after the body
  constexpr std::int64_t kTile = std::int64_t{Block} * kLoadsInFlight;

  State<T, O> acc = OpT::identity();
  if (blockIdx.x == 0 && threadIdx.x < head) acc = OpT::combine(acc, OpT::lift(in[threadIdx.x]));
  if (blockIdx.x == 0 && threadIdx.x < n - tail) acc = OpT::combine(acc, OpT::lift(in[tail + threadIdx.x]));
  for (std::int64_t base = blockIdx.x * kTile; base < vectors; base += kTile * gridDim.x) {
    Vec<T> x[kLoadsInFlight];
    bool valid[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {  // all loads first...
      const std::int64_t v = base + k * Block + threadIdx.x;
      valid[k] = v < vectors;
      if (valid[k]) x[k] = body[v];
    }
    acc = OpT::combine(acc, fold<T, O>(x, valid));  // ...then the operator
  }
  return acc;
}

// The hand-over from block b > 0 to block 0: block b writes its state to states[b], then sets
// flags[b] with a release store; block 0 waits for the flag with acquire loads (so it sees the
// state), reads the state and clears the flag for the next launch.
using Flag = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// Block 0: thread t combines its own state (thread 0: block 0's) with those of blocks t, t + Block,
// ... in that order: the same order every run, so the result is bitwise deterministic.
template <typename T, Op O, unsigned Block>
__device__ State<T, O> collect_partials(unsigned* flags, const State<T, O>* states, const State<T, O>& own) {
  using OpT = reduce::op_t<O, T>;
  State<T, O> v = threadIdx.x == 0 ? own : OpT::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += Block) {
    if (b == 0) continue;  // block 0's own state is `own`
    while (Flag(flags[b]).load(cuda::memory_order_acquire) == 0) {
      // block b has not finished yet
    }
    v = OpT::combine(v, states[b]);
    Flag(flags[b]).store(0, cuda::memory_order_relaxed);  // empty again for the next launch
  }
  return v;
}

// Stats keeps a 7-field state per thread: left alone, the compiler gives it 72-74 registers, which at
// 512 threads leaves one block (16 warps) per SM. Asking for two blocks caps it at 64 (a few bytes
// of spill for the 8-byte types, by ptxas -v). The other operators need 32 registers and get four.
template <Op O>
constexpr int kMinBlocksPerSm = O == Op::stats ? 2 : 1;

template <typename T, Op O, unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocksPerSm<O>)
    reduce_types_ops(const T* in, std::int64_t n, unsigned* flags, State<T, O>* states, State<T, O>* out) {
  const State<T, O> mine = block_reduce<T, O, Block>(thread_reduce<T, O, Block>(in, n));
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0) {
      states[blockIdx.x] = mine;
      Flag(flags[blockIdx.x]).store(1, cuda::memory_order_release);
    }
    return;
  }
  const State<T, O> v = collect_partials<T, O, Block>(flags, states, mine);
  __syncthreads();  // block_reduce's shared array is used a second time
  const State<T, O> total = block_reduce<T, O, Block>(v);
  if (threadIdx.x == 0) *out = total;
}

// At most 32 resident blocks per SM on every GPU the suite supports: the scratch's slot count.
constexpr std::int64_t kMaxBlocksPerSm = 32;

// Scratch layout: kMaxBlocksPerSm * SMs flags, then as many states, 256-byte aligned.
std::size_t flags_bytes(const reduce::LaunchConfig& cfg) {
  return static_cast<std::size_t>(reduce::ceil_div(kMaxBlocksPerSm * cfg.sm_count * sizeof(unsigned), 256) * 256);
}

}  // namespace

template <typename T, Op O>
std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig& cfg) {
  return flags_bytes(cfg) + kMaxBlocksPerSm * cfg.sm_count * sizeof(State<T, O>);
}

template <typename T, Op O>
cudaError_t launch(const T* in, std::int64_t n, State<T, O>* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  constexpr unsigned kB = kBlock;
  const auto kernel = reduce_types_ops<T, O, kB>;
  // Resident blocks per SM do not change for one kernel on this process's device: asked once.
  static int per_sm = 0;
  if (per_sm == 0) CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kB, 0));
  if (per_sm == 0) return cudaErrorInvalidConfiguration;  // the kernel cannot run at this block size here
  const std::int64_t per_tile = std::int64_t{kB} * kLoadsInFlight * Vec<T>::kWidth;
  const std::int64_t max_blocks = std::min<std::int64_t>(per_sm, kMaxBlocksPerSm) * cfg.sm_count;
  int blocks = static_cast<int>(std::clamp<std::int64_t>(reduce::ceil_div(n, per_tile), 1, max_blocks));
  int cooperative = 0;
  CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, cfg.device));
  if (!cooperative) return cudaErrorNotSupported;
  if (scratch.bytes < scratch_bytes<T, O>(n, cfg)) return cudaErrorInvalidValue;
  auto* flags = static_cast<unsigned*>(scratch.data);
  auto* states = reinterpret_cast<State<T, O>*>(static_cast<unsigned char*>(scratch.data) + flags_bytes(cfg));
  void* args[] = {&in, &n, &flags, &states, &out};
  CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), blocks, kB, args, 0, stream));
  reduce::record_launch(cfg, blocks, kB);
  return cudaSuccess;
}

namespace {

template <typename R>
struct Square {
  template <typename T>
  __host__ __device__ R operator()(T x) const { return static_cast<R>(x) * static_cast<R>(x); }
};

// CUB's sum of in[0..n) into the accumulator type of SumOp<T> (int32 into int64).
template <typename T>
cudaError_t cub_sum(void* temp, std::size_t& bytes, const T* in, reduce::sum_t<T>* out, std::int64_t n,
                    cudaStream_t stream) {
  using S = reduce::sum_t<T>;
  return cub::DeviceReduce::Reduce(temp, bytes, in, out, n, ::cuda::std::plus<S>{}, S{0}, stream);
}

// All CUB passes for (T, O); with temp == nullptr only the largest storage need goes to *bytes.
template <typename T, Op O>
cudaError_t cub_passes(void* temp, std::size_t* bytes, const T* in, std::int64_t n, State<T, O>* out,
                       cudaStream_t stream) {
  std::size_t need = 0, b = *bytes;
  auto pass = [&](auto&& call) {
    std::size_t here = temp ? b : 0;
    const cudaError_t e = call(here);
    need = std::max(need, here);
    return e;
  };
  using R = reduce::real_t<T>;
  cudaError_t e = cudaSuccess;
  auto sum = [&](std::size_t& h, reduce::sum_t<T>* o) { return cub_sum(temp, h, in, o, n, stream); };
  auto min = [&](std::size_t& h, T* o) { return cub::DeviceReduce::Min(temp, h, in, o, n, stream); };
  auto max = [&](std::size_t& h, T* o) { return cub::DeviceReduce::Max(temp, h, in, o, n, stream); };
  if constexpr (O == Op::sum) e = pass([&](std::size_t& h) { return sum(h, out); });
  else if constexpr (O == Op::min) e = pass([&](std::size_t& h) { return min(h, out); });
  else if constexpr (O == Op::max) e = pass([&](std::size_t& h) { return max(h, out); });
  else {
    // The fields of *out (null in the size query, where CUB does not look at its output).
    decltype(&out->sum) sum_out = out ? &out->sum : nullptr;
    T* min_out = out ? &out->min : nullptr;
    T* max_out = out ? &out->max : nullptr;
    R* squares_out = out ? &out->sum_squares : nullptr;
    const cudaError_t errors[] = {
        pass([&](std::size_t& h) { return sum(h, sum_out); }),
        pass([&](std::size_t& h) { return min(h, min_out); }),
        pass([&](std::size_t& h) { return max(h, max_out); }),
        pass([&](std::size_t& h) {
          return cub::DeviceReduce::TransformReduce(temp, h, in, squares_out, n, ::cuda::std::plus<R>{},
                                                    Square<R>{}, R{0}, stream);
        }),
    };
    for (cudaError_t x : errors)
      if (e == cudaSuccess) e = x;
  }
  if (!temp) *bytes = std::max<std::size_t>(need, 1);
  return e;
}

}  // namespace

template <typename T, Op O>
std::size_t cub_scratch_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  // With a null storage pointer CUB only computes the size; an error shows again at launch.
  return cub_passes<T, O>(nullptr, &bytes, static_cast<const T*>(nullptr), n, nullptr, nullptr) == cudaSuccess ? bytes : 1;
}

template <typename T, Op O>
cudaError_t cub_launch(const T* in, std::int64_t n, State<T, O>* out, reduce::Scratch scratch, cudaStream_t stream) {
  std::size_t bytes = scratch.bytes;
  return cub_passes<T, O>(scratch.data, &bytes, in, n, out, stream);
}

#define STEP12_INSTANTIATE(T, O)                                                                            \
  template std::size_t scratch_bytes<T, O>(std::int64_t, const reduce::LaunchConfig&);                     \
  template cudaError_t launch<T, O>(const T*, std::int64_t, State<T, O>*, reduce::Scratch,                  \
                                    const reduce::LaunchConfig&, cudaStream_t);                             \
  template std::size_t cub_scratch_bytes<T, O>(std::int64_t);                                               \
  template cudaError_t cub_launch<T, O>(const T*, std::int64_t, State<T, O>*, reduce::Scratch, cudaStream_t);
#define STEP12_INSTANTIATE_OPS(T)      \
  STEP12_INSTANTIATE(T, Op::sum)       \
  STEP12_INSTANTIATE(T, Op::min)       \
  STEP12_INSTANTIATE(T, Op::max)       \
  STEP12_INSTANTIATE(T, Op::stats)
STEP12_INSTANTIATE_OPS(float)
STEP12_INSTANTIATE_OPS(double)
STEP12_INSTANTIATE_OPS(std::int32_t)
STEP12_INSTANTIATE_OPS(std::int64_t)

}  // namespace step12
