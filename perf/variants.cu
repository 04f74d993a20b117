// Experiments behind docs/method.md, each a small set of rows timed like the harness times a step
// (L2 flushed before every run, events around the launch only, median of the runs). Not part of the
// suite or its tests; built with -DREDUCE_BUILD_PERF=ON as bin/perf/perf_variants.
//   atomics   step 00's lesson: one atomic per element into a float or a double, against
//             warp-aggregated atomics (a shuffle sum per warp, one atomic per warp); time and error
//   latency   one thread chasing pointers through a buffer far larger than L2: DRAM latency, the
//             number Little's law needs (bytes in flight = bandwidth x latency)
//   tiles     the read-only one-tile-per-block kernel (perf/read_ceiling.cu) at every block size and
//             number of float4 loads per thread: what step 10 and the read ceiling choose from
//   ablation  what makes step 10 faster than step 09: its tile layout, its tile-sized grid and its
//             512 threads, each changed alone, at sizes from 2^16 to 2^30, every run checked exactly
//   chunks    how far apart the blocks read: each block streams C tiles of 32 KB in turn (C = 1 is
//             the read ceiling's kernel; C = 4 is 13's interior tiles), at 4 and 8 blocks per SM
//   perf_variants SET [log2 n ...] [--format json|text]
// Output: the engine's records, one json line per variant and size (step "perf_variants", the fields
// set and variant naming the row, every timed sample kept), or with --format text the same as tables.
#include <cuda/atomic>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "device.cuh"
#include "files.hpp"
#include "harness.cuh"
#include "input.hpp"
#include "read_tiles.cuh"
#include "step.cuh"
#include "steps.hpp"  // step09::kStep, step10::kStep

namespace {

using reduce::DeviceBuffer;

// Where the rows go: json records (the default), or the text tables (`text` and its lines).
struct Out {
  std::string set;
  reduce::DeviceInfo device;
  reduce::Format format = reduce::Format::json;
  bool text() const { return format == reduce::Format::text; }
  void line(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  // A record of this set (format_json, as every step's): the row `variant` at n floats, timed `ms` after
  // `warmup` untimed runs, launched as `shape`; the caller adds its result, check and fields, then emit().
  reduce::Report record(const std::string& variant, std::int64_t n, reduce::Pattern pattern, int warmup,
                        const reduce::Summary& ms, const reduce::LaunchShape& shape) const {
    reduce::Options opt;
    opt.n = n;
    opt.pattern = pattern;
    opt.iters = static_cast<int>(ms.samples.size());
    opt.warmup = warmup;
    reduce::Report r = reduce::fill_common(bench(), opt, device);
    reduce::fill_timing(r, ms, /*identical=*/true, shape);
    r.extra = {reduce::text_field("set", set), reduce::text_field("variant", variant)};
    return r;
  }
  // Emits r (json only) once its check is known; unchecked rows (timing experiments on zeros, float
  // atomics whose error is the measurement) say so in the field `check`.
  void emit(reduce::Report& r, const char* unchecked = nullptr) const {
    if (unchecked) {
      r.runs_correct = r.runs_total;
      r.extra.push_back(reduce::text_field("check", unchecked));
    }
    reduce::finish(r, /*input_unchanged=*/true, /*speak=*/false);
    if (!text()) std::cout << reduce::format_json(r) << "\n";
  }
  reduce::Bench bench() const {
    return reduce::Bench{"perf_variants", "the experiments behind docs/method.md (perf/variants.cu)"};
  }
};

void Out::line(const char* fmt, ...) const {
  if (!text()) return;
  va_list args;
  va_start(args, fmt);
  std::vprintf(fmt, args);
  va_end(args);
}

// `runs` launches after one warm-up, each after an L2 flush (the harness's way): their times.
reduce::Summary time_ms(reduce::L2Flusher& flusher, cudaStream_t stream, int runs,
                        const std::function<void()>& launch) {
  return reduce::summarize(reduce::time_runs(1, runs, flusher, stream, [&](int) {
    launch();
    CUDA_CHECK(cudaGetLastError());
  }));
}

// ---------------------------------------------------------------------------------------------
// Set atomics.
template <typename Acc>
__global__ void atomic_per_element(const float* in, std::int64_t n, Acc* total) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, static_cast<Acc>(in[i]));
}

template <typename Acc>
__global__ void atomic_per_warp(const float* in, std::int64_t n, Acc* total) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(total, static_cast<Acc>(v));
}

template <typename Acc>
void atomics_row(const Out& out, const char* name, const char* variant,
                 void (*kernel)(const float*, std::int64_t, Acc*), const float* in, std::int64_t n, reduce::Pattern p,
                 const reduce::Reference& ref, reduce::L2Flusher& flusher, cudaStream_t stream) {
  DeviceBuffer<Acc> total(1);
  const unsigned blocks = static_cast<unsigned>(std::max<std::int64_t>(reduce::ceil_div(n, 256), 1));
  const reduce::Summary ms = time_ms(flusher, stream, 10, [&] {
    CUDA_CHECK(cudaMemsetAsync(total.get(), 0, sizeof(Acc), stream));
    kernel<<<blocks, 256, 0, stream>>>(in, n, total.get());
  });
  Acc got{};
  CUDA_CHECK(cudaMemcpy(&got, total.get(), sizeof(Acc), cudaMemcpyDeviceToHost));
  const double rel = ref.sum != 0 ? std::fabs(static_cast<double>(got) - ref.sum) / std::fabs(ref.sum) : 0.0;
  out.line("%-28s %8.3f ms %10.1f GB/s %12.3e adds/s  result %.9g  rel. error %.2e\n", name, ms.median,
           n * 4.0 / (ms.median * 1e6), n / (ms.median * 1e-3), static_cast<double>(got), rel);
  reduce::Report r = out.record(variant, n, p, 1, ms, reduce::LaunchShape{blocks, 256, 1});
  r.deterministic = false;  // atomics add in whatever order they arrive
  r.result = static_cast<double>(got);
  r.reference = ref.sum;
  r.abs_error = std::fabs(r.result - ref.sum);
  r.extra.push_back(reduce::number_field("adds_per_s", n / (ms.median * 1e-3)));
  r.extra.push_back(reduce::number_field("rel_error", rel));
  out.emit(r, "none: the error is the measurement");
}

void set_atomics(const Out& out, const std::vector<int>& logs, reduce::L2Flusher& flusher, cudaStream_t stream) {
  for (reduce::Pattern p : {reduce::Pattern::constant, reduce::Pattern::uniform}) {
    for (int k : logs) {
      const std::int64_t n = std::int64_t{1} << k;
      std::vector<float> host(n);
      reduce::fill_input(host.data(), n, p, 1);
      const reduce::Reference ref = reduce::reference_sum(host.data(), n);
      DeviceBuffer<float> in(n);
      CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      out.line("atomics n = 2^%d, pattern %s, reference %.9g\n", k, reduce::to_string(p), ref.sum);
      atomics_row<float>(out, "  per element, float", "per_element_float", atomic_per_element<float>, in.get(), n, p,
                         ref, flusher, stream);
      atomics_row<double>(out, "  per element, double (00)", "per_element_double", atomic_per_element<double>, in.get(),
                          n, p, ref, flusher, stream);
      atomics_row<float>(out, "  per warp, float", "per_warp_float", atomic_per_warp<float>, in.get(), n, p, ref,
                         flusher, stream);
      atomics_row<double>(out, "  per warp, double", "per_warp_double", atomic_per_warp<double>, in.get(), n, p, ref,
                          flusher, stream);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Set latency: next[i] holds the index of the next node; nodes 4 KB apart, in a random cycle.
__global__ void chase(const unsigned* next, int steps, unsigned* sink) {
  unsigned i = 0;
  for (int s = 0; s < steps; ++s) i = next[i];
  *sink = i;
}

void set_latency(const Out& out, reduce::L2Flusher& flusher, cudaStream_t stream, const reduce::DeviceInfo& device) {
  constexpr std::int64_t kStride = 1024;  // unsigneds: 4 KB between nodes
  const std::int64_t nodes = std::max<std::int64_t>(16 * device.l2_bytes / (kStride * 4), 1 << 14);
  std::vector<unsigned> order(nodes);
  for (std::int64_t i = 0; i < nodes; ++i) order[i] = static_cast<unsigned>(i);
  std::srand(7);
  for (std::int64_t i = nodes - 1; i > 0; --i) std::swap(order[i], order[std::rand() % (i + 1)]);
  std::vector<unsigned> next(nodes * kStride, 0);
  for (std::int64_t i = 0; i < nodes; ++i) next[order[i] * kStride] = order[(i + 1) % nodes] * kStride;
  DeviceBuffer<unsigned> d(next.size()), sink(1);
  CUDA_CHECK(cudaMemcpy(d.get(), next.data(), next.size() * 4, cudaMemcpyHostToDevice));
  for (int steps : {2000, 8000}) {
    const reduce::Summary ms =
        time_ms(flusher, stream, 5, [&] { chase<<<1, 1, 0, stream>>>(d.get(), steps, sink.get()); });
    out.line("latency: %d dependent loads over %.0f MB (4 KB apart): %.0f ns per load\n", steps, next.size() * 4 / 1e6,
             ms.median * 1e6 / steps);
    // n: the dependent loads, 4 bytes each.
    reduce::Report r = out.record("chase_" + std::to_string(steps), steps, reduce::Pattern::uniform, 1, ms,
                                  reduce::LaunchShape{1, 1, 1});
    r.extra.push_back(reduce::number_field("ns_per_load", ms.median * 1e6 / steps));
    r.extra.push_back(reduce::number_field("buffer_bytes", next.size() * 4.0));
    out.emit(r, "none: a latency, no result");
  }
}

// ---------------------------------------------------------------------------------------------
// Set tiles: perf/read_tiles.cuh's kernel (perf/read_ceiling.cu's) at every shape.
// A read-only row of zeros: the record of one timing (no result to check).
void read_row(const Out& out, const std::string& variant, std::int64_t vectors, const reduce::Summary& ms,
              const reduce::LaunchShape& shape, std::vector<reduce::Field> fields) {
  reduce::Report r = out.record(variant, vectors * 4, reduce::Pattern::uniform, 1, ms, shape);
  r.extra.insert(r.extra.end(), fields.begin(), fields.end());
  out.emit(r, "none: it only reads zeros");
}

template <int Block, int Loads>
void tiles_cell(const Out& out, const float4* in, std::int64_t vectors, float* sink, reduce::L2Flusher& flusher,
                cudaStream_t stream) {
  const std::int64_t blocks = std::max<std::int64_t>(reduce::ceil_div(vectors, std::int64_t{Block} * Loads), 1);
  const reduce::Summary ms = time_ms(flusher, stream, 20, [&] {
    read_tiles<Block, Loads><<<static_cast<unsigned>(blocks), Block, 0, stream>>>(in, vectors, sink);
  });
  out.line(" %7.0f", vectors * 16.0 / (ms.median * 1e6));
  read_row(out, "block" + std::to_string(Block) + "_loads" + std::to_string(Loads), vectors, ms,
           reduce::LaunchShape{blocks, Block, 1}, {reduce::number_field("loads_per_thread", Loads)});
}

template <int Block>
void tiles_row(const Out& out, const float4* in, std::int64_t vectors, float* sink, reduce::L2Flusher& flusher,
               cudaStream_t stream) {
  out.line("  block %4d:", Block);
  tiles_cell<Block, 1>(out, in, vectors, sink, flusher, stream);
  tiles_cell<Block, 2>(out, in, vectors, sink, flusher, stream);
  tiles_cell<Block, 4>(out, in, vectors, sink, flusher, stream);
  tiles_cell<Block, 8>(out, in, vectors, sink, flusher, stream);
  tiles_cell<Block, 16>(out, in, vectors, sink, flusher, stream);
  out.line("\n");
}

void set_tiles(const Out& out, const std::vector<int>& logs, reduce::L2Flusher& flusher, cudaStream_t stream) {
  for (int k : logs) {
    const std::int64_t vectors = (std::int64_t{1} << k) / 4;
    DeviceBuffer<float4> in(vectors);
    DeviceBuffer<float> sink(std::max<std::int64_t>(reduce::ceil_div(vectors, 128), 1));  // a float per block, at most
    CUDA_CHECK(cudaMemset(in.get(), 0, in.bytes()));
    out.line("tiles n = 2^%d floats, GB/s, one tile per block; columns: float4 loads per thread 1 2 4 8 16\n", k);
    tiles_row<128>(out, in.get(), vectors, sink.get(), flusher, stream);
    tiles_row<256>(out, in.get(), vectors, sink.get(), flusher, stream);
    tiles_row<512>(out, in.get(), vectors, sink.get(), flusher, stream);
    tiles_row<1024>(out, in.get(), vectors, sink.get(), flusher, stream);
  }
}

// ---------------------------------------------------------------------------------------------
// Set chunks: the same bytes in flight per SM, the blocks' reads spread wider. A block of 256 threads
// streams `chunk` consecutive tiles of 256 x 8 float4s (32 KB), eight loads in flight per thread in
// each, so the 4 or 8 blocks of an SM at one moment read 32 KB each, 32 KB x chunk apart. Occupancy is
// set by dynamic shared memory (a quarter of the SM's, less its per-block reserve: 4 blocks) or none
// (8 blocks of 256 threads); the row prints what the occupancy API grants.
__global__ void __launch_bounds__(256)
    read_chunks(const float4* __restrict__ in, std::int64_t vectors, int chunk, float* __restrict__ sink) {
  constexpr int kLoads = 8;
  float sum = 0.0f;
  for (int c = 0; c < chunk; ++c) {
    const std::int64_t base = (std::int64_t{blockIdx.x} * chunk + c) * (256 * kLoads) + threadIdx.x;
    float4 x[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const std::int64_t v = base + k * 256;
      x[k] = v < vectors ? in[v] : float4{0.0f, 0.0f, 0.0f, 0.0f};
    }
#pragma unroll
    for (int k = 0; k < kLoads; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  }
  if (sum == -1.0f) sink[blockIdx.x] = sum;  // never true for the zero-filled input
}

void set_chunks(const Out& out, const std::vector<int>& logs, reduce::L2Flusher& flusher, cudaStream_t stream) {
  int device = 0, smem_sm = 0, reserved = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  const int quarter = smem_sm / 4 - reserved;  // dynamic shared memory that leaves room for 4 blocks
  CUDA_CHECK(cudaFuncSetAttribute(read_chunks, cudaFuncAttributeMaxDynamicSharedMemorySize, quarter));
  constexpr int kChunks[] = {1, 2, 4, 8};
  constexpr int kRounds = 3;
  for (int k : logs) {
    const std::int64_t vectors = (std::int64_t{1} << k) / 4;
    DeviceBuffer<float4> in(vectors);
    DeviceBuffer<float> sink(
        std::max<std::int64_t>(reduce::ceil_div(vectors, 256 * 8), 1));  // a float per block, at most
    CUDA_CHECK(cudaMemset(in.get(), 0, in.bytes()));
    out.line(
        "chunks n = 2^%d floats, GB/s (median of 20 runs, %d rounds); columns: tiles of 32 KB per block, "
        "1 2 4 8\n",
        k, kRounds);
    for (const int smem : {quarter, 0}) {
      int per_sm = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_chunks, 256, smem));
      for (int round = 1; round <= kRounds; ++round) {
        out.line("  %d blocks per SM, round %d:", per_sm, round);
        for (const int chunk : kChunks) {
          const std::int64_t blocks =
              std::max<std::int64_t>(reduce::ceil_div(vectors, std::int64_t{256} * 8 * chunk), 1);
          const reduce::Summary ms = time_ms(flusher, stream, 20, [&] {
            read_chunks<<<static_cast<unsigned>(blocks), 256, smem, stream>>>(in.get(), vectors, chunk, sink.get());
          });
          out.line(" %7.0f", vectors * 16.0 / (ms.median * 1e6));
          read_row(out, "chunk" + std::to_string(chunk) + "_per_sm" + std::to_string(per_sm), vectors, ms,
                   reduce::LaunchShape{blocks, 256, 1},
                   {reduce::number_field("chunk_tiles", chunk), reduce::number_field("blocks_per_sm", per_sm),
                    reduce::number_field("round", round)});
        }
        out.line("\n");
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Set ablation. Step 10 differs from step 09 in three ways at once: the body is read in tiles (a
// block's Block x 4 float4s contiguous, all four loads issued before the first add) instead of
// grid-stride; the grid is sized in tiles (n / (16 Block) blocks, not n / (4 Block), both capped
// at the resident grid); and it runs 512 threads, not 256. Each row below changes one of them:
// b, c and d from step 09 (row a), e from step 10 (row f). Rows a, c, e and f run the steps' own
// launchers; b and d need a kernel the steps do not have, so abl::reduce below is steps 09 and 10's
// kernel in one (Tiled picks the loop), and rows a2 and f2 run it in the steps' own shapes, to show
// that the copy times like the step it copies.
namespace abl {

using Slot = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
constexpr unsigned long long kFull = 1ull << 32;
constexpr int kLoads = 4;  // step 10's kLoadsInFlight

__device__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <unsigned Block>
__device__ float block_sum(float v) {
  constexpr unsigned kWarps = Block / 32;
  __shared__ float warp_sums[kWarps];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if constexpr (kWarps == 1) return v;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
  return v;
}

// Step 09's thread_sum (Tiled false) or step 10's (Tiled true), line for line.
template <unsigned Block, bool Tiled>
__device__ float thread_sum(const float* in, std::int64_t n) {
  const auto misalignment = reinterpret_cast<std::uintptr_t>(in) % 16;
  const std::int64_t unaligned = misalignment ? (16 - misalignment) / 4 : 0;
  const std::int64_t head = n < unaligned ? n : unaligned;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  const std::int64_t vectors = (n - head) / 4;
  const std::int64_t tail = head + 4 * vectors;
  float sum = 0.0f;
  if (blockIdx.x == 0 && threadIdx.x < head) sum += in[threadIdx.x];
  if (blockIdx.x == 0 && threadIdx.x < n - tail) sum += in[tail + threadIdx.x];
  if constexpr (!Tiled) {
    const std::int64_t stride = std::int64_t{gridDim.x} * Block;
    for (std::int64_t i = std::int64_t{blockIdx.x} * Block + threadIdx.x; i < vectors; i += stride) {
      const float4 x = body[i];
      sum += (x.x + x.y) + (x.z + x.w);
    }
  } else {
    constexpr std::int64_t kTile = std::int64_t{Block} * kLoads;
    for (std::int64_t base = blockIdx.x * kTile; base < vectors; base += kTile * gridDim.x) {
      float4 x[kLoads];
#pragma unroll
      for (int k = 0; k < kLoads; ++k) {
        const std::int64_t v = base + k * Block + threadIdx.x;
        x[k] = v < vectors ? body[v] : float4{0.0f, 0.0f, 0.0f, 0.0f};
      }
#pragma unroll
      for (int k = 0; k < kLoads; ++k) sum += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    }
  }
  return sum;
}

// The steps' kernel: every block hands its sum to block 0 through a flagged slot.
template <unsigned Block, bool Tiled>
__global__ void reduce(const float* in, std::int64_t n, unsigned long long* slots, float* out) {
  const float sum_of_block = block_sum<Block>(thread_sum<Block, Tiled>(in, n));
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0)
      Slot(slots[blockIdx.x]).store(kFull | __float_as_uint(sum_of_block), cuda::memory_order_relaxed);
    return;
  }
  float v = threadIdx.x == 0 ? sum_of_block : 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += Block) {
    if (b == 0) continue;
    unsigned long long w;
    while (!((w = Slot(slots[b]).load(cuda::memory_order_relaxed)) & kFull)) {
    }
    v += __uint_as_float(static_cast<unsigned>(w));
    Slot(slots[b]).store(0, cuda::memory_order_relaxed);
  }
  __syncthreads();
  const float total = block_sum<Block>(v);
  if (threadIdx.x == 0) *out = total;
}

// One cooperative launch of abl::reduce with ceil(n / floats_per_block) blocks, at least one and at
// most the resident grid (occupancy API x SM count), as the steps size theirs.
template <unsigned Block, bool Tiled>
cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream, std::int64_t floats_per_block) {
  static int per_sm = 0;
  if (per_sm == 0) CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce<Block, Tiled>, Block, 0));
  const int blocks = static_cast<int>(
      std::clamp<std::int64_t>(reduce::ceil_div(n, floats_per_block), 1, std::int64_t{per_sm} * cfg.sm_count));
  auto* slots = static_cast<unsigned long long*>(scratch.data);
  void* args[] = {&in, &n, &slots, &out};
  CUDA_TRY(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce<Block, Tiled>), blocks, Block, args, 0, stream));
  return cudaSuccess;
}

}  // namespace abl

// One row of the set: a launcher with the step launcher's shape, and what it changes.
struct AblationRow {
  const char* id;
  const char* name;
  const char* layout;  // "stride" (step 09) or "tiles" (step 10)
  int block;
  const char* grid_rule;  // n / (4 Block) (step 09) or n / (16 Block) (step 10)
  std::function<cudaError_t(const float*, std::int64_t, float*, reduce::Scratch, const reduce::LaunchConfig&,
                            cudaStream_t)>
      launch;
};

std::vector<AblationRow> ablation_rows() {
  using namespace std::placeholders;
  return {
      {"a", "09_as_is", "stride", 256, "n/4B", step09::kStep.launch},
      {"a2", "09_copy", "stride", 256, "n/4B", std::bind(abl::launch<256, false>, _1, _2, _3, _4, _5, _6, 4 * 256)},
      {"b", "09+grid_of_10", "stride", 256, "n/16B",
       std::bind(abl::launch<256, false>, _1, _2, _3, _4, _5, _6, 16 * 256)},
      {"c", "09+512_threads", "stride", 512, "n/4B", step09::kStep.launch},
      {"d", "09+tiles_of_10", "tiles", 256, "n/4B", std::bind(abl::launch<256, true>, _1, _2, _3, _4, _5, _6, 4 * 256)},
      {"e", "10+256_threads", "tiles", 256, "n/16B", step10::kStep.launch},
      {"f2", "10_copy", "tiles", 512, "n/16B", std::bind(abl::launch<512, true>, _1, _2, _3, _4, _5, _6, 16 * 512)},
      {"f", "10_as_is", "tiles", 512, "n/16B", step10::kStep.launch},
  };
}

// Each size: kRounds rounds, each running every row kIters times after kWarmup (the rows interleaved,
// so a drift of the GPU's speed during the set falls on all rows alike); every run's result is checked
// exactly (pattern int) and must be bitwise the same as the row's first. False when a row failed.
bool set_ablation(const Out& out, const std::vector<int>& logs, const reduce::DeviceInfo& device,
                  reduce::L2Flusher& flusher, cudaStream_t stream) {
  constexpr int kRounds = 5, kIters = 20, kWarmup = 2;
  const reduce::Pattern pattern = reduce::Pattern::integers;
  const std::int64_t max_n = std::int64_t{1} << *std::max_element(logs.begin(), logs.end());
  reduce::fits_on_device(max_n, sizeof(float), 0, device);
  std::vector<float> host(max_n);
  reduce::fill_input(host.data(), max_n, pattern, 1);  // each size reads a prefix: the same values
  DeviceBuffer<float> in(max_n);
  CUDA_CHECK(cudaMemcpy(in.get(), host.data(), in.bytes(), cudaMemcpyHostToDevice));
  DeviceBuffer<unsigned long long> slots(std::size_t{32} * device.sm_count);  // 32 blocks per SM at most
  CUDA_CHECK(cudaMemset(slots.get(), 0, slots.bytes()));
  const std::vector<AblationRow> rows = ablation_rows();
  out.line(
      "ablation: float sum, pattern int (every run checked exactly), %d rounds x %d runs per row after %d "
      "warm-up, L2 flushed before each; GB/s of the median, slowest (min) and fastest (max) of all runs; "
      "round_lo/round_hi: the slowest and fastest round's median; vs_a: row a's median time over this row's\n",
      kRounds, kIters, kWarmup);
  out.line("%5s %-3s %-15s %-6s %5s %-6s %6s %11s %9s %9s %9s %9s %7s %s\n", "log2n", "row", "variant", "layout",
           "block", "rule", "grid", "median_GBps", "min_GBps", "max_GBps", "round_lo", "round_hi", "vs_a", "check");
  bool all_passed = true;
  for (int k : logs) {
    const std::int64_t n = std::int64_t{1} << k;
    const reduce::Reference ref = reduce::reference_sum(host.data(), n);
    std::vector<std::vector<double>> ms(rows.size()), round_medians(rows.size());
    std::vector<reduce::LaunchShape> shapes(rows.size());
    std::vector<int> correct(rows.size(), 0);
    std::vector<bool> identical(rows.size(), true);
    std::vector<float> last(rows.size(), 0.0f);
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const reduce::LaunchConfig cfg{rows[r].block, device.ordinal, device.sm_count};
        const reduce::Scratch scratch{slots.get(), slots.bytes()};
        const auto runs = reduce::run_slots<float>(kWarmup, kIters, 1, flusher, stream, [&](float* results, int) {
          return rows[r].launch(in.get(), n, results, scratch, cfg, stream);
        });
        if (round == 0) {  // the launch of one call, from a CUDA graph of it (never run)
          const reduce::DeviceBuffer<float> probe(1);
          shapes[r] = reduce::launch_shape(
              stream, [&](cudaStream_t s) { return rows[r].launch(in.get(), n, probe.get(), scratch, cfg, s); });
        }
        for (int run = 0; run < runs.total(); ++run)
          correct[r] += reduce::check_result(*runs.run(run), ref, n, pattern).passed;
        identical[r] = identical[r] && runs.identical && (round == 0 || *runs.run(0) == last[r]);
        last[r] = *runs.run(runs.total() - 1);
        ms[r].insert(ms[r].end(), runs.ms.begin(), runs.ms.end());
        round_medians[r].push_back(runs.summary.median);
      }
    }
    const double base = reduce::summarize(ms[0]).median;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const reduce::Summary s = reduce::summarize(ms[r]), rounds = reduce::summarize(round_medians[r]);
      const double bytes = n * 4.0;
      const bool passed = correct[r] == kRounds * (kWarmup + kIters) && identical[r];
      all_passed = all_passed && passed;
      out.line("%5d %-3s %-15s %-6s %5d %-6s %6lld %11.1f %9.1f %9.1f %9.1f %9.1f %7.3f %s\n", k, rows[r].id,
               rows[r].name, rows[r].layout, shapes[r].block, rows[r].grid_rule, static_cast<long long>(shapes[r].grid),
               reduce::gbps_of(bytes, s.median), reduce::gbps_of(bytes, s.max), reduce::gbps_of(bytes, s.min),
               reduce::gbps_of(bytes, rounds.max), reduce::gbps_of(bytes, rounds.min), base / s.median,
               passed ? "PASS" : "FAIL");
      reduce::Report rec = out.record(rows[r].name, n, pattern, kRounds * kWarmup, s, shapes[r]);
      rec.runs_correct = correct[r];
      rec.runs_identical = identical[r];
      const reduce::Verdict v(last[r], ref, n, pattern);
      rec.result = v.result;
      rec.reference = v.reference;
      rec.abs_error = v.check.abs_error;
      rec.exact_check = v.check.exact;
      rec.extra.insert(rec.extra.end(),
                       {reduce::text_field("row", rows[r].id), reduce::text_field("layout", rows[r].layout),
                        reduce::text_field("grid_rule", rows[r].grid_rule), reduce::number_field("rounds", kRounds),
                        reduce::number_field("round_lo_gbps", reduce::gbps_of(bytes, rounds.max)),
                        reduce::number_field("round_hi_gbps", reduce::gbps_of(bytes, rounds.min)),
                        reduce::number_field("vs_a", base / s.median)});
      out.emit(rec);
    }
  }
  if (!all_passed)
    std::fprintf(stderr, "perf_variants: ablation: a row gave a wrong or unrepeatable result (check FAIL)\n");
  return all_passed;
}

// perf_variants SET [log2 n ...] [--format json|text]
int run(int argc, char** argv) {
  Out out;
  std::vector<int> logs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--format" || a.rfind("--format=", 0) == 0) {
      const std::string v = a == "--format" ? (i + 1 < argc ? argv[++i] : "") : a.substr(9);
      if (v != "json" && v != "text") throw reduce::UsageError("--format: json or text, got " + reduce::quote(v));
      out.format = v == "text" ? reduce::Format::text : reduce::Format::json;
    } else if (out.set.empty() && i == 1) {
      out.set = a;
    } else {
      char* end = nullptr;
      const long k = std::strtol(a.c_str(), &end, 10);
      if (end == a.c_str() || *end != '\0' || k < 1 || k > 34)
        throw reduce::UsageError("a size is log2 n from 1 to 34, got " + reduce::quote(a));
      logs.push_back(static_cast<int>(k));
    }
  }
  if (out.set != "atomics" && out.set != "latency" && out.set != "tiles" && out.set != "chunks" &&
      out.set != "ablation")
    throw reduce::UsageError(
        "the first argument names a set: atomics, latency, tiles, chunks or ablation "
        "(perf_variants SET [log2 n ...] [--format json|text])");
  out.device = reduce::open_device(0);
  reduce::L2Flusher flusher(out.device);
  reduce::Stream stream;
  const auto sizes = [&](std::vector<int> fallback) { return logs.empty() ? fallback : logs; };
  out.line("set %s: %s, %d SMs, %.1f MB L2, theoretical %.0f GB/s\n", out.set.c_str(), out.device.name.c_str(),
           out.device.sm_count, out.device.l2_bytes / 1e6, out.device.peak_gbps);
  if (out.set == "atomics") set_atomics(out, sizes({20, 24, 26}), flusher, stream.get());
  if (out.set == "latency") set_latency(out, flusher, stream.get(), out.device);
  if (out.set == "tiles") set_tiles(out, sizes({20, 23, 26, 28, 30}), flusher, stream.get());
  if (out.set == "chunks") set_chunks(out, sizes({28, 30}), flusher, stream.get());
  if (out.set == "ablation")
    return set_ablation(out, sizes({16, 18, 20, 22, 24, 26, 28, 30}), out.device, flusher, stream.get()) ? 0 : 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = 0;
  return reduce::guarded_main("perf_variants", n, [&] { return run(argc, argv); });
}
