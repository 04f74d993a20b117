// Step 12: any type, any associative and commutative operator with an identity.
//
// What it shows: nothing in step 10's loop is special to a float sum. The loop needs an operator that
// is associative (so blocks may combine their parts in any grouping), commutative (a thread holds
// interleaved elements, and the shuffle tree hands lane i the state of lane i + offset, so operands
// meet out of element order), and has an identity (what an empty part contributes); the element type
// only sets how many elements one 16-byte load brings. Here the same loop is written once over T
// (float, double, int32, int64) and the operator (sum, min, max, stats), both template parameters;
// ops.hpp defines the operators for the device and for the CPU reference alike, and
// common/agent.cuh the block-level pieces (tile loader, warp and block reductions) that the steps
// beyond the progression share.
// What changed from step 10: thread_sum() became thread_reduce<T, O>(), which walks the same tiles of
// kLoadsInFlight 16-byte loads (agent::TileLoader) and keeps a per-thread accumulator chosen per
// operator: the operator itself for sums and integer min/max; for float min/max one NaN-propagating
// min/max instruction per element, checked once per thread; for stats shifted sums, turned into
// (count, mean, M2) once per thread. block_sum() became agent::block_reduce() (a shuffle of the whole
// state, word by word); the flagged slots carry a flag beside a state of any size, so the hand-over
// to block 0 is a release store of the flag after the state, and an acquire load of it before
// reading the state.
// Usage: ./12_types_ops [--type float|double|int32|int64] [--op sum|min|max|stats] [--n 2^28] [--help]
#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>

#include <type_traits>

#include "agent.cuh"
#include "types_ops.cuh"

namespace step12 {
namespace {

using reduce::Op;
using reduce::agent::Vec;

constexpr int kLoadsInFlight = 4;  // independent 16-byte loads per thread before the first combine
using Policy = reduce::agent::TilePolicy<kBlock, kLoadsInFlight>;
template <typename T>
using Loader = reduce::agent::TileLoader<T, Policy>;

// Calls per_vector(v) for every vector of this thread's share of the body: block b reads tiles b,
// b + gridDim.x, ... (all loads of a tile issued before the first is used).
template <typename T, typename F>
__device__ void for_each_vector(const Loader<T>& loader, F&& per_vector) {
  loader.tiles(
      blockIdx.x, gridDim.x, threadIdx.x,
      [&](const Vec<T>(&x)[kLoadsInFlight]) {
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k) per_vector(x[k]);
      },
      [&](const Vec<T>(&x)[kLoadsInFlight], const bool(&valid)[kLoadsInFlight]) {
#pragma unroll
        for (int k = 0; k < kLoadsInFlight; ++k)
          if (valid[k]) per_vector(x[k]);
      });
}

// The operator applied exactly, element by element (ops.hpp's combine): sums of every type, integer
// min and max (integers: their operators are already one instruction).
template <typename T, Op O>
__device__ State<T, O> exact_share(const Loader<T>& loader) {
  using OpT = reduce::op_t<O, T>;
  State<T, O> s = OpT::identity();
  for_each_vector<T>(loader, [&](const Vec<T>& v) {
#pragma unroll
    for (int j = 0; j < Vec<T>::kWidth; ++j) s = OpT::combine(s, OpT::lift(v.v[j]));
  });
  return s;
}

// The fast min or max of the running acc and x, for the loops below. Floats on sm_80 and later: one
// PTX min.NaN / max.NaN (FMNMX.NAN), as cheap as the sum's FADD, and NaN propagates. Otherwise a
// compare and a select; with PropagateNaN a NaN x is taken (and then kept: nothing compares below or
// above NaN), without it a NaN x is passed over and the caller finds NaN another way. Integers: the
// select is IMNMX, exact. For floats, which of -0 and +0 these return is not what ops.hpp asks for,
// and needs no guessing: a result that is not zero is the same number whichever zero was picked on
// the way, and a zero result is recomputed with the exact operator (the callers do).
template <Op O, bool PropagateNaN, typename T>
__device__ T fast_extreme(T acc, T x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, float>) {
    float r;
    if constexpr (O == Op::min)
      asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(acc), "f"(x));
    else
      asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(acc), "f"(x));
    return r;
  }
#endif
  const bool take_nan = PropagateNaN && reduce::is_nan(x);
  if constexpr (O == Op::min)
    return x < acc || take_nan ? x : acc;
  else
    return x > acc || take_nan ? x : acc;
}

// Which zero a zero result is. The fast min/max may return either -0 or +0 when both meet, so beside
// it each thread keeps the min (or max) of the elements' bit patterns read as signed integers: one
// integer min/max per element, no branch. A zero min means no element is below zero, so the bits' min
// is -0's (the most negative integer, 0x80..0) exactly when a -0 was read; a zero max means none is
// above zero, so the bits' max is +0's (0) or more exactly when a +0 was read. (A thread that must
// re-read its share instead stalls every other thread's wait at the end: docs/method.md.)
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
template <typename T>
__device__ Bits<T> bits_of(T x) {
  if constexpr (sizeof(T) == 4)
    return __float_as_int(x);
  else
    return __double_as_longlong(x);
}
template <typename T>
constexpr Bits<T> kLowestBits = sizeof(T) == 4 ? Bits<T>(INT32_MIN) : Bits<T>(INT64_MIN);  // -0's bits
template <typename T>
constexpr Bits<T> kHighestBits = sizeof(T) == 4 ? Bits<T>(INT32_MAX) : Bits<T>(INT64_MAX);
template <Op O, typename T>
__device__ Bits<T> zero_sign_start() {
  return O == Op::min ? kHighestBits<T> : kLowestBits<T>;
}
template <Op O, typename T>
__device__ Bits<T> zero_sign_fold(Bits<T> z, T x) {
  const Bits<T> b = bits_of(x);
  return O == Op::min ? (b < z ? b : z) : (b > z ? b : z);
}
template <Op O, typename T>
__device__ T signed_zero(Bits<T> z) {
  const bool negative = O == Op::min ? z == kLowestBits<T> : z < 0;
  return negative ? -T{0} : T{0};
}

// Float and double min and max: one fast min/max per element, no NaN test and no branch in the loop;
// integers need nothing more (they have one zero).
template <typename T, Op O>
__device__ T extreme_share(const Loader<T>& loader) {
  T m = reduce::op_t<O, T>::identity();
  [[maybe_unused]] Bits<T> z = zero_sign_start<O, T>();
  for_each_vector<T>(loader, [&](const Vec<T>& v) {
#pragma unroll
    for (int j = 0; j < Vec<T>::kWidth; ++j) {
      m = fast_extreme<O, true>(m, v.v[j]);
      if constexpr (std::is_floating_point_v<T>) z = zero_sign_fold<O>(z, v.v[j]);
    }
  });
  if constexpr (std::is_floating_point_v<T>)
    if (m == T{0}) m = signed_zero<O, T>(z);
  return m;
}

// Stats, accumulated in a form that costs a few instructions per element: the sum, the sum of squares,
// min and max as they come, and the sums of d = x - K and d^2 about a shift K, the first element this
// thread reads. Once per thread these become (count, mean = K + S1/c, M2 = S2 - S1^2/c); Chan's merge
// (ops.hpp) then runs only between threads, warps and blocks. The shift keeps M2 as exact as the
// two-pass when the mean is large against the spread (K is one of the data, so d is of the size of
// the spread); the textbook E[x^2] - E[x]^2 is the case K = 0.
template <typename T>
struct StatsShare {
  using R = reduce::real_t<T>;
  reduce::sum_t<T> sum = 0;
  T min = reduce::min_identity<T>();
  T max = reduce::max_identity<T>();
  R sum_squares = 0, shift = 0, s1 = 0, s2 = 0;
  std::int64_t count = 0;
  Bits<T> zmin = zero_sign_start<Op::min, T>(), zmax = zero_sign_start<Op::max, T>();  // floats: the zeros' signs

  __device__ void add(const Vec<T>& v) {
#pragma unroll
    for (int j = 0; j < Vec<T>::kWidth; ++j) {
      const T x = v.v[j];
      sum = reduce::wrapping_add(sum, static_cast<reduce::sum_t<T>>(x));
      min = fast_extreme<Op::min, false>(min, x);
      max = fast_extreme<Op::max, false>(max, x);
      if constexpr (std::is_floating_point_v<T>) {
        zmin = zero_sign_fold<Op::min>(zmin, x);
        zmax = zero_sign_fold<Op::max>(zmax, x);
      }
      const R r = static_cast<R>(x);
      sum_squares = fma(r, r, sum_squares);
      const R d = r - shift;
      s1 += d;
      s2 = fma(d, d, s2);
    }
    count += Vec<T>::kWidth;
  }
};

template <typename T>
__device__ State<T, Op::stats> stats_share(const Loader<T>& loader) {
  using R = reduce::real_t<T>;
  StatsShare<T> a;
  const std::int64_t first = loader.first_vector(blockIdx.x, threadIdx.x);
  if (first >= 0) {
    a.shift = static_cast<R>(loader.body[first].v[0]);
    // An infinite or NaN shift would turn every d into NaN; such a thread's M2 is NaN anyway.
    if (!isfinite(a.shift)) a.shift = 0;
  }
  for_each_vector<T>(loader, [&](const Vec<T>& v) { a.add(v); });

  State<T, Op::stats> s;
  s.sum = a.sum;
  s.min = a.min;
  s.max = a.max;
  s.sum_squares = a.sum_squares;
  if (a.count == 0) return s;
  const R c = static_cast<R>(a.count);
  const R q = a.s1 / c;
  R mean = a.shift + q;
  R m2 = a.s2 - a.s1 * q;
  m2 = m2 > R{0} ? m2 : R{0};  // rounding may leave a tiny negative
  if constexpr (std::is_floating_point_v<T>) {
    // The shift is finite, so S2, a sum of squares, is NaN exactly when an element is NaN, and
    // infinite when one is infinite (or when the squares overflow). Then the two-pass reference's
    // rules hold: min and max are NaN with a NaN, the mean is the plain sum over c (inf, -inf or
    // NaN), and M2 is NaN.
    if (isnan(a.s2)) s.min = s.max = a.s2;
    if (!isfinite(a.s2)) {
      mean = static_cast<R>(a.sum) / c;
      m2 = a.s2 - a.s2;  // NaN
    }
    // The compare-and-select min/max may pick either zero: the bits say which (above).
    if (s.min == T{0}) s.min = signed_zero<Op::min, T>(a.zmin);
    if (s.max == T{0}) s.max = signed_zero<Op::max, T>(a.zmax);
  }
  s.moments = reduce::Moments<R>{a.count, mean, m2};
  return s;
}

// This thread's share of in[0..n): its vectors of the 16-byte-aligned body, and for block 0's first
// threads one element of the misaligned head or tail each (exactly, with the operator).
template <typename T, Op O>
__device__ State<T, O> thread_reduce(const T* in, std::int64_t n) {
  using OpT = reduce::op_t<O, T>;
  const Loader<T> loader(in, n);
  State<T, O> s;
  if constexpr (O == Op::stats)
    s = stats_share<T>(loader);
  else if constexpr ((O == Op::min || O == Op::max) && std::is_floating_point_v<T>)
    s = extreme_share<T, O>(loader);
  else
    s = exact_share<T, O>(loader);
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < loader.edges())
    s = OpT::combine(s, OpT::lift(loader.edge(threadIdx.x)));
  return s;
}

// The reduction of v over the block, in thread 0 (agent::block_reduce with O's combine).
template <typename T, Op O, unsigned Block>
__device__ State<T, O> block_reduce(const State<T, O>& v) {
  using OpT = reduce::op_t<O, T>;
  return reduce::agent::block_reduce<Block>(
      v, [](const State<T, O>& a, const State<T, O>& b) { return OpT::combine(a, b); }, OpT::identity());
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

// Registers (ptxas -v, sm_90, CUDA 13.0): 38-47 for sum, min and max, 55-62 for stats, no spills;
// 12_types_ops/README.md derives the blocks per SM from them. Stats asks for two blocks of 512 threads
// per SM, which caps it at 64 registers, so a later change that grows its state spills (ptxas shows
// it) rather than silently halving the warps per SM.
template <Op O>
constexpr int kMinBlocksPerSm = O == Op::stats ? 2 : 1;

template <typename T, Op O, unsigned Block>
__global__ void __launch_bounds__(Block, kMinBlocksPerSm<O>)
    reduce_types_ops(const T* in, std::int64_t n, unsigned* flags, State<T, O>* states, State<T, O>* out) {
  const State<T, O> mine = block_reduce<T, O, Block>(thread_reduce<T, O>(in, n));
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
  return cudaSuccess;
}

namespace {

template <typename R>
struct Square {
  template <typename T>
  __host__ __device__ R operator()(T x) const {
    return static_cast<R>(x) * static_cast<R>(x);
  }
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
  if constexpr (O == Op::sum)
    e = pass([&](std::size_t& h) { return sum(h, out); });
  else if constexpr (O == Op::min)
    e = pass([&](std::size_t& h) { return min(h, out); });
  else if constexpr (O == Op::max)
    e = pass([&](std::size_t& h) { return max(h, out); });
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
          return cub::DeviceReduce::TransformReduce(temp, h, in, squares_out, n, ::cuda::std::plus<R>{}, Square<R>{},
                                                    R{0}, stream);
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
  return cub_passes<T, O>(nullptr, &bytes, static_cast<const T*>(nullptr), n, nullptr, nullptr) == cudaSuccess ? bytes
                                                                                                               : 1;
}

template <typename T, Op O>
cudaError_t cub_launch(const T* in, std::int64_t n, State<T, O>* out, reduce::Scratch scratch, cudaStream_t stream) {
  std::size_t bytes = scratch.bytes;
  return cub_passes<T, O>(scratch.data, &bytes, in, n, out, stream);
}

#define STEP12_INSTANTIATE(T, O)                                                           \
  template std::size_t scratch_bytes<T, O>(std::int64_t, const reduce::LaunchConfig&);     \
  template cudaError_t launch<T, O>(const T*, std::int64_t, State<T, O>*, reduce::Scratch, \
                                    const reduce::LaunchConfig&, cudaStream_t);            \
  template std::size_t cub_scratch_bytes<T, O>(std::int64_t);                              \
  template cudaError_t cub_launch<T, O>(const T*, std::int64_t, State<T, O>*, reduce::Scratch, cudaStream_t);
#define STEP12_INSTANTIATE_OPS(T) \
  STEP12_INSTANTIATE(T, Op::sum)  \
  STEP12_INSTANTIATE(T, Op::min)  \
  STEP12_INSTANTIATE(T, Op::max)  \
  STEP12_INSTANTIATE(T, Op::stats)
STEP12_INSTANTIATE_OPS(float)
STEP12_INSTANTIATE_OPS(double)
STEP12_INSTANTIATE_OPS(std::int32_t)
STEP12_INSTANTIATE_OPS(std::int64_t)

}  // namespace step12
