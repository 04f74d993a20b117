// Step 14 on the GPU: the same bits for every grid from 1 to 4 x the SM count and every block size
// (and those bits are the CPU model's, order.hpp), while step 10's bits change with the launch; the
// same bits for misaligned starts, and for the tiles summed in shards (any split on tile boundaries)
// and combined apart; n > 2^31; NaN and infinities; the input untouched and the scratch left
// zero. Every test skips, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "14_reproducible/bits.hpp"
#include "14_reproducible/cub_gpu_to_gpu.hpp"
#include "14_reproducible/reproducible.cuh"
#include "device.cuh"
#include "exact_sum.hpp"
#include "input.hpp"
#include "steps.hpp"  // step10::kStep
#include "tests/gpu_test_util.hpp"

namespace {

using reduce::Pattern;

int sm_count() {
  int sms = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return sms;
}

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The patterns of the grid test: the suite's, plus one whose terms cancel almost entirely: the first
// half holds large values, the second half their negatives (in reverse order) plus a small term, so
// the exact sum is tiny next to sum |x| and any change of grouping shows in the low bits.
enum class Kind { uniform, mixed, integers, cancelling };
const char* name_of(Kind k) {
  switch (k) {
    case Kind::uniform:
      return "uniform";
    case Kind::mixed:
      return "mixed";
    case Kind::integers:
      return "int";
    case Kind::cancelling:
      return "cancelling";
  }
  return "?";
}
std::vector<float> make_input(std::int64_t n, Kind k, std::uint64_t seed = 12345) {
  std::vector<float> x(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  switch (k) {
    case Kind::uniform:
      reduce::fill_input(x.data(), n, Pattern::uniform, seed);
      break;
    case Kind::mixed:
      reduce::fill_input(x.data(), n, Pattern::mixed, seed);
      break;
    case Kind::integers:
      reduce::fill_input(x.data(), n, Pattern::integers, seed);
      break;
    case Kind::cancelling:
      reduce::fill_input(x.data(), n, Pattern::mixed, seed);
      for (std::int64_t i = 0; i < n / 2; ++i) {
        const float big = x[i] * 1048576.0f;
        x[n - 1 - i] = x[n - 1 - i] - big;
        x[i] = big;
      }
      break;
  }
  return x;
}

// A device copy of an input, padded so that it can start `offset` floats into its buffer.
struct DeviceInput {
  reduce::DeviceBuffer<float> buffer;
  std::int64_t offset;
  DeviceInput(const std::vector<float>& host, std::int64_t n, std::int64_t off = 0) : buffer(n + off + 1), offset(off) {
    if (n > 0) CUDA_CHECK(cudaMemcpy(buffer.get() + off, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  const float* get() const { return buffer.get() + offset; }
};

// Runs every configuration on one shared, zero-filled scratch, one output slot each, and returns the
// results in order. The scratch must come back zero-filled after every run (checked at the end).
std::vector<float> run_all(const reduce::Step& step, const float* in, std::int64_t n,
                           const std::vector<reduce::LaunchConfig>& cfgs) {
  std::size_t bytes = 1;
  for (const auto& c : cfgs) bytes = std::max(bytes, step.scratch_bytes(n, c));
  reduce::DeviceBuffer<unsigned char> scratch(bytes);
  reduce::DeviceBuffer<float> out(cfgs.size());
  reduce::Stream stream;
  CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, bytes, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream.get()));  // NaN: an unwritten slot fails
  for (std::size_t k = 0; k < cfgs.size(); ++k)
    CUDA_CHECK(step.launch(in, n, out.get() + k, {scratch.get(), bytes}, cfgs[k], stream.get()));
  std::vector<float> results(cfgs.size());
  CUDA_CHECK(cudaMemcpyAsync(results.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  if (step.needs_zeroed_scratch) {
    std::vector<unsigned char> back(bytes);
    CUDA_CHECK(cudaMemcpy(back.data(), scratch.get(), bytes, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0; }))
        << step.name << " left its scratch non-zero (n=" << n << ")";
  }
  return results;
}

const int kBlocks[] = {32, 64, 128, 256, 512, 1024};

// Every grid from 1 to 4 x the SM count with every block size: 3168 launches on a 132-SM GPU. Even
// the largest size runs them all: a one-warp grid reads 2^25 floats in tens of milliseconds, and the
// whole sweep of one input takes well under a second.
std::vector<reduce::LaunchConfig> every_grid_and_block() {
  const int sms = sm_count();
  std::vector<reduce::LaunchConfig> cfgs;
  for (int block : kBlocks)
    for (int grid = 1; grid <= 4 * sms; ++grid) cfgs.push_back(reduce::LaunchConfig{block, 0, sms, grid});
  for (int block : kBlocks) cfgs.push_back(reduce::LaunchConfig{block, 0, sms, 0});  // the default grid too
  return cfgs;
}

class GridAndBlock : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(GridAndBlock, GiveTheModelsBitsForEveryPattern) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = GetParam();
  const auto cfgs = every_grid_and_block();
  for (Kind k : {Kind::uniform, Kind::mixed, Kind::integers, Kind::cancelling}) {
    const std::vector<float> host = make_input(n, k);
    const float model = step14::model_sum(host.data(), n);
    DeviceInput in(host, n);
    const std::vector<float> got = run_all(step14::kStep, in.get(), n, cfgs);
    int differ = 0;
    for (std::size_t c = 0; c < cfgs.size(); ++c)
      if (bits_of(got[c]) != bits_of(model) && differ++ < 3)
        ADD_FAILURE() << "n=" << n << " " << name_of(k) << " grid=" << cfgs[c].grid << " block=" << cfgs[c].block
                      << ": " << step14::bits_text(got[c]) << " (" << got[c] << "), the order's model gives "
                      << step14::bits_text(model) << " (" << model << ")";
    EXPECT_EQ(differ, 0) << "n=" << n << " " << name_of(k) << ": " << differ << " of " << cfgs.size()
                         << " launches differ";
    if (k == Kind::integers) EXPECT_EQ(model, reduce::exact_sum(host.data(), n).to_float()) << "n=" << n;
  }
}

// 2^25 + 7 floats (134 MB) is larger than the L2 of the H100 (50 MB) and the H200 (60 MB).
INSTANTIATE_TEST_SUITE_P(Sizes, GridAndBlock,
                         ::testing::Values(1, 31, 4097, (1 << 20) + 3, (1 << 24) - 1, (1 << 25) + 7),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

// The default grid: one block per tile up to what fits on the device at once (resident blocks per SM x
// SMs), past that the fewest rounds of tiles with the tiles spread evenly over the blocks; at least
// one block.
TEST(Grid, OneBlockPerTileAtMostTheDevicesWorthTilesSpreadEvenly) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  std::int64_t full = 0, grid = 0;
  // 2^30 tiles (n = 2^50, only counted): the even spread over the fewest rounds is then exactly the
  // device's worth, SMs x resident blocks per SM, for any GPU of fewer than 2^15 resident blocks.
  ASSERT_EQ(step14::default_grid(std::int64_t{1} << 50, reduce::LaunchConfig{512, 0, sms}, &full), cudaSuccess);
  EXPECT_GE(full, sms);
  EXPECT_EQ(full % sms, 0);
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{100003}, std::int64_t{1} << 22,
                         std::int64_t{1} << 26, (std::int64_t{1} << 30) + 1}) {
    ASSERT_EQ(step14::default_grid(n, reduce::LaunchConfig{512, 0, sms}, &grid), cudaSuccess);
    const std::int64_t tiles = std::max<std::int64_t>(step14::num_tiles(n), 1), rounds = reduce::ceil_div(tiles, full);
    EXPECT_LE(grid, full) << "n=" << n;
    EXPECT_EQ(grid, reduce::ceil_div(tiles, rounds))
        << "n=" << n << ": " << tiles << " tiles in " << rounds << " rounds";
    // Every block sums `rounds` tiles or one fewer.
    EXPECT_GE(grid * rounds, tiles) << "n=" << n;
    EXPECT_LT(grid * (rounds - 1), tiles) << "n=" << n;
  }
}

// The lesson: step 10's grouping follows its launch, so its bits change with the block size and with
// the SM count it is told (its grid is SMs x resident blocks per SM). This step's do not.
TEST(Lesson, Step10BitsChangeWithTheLaunchAndThisStepsDoNot) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (1 << 24) - 1;
  const std::vector<float> host = make_input(n, Kind::uniform);
  DeviceInput in(host, n);
  const int sms = sm_count();
  std::vector<reduce::LaunchConfig> cfgs;
  for (int block : {128, 256, 512, 1024})
    for (int imitated = 1; imitated <= sms; imitated += (imitated < 8 ? 1 : 8))  // GPUs with 1 ... sms SMs
      cfgs.push_back(reduce::LaunchConfig{block, 0, imitated});
  std::set<std::uint32_t> ten, mine;
  for (float v : run_all(step10::kStep, in.get(), n, cfgs)) ten.insert(bits_of(v));
  // This step imitates another GPU through its grid: SMs x resident blocks per SM.
  for (auto& c : cfgs) ASSERT_EQ(step14::default_grid(n, c, &c.grid), cudaSuccess);
  for (float v : run_all(step14::kStep, in.get(), n, cfgs)) mine.insert(bits_of(v));
  std::cout << "[ lesson ] n=" << n << " uniform, " << cfgs.size() << " launch shapes: step 10 gave " << ten.size()
            << " different results, 14_reproducible " << mine.size() << std::endl;
  EXPECT_GE(ten.size(), 2u) << "step 10's bits did not change with its launch: the lesson has no evidence";
  EXPECT_EQ(mine.size(), 1u);
}

// Misaligned starts (a sub-array): scalar loads, the same order, the same bits as an aligned copy.
TEST(Alignment, MisalignedStartsGiveTheAlignedBits) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  for (std::int64_t n : {1, 3, 5, 1000, 4097, 100003, (1 << 20) + 3}) {
    const std::vector<float> host = make_input(n, Kind::mixed);
    const float model = step14::model_sum(host.data(), n);
    std::vector<reduce::LaunchConfig> cfgs;
    for (int block : {32, 512}) {
      cfgs.push_back(reduce::LaunchConfig{block, 0, sms, 0});
      cfgs.push_back(reduce::LaunchConfig{block, 0, sms, 7});
    }
    for (std::int64_t offset : {0, 1, 2, 3}) {
      DeviceInput in(host, n, offset);
      for (float v : run_all(step14::kStep, in.get(), n, cfgs))
        EXPECT_EQ(bits_of(v), bits_of(model)) << "n=" << n << " offset=" << offset << ": " << v << " vs " << model;
    }
  }
}

// The two halves of the multi-GPU API: the tiles summed in 1 to 8 shards, each from its own buffer
// (sum_shard_tiles), the tile sums put side by side and combined by one block (combine_tile_sums):
// the single launch's bits, whatever the split, at sizes that are not multiples of the tile or of the
// shard count, and with fewer tiles than shards.
TEST(Shards, TilesSummedInShardsAndCombinedGiveTheSingleLaunchsBits) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{100003}, std::int64_t{(1 << 22) + 3},
                         std::int64_t{(1 << 24) + 5}, std::int64_t{(1 << 25) + 7}}) {
    const std::vector<float> host = make_input(n, Kind::cancelling);
    const float model = step14::model_sum(host.data(), n);
    const std::int64_t tiles = step14::num_tiles(n);
    for (int ranks = 1; ranks <= 8; ++ranks) {
      reduce::DeviceBuffer<float> sums(tiles), out(1);
      reduce::Stream stream;
      std::vector<reduce::DeviceBuffer<float>> shards;
      for (int r = 0; r < ranks; ++r) {
        const step14::TileRange t = step14::shard_tiles(n, ranks, r);
        const std::int64_t count = step14::shard_elements(n, t);
        shards.emplace_back(count);
        // On the kernels' stream: a pageable cudaMemcpy may return before its data lands, and the
        // legacy stream it runs on does not order the non-blocking stream's kernels after it.
        if (count > 0)
          CUDA_CHECK(cudaMemcpyAsync(shards.back().get(), host.data() + step14::shard_begin(n, t),
                                     count * sizeof(float), cudaMemcpyHostToDevice, stream.get()));
        const reduce::LaunchConfig cfg{r % 2 ? 128 : 512, 0, sms, r == 2 ? 3 : 0};  // launch shapes vary too
        ASSERT_EQ(
            step14::sum_shard_tiles(shards.back().get(), n, t.first, t.count, sums.get() + t.first, cfg, stream.get()),
            cudaSuccess);
      }
      ASSERT_EQ(step14::combine_tile_sums(sums.get(), n, out.get(), stream.get()), cudaSuccess);
      float got = 0;
      CUDA_CHECK(cudaMemcpyAsync(&got, out.get(), sizeof got, cudaMemcpyDeviceToHost, stream.get()));
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      EXPECT_EQ(bits_of(got), bits_of(model)) << "n=" << n << " shards=" << ranks << ": " << got << " vs " << model;
    }
  }
}

// NaN and infinities propagate as in step 10: any NaN gives NaN, both infinities NaN, one sign of
// infinity that infinity.
TEST(SpecialValues, PropagateAsIeeeAdditionDoes) {
  SKIP_WITHOUT_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  const int sms = sm_count();
  std::vector<reduce::LaunchConfig> cfgs;
  for (int grid = 0; grid <= 8; ++grid) cfgs.push_back(reduce::LaunchConfig{256, 0, sms, grid});
  for (std::int64_t n : {100003, (1 << 20) + 3}) {
    for (Pattern p : {Pattern::nan, Pattern::inf}) {
      std::vector<float> host(n);
      reduce::fill_input(host.data(), n, p, 1);
      DeviceInput in(host, n);
      for (float v : run_all(step14::kStep, in.get(), n, cfgs))
        EXPECT_TRUE(std::isnan(v)) << to_string(p) << " n=" << n << ": " << v;
    }
    std::vector<float> host = make_input(n, Kind::mixed);
    host[n / 3] = inf;
    DeviceInput plus(host, n);
    for (float v : run_all(step14::kStep, plus.get(), n, cfgs)) EXPECT_EQ(v, inf) << "n=" << n;
    host[n / 3] = -inf;
    host[n - 1] = -inf;
    DeviceInput minus(host, n);
    for (float v : run_all(step14::kStep, minus.get(), n, cfgs)) EXPECT_EQ(v, -inf) << "n=" << n;
  }
}

// Each size's runs come back with the scratch zero-filled (run_all checks it), the input is never
// written, and n = 0 gives +0.
TEST(Contract, InputUnchangedScratchZeroedEmptyIsZero) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  for (std::int64_t n : {0, 1, 1025, 300007, (1 << 22) + 3}) {
    const std::vector<float> host = make_input(n, Kind::uniform);
    DeviceInput in(host, n);
    const auto got =
        run_all(step14::kStep, in.get(), n, {reduce::LaunchConfig{512, 0, sms}, reduce::LaunchConfig{64, 0, sms, 3}});
    for (float v : got) EXPECT_EQ(bits_of(v), bits_of(step14::model_sum(host.data(), n))) << "n=" << n;
    if (n == 0) EXPECT_EQ(bits_of(got[0]), 0u);
    EXPECT_TRUE(reduce::device_equals_host(in.get(), host.data(), n)) << "n=" << n << ": the input was modified";
  }
}

// One scratch for launches of several sizes and two block sizes in turn, small to large and back:
// every launch leaves the whole scratch empty, whatever its n and whatever ran before it.
TEST(Contract, OneScratchServesEverySize) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  const std::vector<std::int64_t> sizes = {1000, (1 << 24) + 5, 4097, (1 << 22) + 3, 1, (1 << 24) + 5, 1000};
  const reduce::LaunchConfig cfgs[] = {{256, 0, sms}, {512, 0, sms, 5}};
  std::size_t bytes = 1;
  for (std::int64_t n : sizes) bytes = std::max(bytes, step14::scratch_bytes(n, cfgs[0]));
  const std::vector<float> host = make_input(sizes[1], Kind::cancelling);
  DeviceInput in(host, sizes[1]);
  reduce::DeviceBuffer<unsigned char> scratch(bytes);
  reduce::DeviceBuffer<float> out(2 * sizes.size());
  reduce::Stream stream;
  CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, bytes, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream.get()));  // NaN: an unwritten slot fails
  for (std::size_t k = 0; k < 2 * sizes.size(); ++k)
    CUDA_CHECK(
        step14::launch(in.get(), sizes[k / 2], out.get() + k, {scratch.get(), bytes}, cfgs[k % 2], stream.get()));
  std::vector<float> got(2 * sizes.size());
  CUDA_CHECK(cudaMemcpyAsync(got.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  for (std::size_t k = 0; k < got.size(); ++k) {
    const std::int64_t n = sizes[k / 2];
    EXPECT_EQ(bits_of(got[k]), bits_of(step14::model_sum(host.data(), n)))
        << "n=" << n << " block=" << cfgs[k % 2].block << " (launch " << k << " on the shared scratch)";
  }
  std::vector<unsigned char> back(bytes);
  CUDA_CHECK(cudaMemcpy(back.data(), scratch.get(), bytes, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0; }))
      << "the scratch is not empty after the last launch";
}

// CUB's reproducible sum, where this build has it (-DCCCL_DIR=... to a CCCL 3.5): within the suite's
// tolerance of the exact sum, and the same bits at every call.
TEST(CubGpuToGpu, WithinToleranceAndRepeatable) {
  SKIP_WITHOUT_GPU();
  if (!step14::cub_g2g::available()) GTEST_SKIP() << step14::cub_g2g::why_absent();
  const std::int64_t n = (1 << 24) - 1;
  const std::vector<float> host = make_input(n, Kind::mixed);
  DeviceInput in(host, n);
  reduce::DeviceBuffer<float> out(2);
  reduce::Stream stream;
  for (int k = 0; k < 2; ++k) ASSERT_EQ(step14::cub_g2g::sum(in.get(), n, out.get() + k, stream.get()), cudaSuccess);
  float got[2];
  CUDA_CHECK(cudaMemcpyAsync(got, out.get(), sizeof got, cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const reduce::Reference ref = reduce::reference_sum(host.data(), n);
  EXPECT_TRUE(reduce::check_result(got[0], ref, n, Pattern::mixed).passed) << got[0] << " vs " << ref.sum;
  EXPECT_EQ(bits_of(got[0]), bits_of(got[1]));
}

// More than 2^31 elements: 64-bit tiles and indices; exact for the int pattern, the model's bits, at
// two launch shapes. About 9 GB of device and host memory: runs alone.
TEST(HugeInput, SumsMoreThan2To31Elements) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 1025;
  SKIP_WITHOUT_DEVICE_MEMORY(n * 4.0 + (1 << 30));
  std::vector<float> host(n);
  reduce::fill_input(host.data(), n, Pattern::integers, 5);
  const float exact = reduce::exact_sum(host.data(), n).to_float();
  const float model = step14::model_sum(host.data(), n);
  EXPECT_EQ(model, exact);
  DeviceInput in(host, n);
  const int sms = sm_count();
  for (float v :
       run_all(step14::kStep, in.get(), n, {reduce::LaunchConfig{512, 0, sms}, reduce::LaunchConfig{128, 0, sms, 97}}))
    EXPECT_EQ(bits_of(v), bits_of(model)) << v << " vs " << model;
}

}  // namespace
