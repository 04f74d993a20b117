// 13_segmented on the GPU, property-based (tests/property.hpp): layouts generated from seeds, summed by
// step13::launch (each place of the search) and step13::launch_fixed, each twice back to back, and compared
// for exact equality with integer sums. The layouts mix runs of 0-3 floats, runs near each tier bound
// (kThreadMax, kWarpMax, kTile, +-1), segments of a tile +-1 and of several tiles, long runs of empty
// segments, and one or two segments of 10^6-10^7 floats among many short ones; floats before
// offsets[0] and after offsets[S] in no segment; the input 0-3 floats past a 16-byte boundary. The
// input is small integers, so that every partial sum is an exact float in any order; every float in no
// segment is NaN, and so is every output before a launch. One scratch, zero-filled once, serves every
// case of every n in the process, with no re-zeroing, as the contract allows. A failure prints its
// seed and the layout shrunk to the smallest that still fails. Skipped, with the reason, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "13_segmented/segmented.cuh"
#include "device.cuh"
#include "tests/gpu_test_util.hpp"
#include "tests/property.hpp"

namespace {

constexpr std::int64_t kMaxN = std::int64_t{1} << 25;  // floats of the largest case
constexpr std::int64_t kPad = 4;                       // NaN floats before (misalignment) and after the input
constexpr std::int64_t kTile = step13::kTile;

struct Layout {
  std::vector<std::int64_t> lengths;  // the segments' lengths; with `fixed` > 0 each equal to it
  std::int64_t start = 0;             // offsets[0]: the floats before it are in no segment
  std::int64_t tail = 0;              // floats after offsets[S], in no segment
  std::int64_t misalign = 0;          // the input begins this many floats past a 16-byte boundary
  step13::Search search = step13::Search::automatic;
  std::int64_t fixed = 0;  // > 0: step13::launch_fixed with this segment size
  std::uint64_t salt = 0;  // which integers the input holds

  std::int64_t covered() const { return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}); }
  std::int64_t n() const { return start + covered() + tail; }
  bool operator==(const Layout& o) const {
    return lengths == o.lengths && start == o.start && tail == o.tail && misalign == o.misalign && search == o.search &&
           fixed == o.fixed && salt == o.salt;
  }
};

const char* search_name(step13::Search s) {
  return s == step13::Search::kernel ? "kernel" : s == step13::Search::block ? "block" : "automatic";
}

// One line that names the case: its shape, then the lengths run-length encoded ("LxK": K of L floats).
std::string describe(const Layout& c) {
  std::string s = c.fixed > 0 ? "launch_fixed segment_size=" + std::to_string(c.fixed)
                              : std::string("launch search=") + search_name(c.search);
  s += " n=" + std::to_string(c.n()) + " S=" + std::to_string(c.lengths.size()) + " start=" + std::to_string(c.start) +
       " tail=" + std::to_string(c.tail) + " misalign=" + std::to_string(c.misalign) + " lengths=";
  int groups = 0;
  for (std::size_t i = 0; i < c.lengths.size();) {
    std::size_t j = i;
    while (j < c.lengths.size() && c.lengths[j] == c.lengths[i]) ++j;
    if (++groups > 48) {
      s += " ...";
      break;
    }
    s += (i > 0 ? "," : "") + std::to_string(c.lengths[i]) + (j - i > 1 ? "x" + std::to_string(j - i) : "");
    i = j;
  }
  return s;
}

// The integer at float k of a case: |x| <= amp, with amp * (longest segment) < 2^24, so that every sum of
// any of a segment's floats, in any order, is an integer a float holds exactly.
float value(std::uint64_t salt, std::int64_t k, std::int64_t amp) {
  std::uint64_t z = salt + static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<std::int64_t>(z % static_cast<std::uint64_t>(2 * amp + 1)) - amp);
}

// The device side, made once per process: the input, offsets and output buffers, and one scratch for
// kMaxN floats, zero-filled once and then handed to every launch of every n.
class Runner {
 public:
  static Runner& get() {
    static Runner* const runner = new Runner;  // never destroyed: no CUDA call after the runtime's teardown
    return *runner;
  }
  void zero_scratch() { CUDA_CHECK(cudaMemset(scratch_.get(), 0, scratch_.bytes())); }

  // "" when both launches give every segment its exact sum, else what went wrong (a CUDA error too,
  // so that the failure keeps its seed).
  std::string run(const Layout& c) {
    try {
      return run_twice(c);
    } catch (const std::exception& e) {
      return std::string("CUDA error: ") + e.what();
    }
  }

 private:
  Runner() {
    zero_scratch();
    CUDA_CHECK(cudaMemset(in_.get(), 0, in_.bytes()));  // no float is ever read uninitialized
  }
  std::string run_twice(const Layout& c) {
    const std::int64_t n = c.n(), segments = static_cast<std::int64_t>(c.lengths.size());
    const std::int64_t longest = c.lengths.empty() ? 1 : *std::max_element(c.lengths.begin(), c.lengths.end());
    const std::int64_t amp =
        std::clamp<std::int64_t>(((std::int64_t{1} << 24) - 1) / std::max<std::int64_t>(longest, 1), 1, 1000);
    host_.assign(static_cast<std::size_t>(c.misalign + n + kPad), std::numeric_limits<float>::quiet_NaN());
    float* const in = host_.data() + c.misalign;
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(segments) + 1, c.start);
    std::vector<std::int64_t> expect(static_cast<std::size_t>(segments));
    for (std::int64_t s = 0; s < segments; ++s) {
      std::int64_t sum = 0;
      for (std::int64_t k = offsets[s]; k < offsets[s] + c.lengths[s]; ++k)
        sum += static_cast<std::int64_t>(in[k] = value(c.salt, k, amp));
      expect[s] = sum;
      offsets[s + 1] = offsets[s] + c.lengths[s];
    }
    CUDA_CHECK(cudaMemcpy(in_.get(), host_.data(), host_.size() * sizeof(float), cudaMemcpyHostToDevice));
    if (offsets_.size() < offsets.size()) offsets_ = reduce::DeviceBuffer<std::int64_t>(offsets.size() * 2);
    if (out_.size() < expect.size()) out_ = reduce::DeviceBuffer<float>(expect.size() * 2);
    CUDA_CHECK(
        cudaMemcpy(offsets_.get(), offsets.data(), offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a pageable copy may return before its data lands

    std::vector<float> out(expect.size());
    for (int launch = 0; launch < 2; ++launch) {
      if (segments > 0)
        CUDA_CHECK(cudaMemsetAsync(out_.get(), 0xFF, out.size() * sizeof(float), stream_.get()));  // NaN
      const reduce::Scratch sc{scratch_.get(), scratch_.bytes()};
      const cudaError_t e = c.fixed > 0 ? step13::launch_fixed(in_.get() + c.misalign, n, c.fixed, segments, out_.get(),
                                                               sc, stream_.get())
                                        : step13::launch(in_.get() + c.misalign, n, offsets_.get(), segments,
                                                         out_.get(), sc, stream_.get(), c.search);
      if (e != cudaSuccess) return std::string("the launch returned ") + cudaGetErrorString(e);
      if (const cudaError_t s = cudaStreamSynchronize(stream_.get()); s != cudaSuccess)
        return std::string("the kernels failed: ") + cudaGetErrorString(s);
      if (segments > 0)
        CUDA_CHECK(cudaMemcpy(out.data(), out_.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
      std::int64_t wrong = 0, first = -1;
      for (std::int64_t s = 0; s < segments; ++s)
        if (!(out[s] == static_cast<float>(expect[s])) && wrong++ == 0) first = s;
      if (wrong > 0)
        return (launch == 0 ? "first launch: " : "second launch, same scratch: ") + std::to_string(wrong) + " of " +
               std::to_string(segments) + " segments wrong; segment " + std::to_string(first) + " [" +
               std::to_string(offsets[first]) + ", " + std::to_string(offsets[first + 1]) + ") gave " +
               std::to_string(out[first]) + ", exact " + std::to_string(expect[first]);
    }
    return "";
  }

  reduce::DeviceBuffer<float> in_{static_cast<std::size_t>(kMaxN + 2 * kPad)};
  reduce::DeviceBuffer<unsigned char> scratch_{step13::scratch_bytes(kMaxN)};
  reduce::DeviceBuffer<std::int64_t> offsets_;
  reduce::DeviceBuffer<float> out_;
  reduce::Stream stream_;
  std::vector<float> host_;
};

// Lengths from a mixture of runs, up to `budget` floats in all (and at most ~4M segments).
std::vector<std::int64_t> mixed_lengths(prop::Rng& rng, std::int64_t budget) {
  using prop::uniform;
  std::vector<std::int64_t> v;
  std::int64_t total = 0;
  bool full = false;
  const auto add = [&](std::int64_t len) {
    if (total + len > budget) full = true;
    if (full) return;
    v.push_back(len);
    total += len;
  };
  while (!full && v.size() < (std::size_t{1} << 22)) {
    const std::int64_t runs = uniform(rng, 1, 64);
    switch (uniform(rng, 0, 6)) {
      case 0:  // tiny ones: the thread tier
        for (std::int64_t k = uniform(rng, 1, 5000); k > 0; --k) add(uniform(rng, 0, 3));
        break;
      case 1: {  // around a tier's bound
        const std::int64_t bound = prop::pick<std::int64_t>(rng, {step13::kThreadMax, step13::kWarpMax, kTile});
        for (std::int64_t k = runs; k > 0; --k) add(bound + uniform(rng, -1, 1));
        break;
      }
      case 2:  // a tile +-1
        for (std::int64_t k = uniform(rng, 1, 4); k > 0; --k) add(kTile + uniform(rng, -1, 1));
        break;
      case 3:  // several tiles, ending on a tile boundary +-1 or anywhere
        for (std::int64_t k = uniform(rng, 1, 3); k > 0; --k) {
          const std::int64_t whole = uniform(rng, 2, 24) * kTile;
          add(whole + (uniform(rng, 0, 1) ? uniform(rng, -1, 1) : uniform(rng, 1 - kTile, kTile - 1)));
        }
        break;
      case 4:  // empty ones, sometimes more of them than a tile has floats
        for (std::int64_t k = uniform(rng, 0, 1) ? uniform(rng, 1, 40) : uniform(rng, 1, 50000); k > 0; --k) add(0);
        break;
      case 5:  // one just past the thread tier, then empty ones: a batch for all warps
        for (std::int64_t k = runs; k > 0; --k) {
          add(step13::kThreadMax + 1);
          for (int e = uniform(rng, 0, 31); e > 0; --e) add(0);
        }
        break;
      default:  // anything up to a few thousand
        for (std::int64_t k = uniform(rng, 1, 300); k > 0; --k) add(uniform(rng, 0, 5000));
        break;
    }
  }
  return v;
}

// A layout for step13::launch: one of the report's shape (many of 1-3 floats, then one of 10^6-10^7), or a
// mixture of runs of up to 2^23 floats, a quarter of them with one or two of 10^6-10^7 floats among them.
Layout random_layout(prop::Rng& rng, step13::Search search) {
  using prop::uniform;
  Layout c;
  c.search = search;
  c.salt = rng();
  c.misalign = uniform(rng, 0, 3);
  c.start = prop::pick<std::int64_t>(rng, {0, 0, uniform(rng, 1, 3), uniform(rng, 1, 2 * kTile)});
  c.tail = prop::pick<std::int64_t>(rng, {0, 0, uniform(rng, 1, 3), uniform(rng, 1, 2 * kTile)});
  const std::int64_t shape = uniform(rng, 0, 7);
  if (shape == 0) {
    for (std::int64_t k = uniform(rng, 1000, 1000000); k > 0; --k) c.lengths.push_back(uniform(rng, 1, 3));
    c.lengths.push_back(uniform(rng, 1000000, 10000000));
  } else {
    c.lengths = mixed_lengths(rng, uniform(rng, 1, std::int64_t{1} << uniform(rng, 10, 23)));
    if (shape <= 2)
      for (std::int64_t h = uniform(rng, 1, 2); h > 0; --h) {
        const std::int64_t at = uniform(rng, 0, static_cast<std::int64_t>(c.lengths.size()));
        c.lengths.insert(c.lengths.begin() + at, uniform(rng, 1000000, 10000000));
      }
  }
  while (c.n() > kMaxN) c.lengths.pop_back();
  return c;
}

// A layout for step13::launch_fixed: a segment size from short (the one-thread kernels at 4..32 floats
// on aligned input), around each bound, up to 10^7; n leaves 0 to L - 1 floats, or a few, in none.
Layout random_fixed(prop::Rng& rng) {
  using prop::uniform;
  Layout c;
  c.salt = rng();
  c.misalign = uniform(rng, 0, 1) ? 0 : uniform(rng, 1, 3);
  switch (uniform(rng, 0, 6)) {
    case 0:
      c.fixed = uniform(rng, 1, 40);
      break;
    case 1:
      c.fixed = 4 * uniform(rng, 1, 8);
      break;
    case 2:
      c.fixed = prop::pick<std::int64_t>(rng, {step13::kThreadMax, step13::kWarpMax, kTile}) + uniform(rng, -1, 1);
      break;
    case 3:
      c.fixed = uniform(rng, 2, 5) * kTile + uniform(rng, -1, 1);
      break;
    case 4:
      c.fixed = uniform(rng, 1, 3 * kTile);
      break;
    case 5:
      c.fixed = uniform(rng, 100000, 10000000);
      break;
    default:
      c.fixed = uniform(rng, 33, 5000);
      break;
  }
  const std::int64_t budget = std::min(kMaxN - c.fixed, uniform(rng, 1, std::int64_t{1} << uniform(rng, 10, 24)));
  const std::int64_t segments = uniform(rng, 0, 30) == 0 ? 0 : std::max<std::int64_t>(1, budget / c.fixed);
  c.lengths.assign(static_cast<std::size_t>(segments), c.fixed);
  c.tail = prop::pick<std::int64_t>(rng, {0, uniform(rng, 0, c.fixed - 1), uniform(rng, 1, 3)});
  while (c.n() > kMaxN) c.lengths.pop_back();
  return c;
}

// Smaller layouts than c, largest steps first: halves of the segments, merged neighbours, halved
// lengths, one segment fewer; then no misalignment, no floats in no segment.
std::vector<Layout> smaller(const Layout& c) {
  std::vector<Layout> out;
  const auto with = [&](auto change) {
    Layout d = c;
    change(d);
    if (!(d == c)) out.push_back(std::move(d));
  };
  if (c.fixed > 0) {
    with([](Layout& d) { d.lengths.resize(d.lengths.size() / 2); });
    with([](Layout& d) {
      d.fixed = std::max<std::int64_t>(1, d.fixed / 2);
      d.lengths.assign(d.lengths.size(), d.fixed);
    });
    with([](Layout& d) {
      if (!d.lengths.empty()) d.lengths.pop_back();
    });
    with([](Layout& d) {  // one float shorter: from a tile + 1 to a tile, from 33 to 32
      d.fixed = std::max<std::int64_t>(1, d.fixed - 1);
      d.lengths.assign(d.lengths.size(), d.fixed);
    });
  } else {
    const std::size_t singles = c.lengths.size() > 100000 ? 1 : 16;
    for (auto& v : prop::smaller_vectors(c.lengths, singles)) with([&](Layout& d) { d.lengths = std::move(v); });
    with([](Layout& d) {
      std::vector<std::int64_t> merged;
      for (std::size_t i = 0; i < d.lengths.size(); i += 2)
        merged.push_back(d.lengths[i] + (i + 1 < d.lengths.size() ? d.lengths[i + 1] : 0));
      d.lengths = std::move(merged);
    });
    with([](Layout& d) {
      for (std::int64_t& len : d.lengths) len /= 2;
    });
    with([](Layout& d) {
      if (!d.lengths.empty()) *std::max_element(d.lengths.begin(), d.lengths.end()) /= 2;
    });
  }
  with([](Layout& d) { d.misalign = 0; });
  with([](Layout& d) { d.start = 0; });
  with([](Layout& d) { d.tail = 0; });
  with([](Layout& d) { d.start /= 2, d.tail /= 2; });
  return out;
}

// 200 cases (tests/property.hpp: REDUCE_PROPERTY_CASES, REDUCE_PROPERTY_LONG, REDUCE_PROPERTY_SEED).
void expect_property(const std::string& name, const std::function<Layout(prop::Rng&)>& generate) {
  Runner& runner = Runner::get();
  prop::check<Layout>(
      name, 200, generate, [&](const Layout& c) { return runner.run(c); }, smaller, describe);
}

TEST(SegmentedProperty, KernelSearchGivesExactSums) {
  SKIP_WITHOUT_GPU();
  expect_property("launch_kernel_search", [](prop::Rng& rng) { return random_layout(rng, step13::Search::kernel); });
}

TEST(SegmentedProperty, BlockSearchGivesExactSums) {
  SKIP_WITHOUT_GPU();
  expect_property("launch_block_search", [](prop::Rng& rng) { return random_layout(rng, step13::Search::block); });
}

TEST(SegmentedProperty, AutomaticSearchGivesExactSums) {
  SKIP_WITHOUT_GPU();
  expect_property("launch_automatic_search",
                  [](prop::Rng& rng) { return random_layout(rng, step13::Search::automatic); });
}

TEST(SegmentedProperty, FixedSizeGivesExactSums) {
  SKIP_WITHOUT_GPU();
  expect_property("launch_fixed", random_fixed);
}

// The reported layout: 1,000,000 segments of 1 to 3 floats, then one of 5,000,001, with offsets[0] 0 to
// 3, by default search. On a fresh scratch; then after a launch on a larger n with the search kernel,
// whose tile starts stay in the scratch: where the counts of parts were placed by n, this launch's count
// began on them, and the long segment was never written (nor on the next launch on the same scratch).
TEST(SegmentedProperty, LongSegmentAfterAMillionShortOnes) {
  SKIP_WITHOUT_GPU();
  Runner& runner = Runner::get();
  const auto reported = [](std::int64_t start) {
    Layout c;
    c.start = start;
    c.salt = 44;
    for (std::int64_t k = 0; k < 1000000; ++k) c.lengths.push_back(1 + (k * 7 + k / 5) % 3);
    c.lengths.push_back(5000001);
    return c;
  };
  runner.zero_scratch();
  EXPECT_EQ(runner.run(reported(0)), "") << "on a fresh scratch";
  Layout before;  // many short segments over kMaxN floats, the search in its own kernel
  before.search = step13::Search::kernel;
  before.salt = 45;
  while (before.n() + 200 <= kMaxN)
    before.lengths.push_back(static_cast<std::int64_t>(before.lengths.size() * 37 % 201));
  EXPECT_EQ(runner.run(before), "") << "the launch before, on a larger n";
  for (std::int64_t start = 0; start < 4; ++start)
    EXPECT_EQ(runner.run(reported(start)), "") << "offsets[0] = " << start << ", after a launch on a larger n";
}

}  // namespace
