// Step 14 as a property (tests/property.hpp): cases drawn from seeds, n from 0 to 2^24 and past it
// (mostly small, often at an edge: 2^k +- a few, whole rounds, slices and tiles +- a few), any block
// size (32 ... 1024), any grid (1, a few, the device's worth +- 1, beyond it, or the step's own), the
// input 0-3 floats past an aligned address, and the tiles summed at times in 1 to 9 shards (the
// multi-GPU halves, virtual ranks on one GPU). The step's claim: the bits depend on the input alone.
// So every launch must give the bits of the single launch with the default configuration on an
// aligned copy, and those are the CPU model's (order.hpp) to the last bit (any NaN for a NaN: the two
// processors make different NaN payloads), and the exact sum where the inputs are small integers.
// The scratch is shared by the launches of a case and must come back zero. Skipped, with the reason,
// without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"
#include "14_reproducible/reproducible.cuh"
#include "device.cuh"
#include "exact_sum.hpp"
#include "input.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/property.hpp"

namespace {

using reduce::Pattern;

constexpr std::int64_t kMaxN = (std::int64_t{1} << 24) + 64;
constexpr int kDefaultBlock = 512;  // kStep.block's default
const std::vector<int> kBlocks = {32, 64, 128, 256, 512, 1024};

struct Case {
  Pattern pattern = Pattern::integers;
  bool mirrored = false;  // the first half's values, scaled by 2^20, subtracted from the second's
  std::uint64_t seed = 0;
  std::int64_t first = 0;  // the input is elements first .. first + n - 1 of the pattern
  std::int64_t n = 0;
  int offset = 0;  // floats between an aligned allocation and the input
  int block = kDefaultBlock;
  std::int64_t grid = 0;  // 0: the step's own
  int ranks = 0;          // > 0: also summed in that many shards and combined apart
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "n=" << c.n << " offset=" << c.offset << " block=" << c.block << " grid=" << c.grid << " ranks=" << c.ranks
    << " pattern=" << reduce::to_string(c.pattern) << (c.mirrored ? " mirrored" : "") << " seed=" << c.seed
    << " first=" << c.first;
  return s.str();
}

// Mirrored inputs cancel almost entirely: the exact sum is tiny next to sum |x|, so any change of
// grouping shows in the low bits.
std::vector<float> input_of(const Case& c) {
  std::vector<float> x(static_cast<std::size_t>(c.n));
  reduce::fill_input_at(x.data(), c.first, c.n, c.pattern, c.seed);
  if (c.mirrored)
    for (std::int64_t i = 0; i < c.n / 2; ++i) {
      x[i] *= 1048576.0f;
      x[c.n - 1 - i] -= x[i];
    }
  return x;
}

// n skewed to where the order changes shape: tiny inputs, powers of two +- a few (the tile size
// steps there), multiples of a round, a slice or a tile +- a few, and the rest log-uniform.
std::int64_t random_n(prop::Rng& rng) {
  const auto near = [&](std::int64_t v) { return std::clamp<std::int64_t>(v + prop::uniform(rng, -4, 4), 0, kMaxN); };
  switch (prop::uniform(rng, 0, 3)) {
    case 0:
      return prop::uniform(rng, 0, 600);
    case 1:
      return near(std::int64_t{1} << prop::uniform(rng, 0, 24));
    case 2: {
      const std::int64_t size = std::int64_t{1} << prop::uniform(rng, 24 - 10, 24);  // a round is 2^9, tiles go to 2^14
      const std::int64_t unit = step14::tile_elements(size) >> prop::uniform(rng, 0, step14::kLog2Slices + 1);
      return near(unit * prop::uniform(rng, 1, std::max<std::int64_t>(1, size / unit)));
    }
    default:
      return std::clamp<std::int64_t>(std::llround(std::exp2(std::uniform_real_distribution<double>(0, 24)(rng))), 1,
                                      kMaxN);
  }
}

// worth[k]: the device's worth of blocks of kBlocks[k] threads (SMs x resident blocks per SM).
Case generate(prop::Rng& rng, const std::vector<std::int64_t>& worth) {
  static const std::vector<Pattern> patterns = {Pattern::integers, Pattern::integers, Pattern::mixed,
                                                Pattern::uniform,  Pattern::constant, Pattern::ties,
                                                Pattern::limits,   Pattern::nan,      Pattern::inf};
  Case c;
  c.pattern = prop::pick(rng, patterns);
  c.mirrored = c.pattern == Pattern::mixed && prop::uniform(rng, 0, 1) == 0;
  c.seed = static_cast<std::uint64_t>(prop::uniform(rng, 1, 1 << 30));
  c.n = random_n(rng);
  c.offset = static_cast<int>(prop::uniform(rng, 0, 3));
  const std::size_t b = static_cast<std::size_t>(prop::uniform(rng, 0, static_cast<std::int64_t>(kBlocks.size()) - 1));
  c.block = kBlocks[b];
  const std::int64_t w = worth[b];
  switch (prop::uniform(rng, 0, 7)) {
    case 0:
      c.grid = 0;
      break;
    case 1:
      c.grid = 1;
      break;
    case 2:
      c.grid = prop::uniform(rng, 2, 16);
      break;
    case 3:
      c.grid = std::max<std::int64_t>(1, w + prop::uniform(rng, -1, 1));
      break;
    case 4:
      c.grid = prop::uniform(rng, w + 1, 4 * w);
      break;  // more blocks than fit at once
    case 5:
      c.grid = prop::uniform(rng, 0, 9) == 0 ? prop::uniform(rng, 1 << 16, (1 << 16) + 100) : prop::uniform(rng, 1, 64);
      break;
    default:
      c.grid = prop::uniform(rng, 1, w);
      break;
  }
  if (prop::uniform(rng, 0, 3) == 0) c.ranks = static_cast<int>(prop::uniform(rng, 1, 9));
  return c;
}

// Simpler cases that may still fail: aligned, no shards, the default block, not mirrored, a smaller
// grid, a smaller window of the input; last the step's own grid (tried late: it grows as n shrinks, so
// a failure that needs more tiles than blocks would stop at a large n).
std::vector<Case> smaller(const Case& c) {
  if (reduce_test::gpu_context_lost()) return {};  // every case fails now: shrinking would mislead
  prop::Candidates<Case> out(c);
  if (c.offset != 0) out.add([](Case& d) { d.offset = 0; });
  if (c.ranks != 0) out.add([](Case& d) { d.ranks = 0; });
  if (c.block != kDefaultBlock) out.add([](Case& d) { d.block = kDefaultBlock; });
  if (c.mirrored) out.add([](Case& d) { d.mirrored = false; });
  for (std::int64_t g : prop::smaller_sizes(c.grid))
    if (g > 0) out.add([&](Case& d) { d.grid = g; });
  for (const prop::Window& w : prop::smaller_windows(c.first, c.n))
    out.add([&](Case& d) { d.first = w.first, d.n = w.n; });
  if (c.grid != 0) out.add([](Case& d) { d.grid = 0; });
  return out.take();
}

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The tiles summed in `ranks` shards, each from its own buffer and with the case's launch, the tile
// sums combined apart (the multi-GPU API, all on this GPU).
float sum_in_shards(const std::vector<float>& x, const Case& c, const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  const std::int64_t n = c.n;
  reduce::DeviceBuffer<float> sums(std::max<std::int64_t>(step14::num_tiles(n), 1)), out(1);
  std::vector<reduce::DeviceBuffer<float>> shards;
  for (int r = 0; r < c.ranks; ++r) {
    const step14::TileRange t = step14::shard_tiles(n, c.ranks, r);
    const std::int64_t count = step14::shard_elements(n, t);
    shards.emplace_back(count);
    if (count > 0)
      CUDA_CHECK(cudaMemcpyAsync(shards.back().get(), x.data() + step14::shard_begin(n, t), count * sizeof(float),
                                 cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(step14::sum_shard_tiles(shards.back().get(), n, t.first, t.count, sums.get() + t.first, cfg, stream));
  }
  CUDA_CHECK(step14::combine_tile_sums(sums.get(), n, out.get(), stream));
  float got = 0;
  CUDA_CHECK(cudaMemcpyAsync(&got, out.get(), sizeof got, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return got;
}

std::string verify(const Case& c, int sms) {
  const std::int64_t n = c.n;
  const std::vector<float> x = input_of(c);
  const reduce::LaunchConfig chosen{c.block, 0, sms, c.grid}, standard{kDefaultBlock, 0, sms, 0};
  const std::size_t bytes = step14::scratch_bytes(n, chosen);
  reduce::DeviceBuffer<float> aligned(n), shifted(n + c.offset), out(2);
  reduce::DeviceBuffer<unsigned char> scratch(bytes);
  reduce::Stream stream;
  if (n > 0) {
    CUDA_CHECK(cudaMemcpyAsync(aligned.get(), x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream.get()));
    CUDA_CHECK(
        cudaMemcpyAsync(shifted.get() + c.offset, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream.get()));
  }
  CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, bytes, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream.get()));  // NaN: an unwritten result fails
  CUDA_CHECK(step14::launch(aligned.get(), n, out.get(), {scratch.get(), bytes}, standard, stream.get()));
  CUDA_CHECK(step14::launch(shifted.get() + c.offset, n, out.get() + 1, {scratch.get(), bytes}, chosen, stream.get()));
  float got[2];
  std::vector<unsigned char> back(bytes);
  CUDA_CHECK(cudaMemcpyAsync(got, out.get(), sizeof got, cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaMemcpyAsync(back.data(), scratch.get(), bytes, cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  std::ostringstream why;
  const float single = got[0], model = step14::model_sum(x.data(), n);
  if (bits_of(got[1]) != bits_of(single))
    why << "this launch gave " << step14::bits_text(got[1]) << ", the default launch " << step14::bits_text(single)
        << "; ";
  if (c.ranks > 0) {
    const float shards = sum_in_shards(x, c, chosen, stream.get());
    if (bits_of(shards) != bits_of(single))
      why << c.ranks << " shards gave " << step14::bits_text(shards) << ", the single launch "
          << step14::bits_text(single) << "; ";
  }
  if (std::isnan(model) ? !std::isnan(single) : bits_of(model) != bits_of(single))
    why << "the single launch gave " << step14::bits_text(single) << ", the order's model " << step14::bits_text(model)
        << "; ";
  // Small integers: sum |x| at most 2^24 bounds every partial sum, so every order's sum is exact.
  if (c.pattern == Pattern::integers && !c.mirrored && 4 * n <= (1 << 24)) {
    const float exact = reduce::exact_sum(x.data(), n).to_float();
    if (single != exact) why << "the single launch gave " << single << ", the exact sum " << exact << "; ";
  }
  if (std::any_of(back.begin(), back.end(), [](unsigned char b) { return b != 0; }))
    why << "the launches left the scratch non-zero; ";
  if (!reduce::device_equals_host(shifted.get() + c.offset, x.data(), n)) why << "the input was modified; ";
  return why.str();
}

TEST(ReproducibleProperty, AnyLaunchGivesTheDefaultLaunchsAndTheModelsBits) {
  SKIP_WITHOUT_GPU();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  std::vector<std::int64_t> worth(kBlocks.size());
  for (std::size_t k = 0; k < kBlocks.size(); ++k)  // 2^50 elements: enough tiles to fill any GPU
    ASSERT_EQ(step14::default_grid(std::int64_t{1} << 50, reduce::LaunchConfig{kBlocks[k], 0, sms}, &worth[k]),
              cudaSuccess);
  prop::check<Case>(
      "14_reproducible", 240, [&](prop::Rng& rng) { return generate(rng, worth); },
      [&](const Case& c) { return reduce_test::verify_on_gpu([&] { return verify(c, sms); }); }, smaller, describe);
}

}  // namespace
