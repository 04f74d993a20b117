// Step 14's reproducible mode (reproducible.cuh): tiles of the global n summed on each rank, gathered
// in tile order, combined in 14_reproducible's fixed tree on every rank.
#include "reproducible.cuh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "device.cuh"
#include "harness.cuh"
#include "multi_gpu.hpp"
#include "team.cuh"
#include "../14_reproducible/reproducible.cuh"

namespace multigpu {

// One rank: its GPU (team.cuh's RankGpu) and its buffers.
struct ReproducibleTeam::Member : RankGpu {
  using RankGpu::RankGpu;
  repro::TileRange tiles;                 // this rank's tiles of the global n
  reduce::DeviceBuffer<float> shard;      // their elements
  reduce::DeviceBuffer<float> partials;   // ranks * per floats: slot r holds rank r's tile sums
  reduce::DeviceBuffer<float> totals;     // one per run
  reduce::Event done;                     // this rank's tile sums are in its own slot
};

ReproducibleTeam::ReproducibleTeam(ReproducibleTeam&&) noexcept = default;
ReproducibleTeam& ReproducibleTeam::operator=(ReproducibleTeam&&) noexcept = default;

ReproducibleTeam::~ReproducibleTeam() {
  std::vector<ncclComm_t*> comms;
  for (auto& m : members_)
    if (m) comms.push_back(&m->comm);
  end_communicators(comms);
}

int ReproducibleTeam::ranks() const { return static_cast<int>(members_.size()); }

const reduce::DeviceInfo& ReproducibleTeam::first_device() const { return members_.front()->device; }

bool ReproducibleTeam::input_unchanged(const float* host) const {
  for (const auto& m : members_) {
    const std::int64_t count = repro::shard_elements(n_, m->tiles);
    if (count == 0) continue;
    m->use();
    std::vector<float> back(static_cast<std::size_t>(count));
    CUDA_CHECK(cudaMemcpy(back.data(), m->shard.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
    if (std::memcmp(back.data(), host + repro::shard_begin(n_, m->tiles), count * sizeof(float)) != 0) return false;
  }
  return true;
}

ReproducibleTeam ReproducibleTeam::virtual_ranks(int device, int ranks, int block) {
  if (ranks < 1 || ranks > kMaxGpus) throw reduce::UsageError("ranks must be 1 to " + std::to_string(kMaxGpus));
  ReproducibleTeam team;
  team.virtual_ = true;
  team.block_ = block;
  for (int r = 0; r < ranks; ++r) team.members_.push_back(std::make_unique<Member>(r, device, block));
  return team;
}

ReproducibleTeam ReproducibleTeam::nccl_ranks(int gpus, int block) {
  if (gpus < 1 || gpus > kMaxGpus) throw reduce::UsageError("ranks must be 1 to " + std::to_string(kMaxGpus));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count < gpus)
    throw reduce::NoUsableDevice(std::to_string(gpus) + " ranks through NCCL need " + std::to_string(gpus) +
                                 " GPUs, this machine shows " + std::to_string(count));
  ReproducibleTeam team;
  team.block_ = block;
  for (int d = 0; d < gpus; ++d) team.members_.push_back(std::make_unique<Member>(d, d, block));
  const std::vector<ncclComm_t> comms = local_communicators(gpus);
  for (int d = 0; d < gpus; ++d) team.members_[d]->comm = comms[d];
  return team;
}

void ReproducibleTeam::load(const float* host, std::int64_t n) {
  if (n < 0 || n > reduce::max_n()) throw reduce::UsageError("n must be 0 to 2^36");
  n_ = n;
  const int ranks = this->ranks();
  for (auto& m : members_) {
    m->use();
    m->shard = reduce::DeviceBuffer<float>();
    m->partials = reduce::DeviceBuffer<float>();
    m->tiles = repro::shard_tiles(n, ranks, m->rank);
    const std::int64_t count = repro::shard_elements(n, m->tiles);
    const std::int64_t slots = std::max<std::int64_t>(1, m->tiles.per * ranks);
    reduce::ensure_device_memory(count * sizeof(float) + slots * sizeof(float) + (std::size_t{64} << 20));
    m->shard = reduce::DeviceBuffer<float>(count);
    m->partials = reduce::DeviceBuffer<float>(slots);
    CUDA_CHECK(cudaMemsetAsync(m->partials.get(), 0, m->partials.bytes(), m->stream.get()));
    if (count > 0)
      CUDA_CHECK(cudaMemcpyAsync(m->shard.get(), host + repro::shard_begin(n, m->tiles), count * sizeof(float),
                                 cudaMemcpyHostToDevice, m->stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(m->stream.get()));
  }
}

ReproducibleResult ReproducibleTeam::run(int warmup, int iters) {
  const int runs = warmup + iters, ranks = this->ranks();
  ReproducibleResult res;
  res.ranks = ranks;
  res.virtual_ranks = virtual_;
  res.tiles = repro::num_tiles(n_);
  res.tiles_per_rank = members_.front()->tiles.per;
  std::vector<std::vector<reduce::Event>> start(ranks), stop(ranks);
  for (auto& m : members_) {
    m->use();
    m->totals = reduce::DeviceBuffer<float>(std::max(runs, 1));
    CUDA_CHECK(cudaMemset(m->totals.get(), 0xFF, m->totals.bytes()));  // NaN: a total never written fails
    for (int t = 0; t < iters; ++t) {
      start[m->rank].emplace_back();
      stop[m->rank].emplace_back();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  const std::int64_t per = members_.front()->tiles.per;

  for (int r = 0; r < runs; ++r) {
    const bool timed = r >= warmup;
    const int t = r - warmup;
    if (timed) {
      for (auto& m : members_) {
        m->use();
        if (!virtual_ || m->rank == 0) m->flusher.flush(m->stream.get());  // virtual ranks: one L2
      }
      if (virtual_) {  // one start for all: every stream waits for rank 0's start event
        Member& first = *members_.front();
        CUDA_CHECK(cudaEventRecord(start[0][t].get(), first.stream.get()));
        for (auto& m : members_) CUDA_CHECK(cudaStreamWaitEvent(m->stream.get(), start[0][t].get(), 0));
      } else {
        for (auto& m : members_) {
          m->use();
          CUDA_CHECK(cudaEventRecord(start[m->rank][t].get(), m->stream.get()));
        }
      }
    }
    // 1. Each rank's tiles into its own slot.
    for (auto& m : members_) {
      m->use();
      CUDA_CHECK(repro::sum_shard_tiles(m->shard.get(), n_, m->tiles.first, m->tiles.count,
                                        m->partials.get() + m->rank * per, m->cfg, m->stream.get()));
      CUDA_CHECK(cudaEventRecord(m->done.get(), m->stream.get()));
    }
    // 2. The gather: every rank's slot into every rank's buffer, in rank (so tile) order.
    if (virtual_) {
      for (auto& to : members_)
        for (auto& from : members_) {
          if (from.get() == to.get() || from->tiles.count == 0) continue;
          CUDA_CHECK(cudaStreamWaitEvent(to->stream.get(), from->done.get(), 0));
          CUDA_CHECK(cudaMemcpyAsync(to->partials.get() + from->rank * per, from->partials.get() + from->rank * per,
                                     from->tiles.count * sizeof(float), cudaMemcpyDeviceToDevice, to->stream.get()));
        }
    } else if (per > 0) {
      NCCL_CHECK(ncclGroupStart());
      for (auto& m : members_)  // in place: rank r's send buffer is slot r of its receive buffer
        NCCL_CHECK(ncclAllGather(m->partials.get() + m->rank * per, m->partials.get(), per, ncclFloat32, m->comm,
                                 m->stream.get()));
      NCCL_CHECK(ncclGroupEnd());
    }
    // 3. Every rank combines all tile sums in 15's tree.
    for (auto& m : members_) {
      m->use();
      CUDA_CHECK(repro::combine_tile_sums(m->partials.get(), n_, m->totals.get() + r, m->stream.get()));
      if (timed) CUDA_CHECK(cudaEventRecord(stop[m->rank][t].get(), m->stream.get()));
    }
    // The next run overwrites slots that this run's copies read: wait for every rank.
    for (auto& m : members_) {
      m->use();
      CUDA_CHECK(cudaStreamSynchronize(m->stream.get()));
    }
  }

  res.ms.assign(iters, 0.0);
  for (auto& m : members_) {
    m->use();
    for (int t = 0; t < iters; ++t) {
      float ms = 0.0f;
      const reduce::Event& from = virtual_ ? start[0][t] : start[m->rank][t];
      CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), stop[m->rank][t].get()));
      res.ms[t] = std::max(res.ms[t], static_cast<double>(ms));
    }
    std::vector<float> totals(runs);
    if (runs > 0) CUDA_CHECK(cudaMemcpy(totals.data(), m->totals.get(), runs * sizeof(float), cudaMemcpyDeviceToHost));
    if (m->rank == 0) res.results = totals;
    else res.ranks_agree = res.ranks_agree && std::memcmp(totals.data(), res.results.data(), runs * sizeof(float)) == 0;
  }
  for (int r = 1; r < runs; ++r) res.runs_identical = res.runs_identical && std::memcmp(&res.results[r], &res.results[0], 4) == 0;
  res.summary = reduce::summarize(res.ms);
  return res;
}

ReproducibleResult reproducible_sum(const float* host, std::int64_t n, int ranks, bool virtual_ranks, int warmup,
                                    int iters, int block) {
  ReproducibleTeam team = virtual_ranks ? ReproducibleTeam::virtual_ranks(0, ranks, block)
                                        : ReproducibleTeam::nccl_ranks(ranks, block);
  team.load(host, n);
  return team.run(warmup, iters);
}

}  // namespace multigpu
