#include "input.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "report.hpp"  // summarize()

namespace reduce {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Runs body(begin, end) over [0, n) split into contiguous slices, one per hardware thread.
template <typename Body>
void parallel_for(std::int64_t n, Body body) {
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::int64_t slices = std::min<std::int64_t>(threads, std::max<std::int64_t>(1, n / (1 << 16)));
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < slices; ++t)
    pool.emplace_back([=] { body(n * t / slices, n * (t + 1) / slices); });
  for (auto& th : pool) th.join();
}

constexpr std::int64_t kChunk = std::int64_t{1} << 16;

}  // namespace

float pattern_value(Pattern p, std::uint64_t seed, std::int64_t i) {
  const std::uint64_t h = splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(i));
  const float u24 = static_cast<float>(h >> 40) * 0x1.0p-24f;  // 24 random bits: exact in float
  switch (p) {
    case Pattern::constant: return 1.0f;
    case Pattern::integers: {
      const int k = static_cast<int>(h >> 61);  // 0..7
      return static_cast<float>(k < 4 ? k - 4 : k - 3);  // -4..-1, 1..4
    }
    case Pattern::uniform: return u24;
    case Pattern::mixed: return 2.0f * u24 - 1.0f;
  }
  return 0.0f;
}

void fill_input(float* out, std::int64_t n, Pattern p, std::uint64_t seed) { fill_input_at(out, 0, n, p, seed); }

void fill_input_at(float* out, std::int64_t first, std::int64_t n, Pattern p, std::uint64_t seed) {
  parallel_for(n, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) out[i] = pattern_value(p, seed, first + i);
  });
}

Reference reference_sum(const float* x, std::int64_t n) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> sums(chunks), abs_sums(chunks);
  parallel_for(chunks, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      double s = 0.0, a = 0.0;
      for (std::int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
        s += x[i];
        a += std::fabs(static_cast<double>(x[i]));
      }
      sums[c] = s;
      abs_sums[c] = a;
    }
  });
  Reference r;
  for (std::int64_t c = 0; c < chunks; ++c) {
    r.sum += sums[c];
    r.abs_sum += abs_sums[c];
  }
  return r;
}

double time_cpu_sum(const float* x, std::int64_t n, int runs, float* result) {
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    float s = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) s += x[i];
    const auto t1 = std::chrono::steady_clock::now();
    *static_cast<volatile float*>(result) = s;  // keeps the loop alive
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return summarize(ms).median;
}

double time_cpu_sum_parallel(const float* x, std::int64_t n, int runs, float* result, int* threads) {
#ifdef _OPENMP
  *threads = omp_get_max_threads();
#else
  *threads = 1;
#endif
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) s += x[i];
    const auto t1 = std::chrono::steady_clock::now();
    *static_cast<volatile float*>(result) = s;
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return summarize(ms).median;
}

double tolerance_for(std::int64_t n, double abs_sum) {
  const double u = 0x1.0p-24;
  const double chain = 2.0 * std::sqrt(static_cast<double>(n)) + 64.0;
  return u * chain * abs_sum;
}

bool uses_exact_check(Pattern p, const Reference& ref) {
  // The int pattern's sum must itself be a float integer for an exact comparison to be fair.
  return p == Pattern::integers && std::fabs(ref.sum) <= 0x1.0p24;
}

Check check_result(float gpu, const Reference& ref, std::int64_t n, Pattern p) {
  Check c;
  c.exact = uses_exact_check(p, ref);
  c.tolerance = c.exact ? 0.0 : tolerance_for(n, ref.abs_sum);
  c.abs_error = std::fabs(static_cast<double>(gpu) - ref.sum);
  // Written so that NaN fails: every comparison with NaN is false.
  c.passed = std::isfinite(gpu) && c.abs_error <= c.tolerance;
  return c;
}

}  // namespace reduce
