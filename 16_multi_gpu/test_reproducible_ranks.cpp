// Step 14's reproducible mode on one GPU: N = 1 ... 8 virtual ranks (own streams and buffers, the tile
// sums gathered by device copies) give 14_reproducible's bits, on every rank and every run, at sizes
// that are not multiples of N or of the tile, and with fewer tiles than ranks. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "input.hpp"
#include "reproducible.cuh"
#include "../14_reproducible/bits.hpp"
#include "../14_reproducible/reproducible.cuh"

namespace {

float single_launch(const std::vector<float>& host, std::int64_t n) {
  reduce::DeviceBuffer<float> in(static_cast<std::size_t>(n));
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  reduce::Stream stream;
  // On the kernel's stream: a pageable cudaMemcpy may return before its data lands, and the legacy
  // stream it runs on does not order the non-blocking stream's kernel after it (the buffer of the
  // previous pattern, freed and handed out again, was read once).
  if (n > 0)
    CUDA_CHECK(cudaMemcpyAsync(in.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream.get()));
  return reduce::reduce_once(repro::kStep, in.get(), n, reduce::LaunchConfig{512, 0, sms}, stream.get());
}

TEST(ReproducibleRanks, OneToEightVirtualRanksGiveStep15sBits) {
  SKIP_WITHOUT_GPU();
  // 1 tile (n < N), tiles of 8192 cut short, 2^24 + 5 (tiles of 2^15, 513 of them), 3 x 2^22 + 7.
  const std::int64_t sizes[] = {0, 1, 513, 4097, 100003, (1 << 20) + 3, (1 << 24) + 5, 3 * (1 << 22) + 7};
  for (int ranks = 1; ranks <= 8; ++ranks) {
    multigpu::ReproducibleTeam team = multigpu::ReproducibleTeam::virtual_ranks(0, ranks);
    for (std::int64_t n : sizes) {
      for (reduce::Pattern p : {reduce::Pattern::mixed, reduce::Pattern::uniform}) {
        std::vector<float> host(static_cast<std::size_t>(n > 0 ? n : 1));
        reduce::fill_input(host.data(), n, p, 3);
        const float model = repro::model_sum(host.data(), n);
        const float single = single_launch(host, n);
        ASSERT_EQ(repro::bits_text(single), repro::bits_text(model)) << "n=" << n;
        team.load(host.data(), n);
        const multigpu::ReproducibleResult res = team.run(1, 2);
        ASSERT_EQ(res.results.size(), 3u);
        for (float v : res.results)
          EXPECT_EQ(repro::bits_text(v), repro::bits_text(single))
              << ranks << " ranks, n=" << n << " " << reduce::to_string(p) << ": " << v << " vs " << single;
        EXPECT_TRUE(res.ranks_agree) << ranks << " ranks, n=" << n;
      }
    }
  }
}

// The shards are cut on tile boundaries of the global n, and cover every tile once.
TEST(ReproducibleRanks, ShardsCoverTheTilesInOrder) {
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4097}, (std::int64_t{1} << 24) + 5,
                         (std::int64_t{1} << 33) + 3}) {
    for (int ranks = 1; ranks <= 9; ++ranks) {
      std::int64_t next = 0, elements = 0;
      for (int r = 0; r < ranks; ++r) {
        const repro::TileRange t = repro::shard_tiles(n, ranks, r);
        EXPECT_EQ(t.first, next) << "n=" << n << " ranks=" << ranks << " rank=" << r;
        EXPECT_LE(t.count, t.per);
        if (t.count > 0) EXPECT_EQ(repro::shard_begin(n, t) % repro::tile_elements(n), 0);
        next += t.count;
        elements += repro::shard_elements(n, t);
      }
      EXPECT_EQ(next, repro::num_tiles(n));
      EXPECT_EQ(elements, n);
    }
  }
}

}  // namespace
