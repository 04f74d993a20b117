// Step 16's modes with the same bits for any number of ranks (ranks.cuh): 14_reproducible's tiles
// gathered and combined in its tree, or 15_exact's accumulators all-reduced as integers.
#include "ranks.cuh"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "14_reproducible/reproducible.cuh"  // 14_reproducible_kernel: the order's two halves
#include "15_exact/exact.cuh"                // 15_exact_kernel: the accumulator, its launch and its rounding
#include "harness.cuh"
#include "multi_gpu.hpp"
#include "rounds.cuh"
#include "team.cuh"

namespace step16 {
namespace {

using step15::kAccWords;                                 // an Acc's int64 words: its limbs and the NaN / inf counts
constexpr int kAccThreads = (kAccWords + 31) / 32 * 32;  // one thread per word, whole warps

// Virtual ranks: what NCCL's all-reduce does for real ranks, one thread per int64 word. Integer
// addition, so the order of the slots does not matter; they are added in rank order all the same.
__global__ void add_accumulators(const step15::Acc* slots, int ranks, step15::Acc* total) {
  const int w = threadIdx.x;
  if (w >= kAccWords) return;
  const auto* words = reinterpret_cast<const long long*>(slots);
  unsigned long long sum = 0;  // wraps like NCCL's int64 sum would, without signed overflow
  for (int r = 0; r < ranks; ++r) sum += static_cast<unsigned long long>(words[r * kAccWords + w]);
  reinterpret_cast<long long*>(total)[w] = static_cast<long long>(sum);
}

}  // namespace

const reduce::Step& single_step(Sum sum) { return sum == Sum::exact ? step15::kStep : step14::kStep; }

float single_launch(Sum sum, const float* host, std::int64_t n, int device, int block, std::int64_t grid) {
  const reduce::DeviceInfo info = reduce::open_device(device);
  reduce::ensure_device_memory(n * sizeof(float) + (std::size_t{64} << 20));
  reduce::DeviceBuffer<float> in(n);
  reduce::Stream stream;
  // On the kernel's stream: a pageable cudaMemcpy may return before its data lands, and the legacy
  // stream does not order a non-blocking stream's kernel after it.
  if (n > 0) CUDA_CHECK(cudaMemcpyAsync(in.get(), host, n * sizeof(float), cudaMemcpyHostToDevice, stream.get()));
  reduce::LaunchConfig cfg{block, info.ordinal, info.sm_count};
  cfg.grid = grid;
  return reduce::reduce_once(single_step(sum), in.get(), n, cfg, stream.get());
}

// One rank: its GPU (team.cuh's RankGpu) and its buffers.
struct ReproducibleTeam::Member : RankGpu {
  using RankGpu::RankGpu;
  std::int64_t begin = 0, count = 0;  // its elements of the global array
  step14::TileRange tiles;            // Sum::order: its tiles of the global n
  reduce::DeviceBuffer<float> shard;
  reduce::DeviceBuffer<float> partials;         // Sum::order: ranks * per floats, slot r rank r's tile sums
  reduce::DeviceBuffer<step15::Acc> accs;       // Sum::exact: slot r rank r's accumulator
  reduce::DeviceBuffer<step15::Acc> total;      // Sum::exact: the sum of every rank's
  reduce::DeviceBuffer<unsigned char> scratch;  // Sum::exact: step15::accumulate's, zero-filled
  reduce::DeviceBuffer<float> totals;           // one per run (prepare)
  reduce::Event done;                           // this rank's slot is written
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
    m->use();
    if (!reduce::device_equals_host(m->shard.get(), host + m->begin, m->count)) return false;
  }
  return true;
}

ReproducibleTeam ReproducibleTeam::virtual_ranks(Sum sum, int device, int ranks, int block, std::int64_t grid) {
  if (ranks < 1 || ranks > kMaxGpus) throw reduce::UsageError("ranks must be 1 to " + std::to_string(kMaxGpus));
  ReproducibleTeam team;
  team.sum_ = sum;
  team.virtual_ = true;
  for (int r = 0; r < ranks; ++r) {
    team.members_.push_back(std::make_unique<Member>(r, device, block));
    team.members_.back()->cfg.grid = grid;
  }
  return team;
}

ReproducibleTeam ReproducibleTeam::nccl_ranks(Sum sum, int gpus, int block, std::int64_t grid) {
  if (gpus < 1 || gpus > kMaxGpus) throw reduce::UsageError("ranks must be 1 to " + std::to_string(kMaxGpus));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (count < gpus)
    throw reduce::NoUsableDevice(std::to_string(gpus) + " ranks through NCCL need " + std::to_string(gpus) +
                                 " GPUs, this machine shows " + std::to_string(count));
  ReproducibleTeam team;
  team.sum_ = sum;
  for (int d = 0; d < gpus; ++d) {
    team.members_.push_back(std::make_unique<Member>(d, d, block));
    team.members_.back()->cfg.grid = grid;
  }
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
    m->shard = reduce::DeviceBuffer<float>();  // the previous size's, freed before asking for room
    m->partials = reduce::DeviceBuffer<float>();
    m->scratch = reduce::DeviceBuffer<unsigned char>();
    std::size_t own = 0;  // bytes besides the shard
    if (sum_ == Sum::order) {
      m->tiles = step14::shard_tiles(n, ranks, m->rank);
      m->begin = step14::shard_begin(n, m->tiles);
      m->count = step14::shard_elements(n, m->tiles);
      own = std::max<std::int64_t>(1, m->tiles.per * ranks) * sizeof(float);
    } else {
      const Shard s = shard_of(n, ranks, m->rank);
      m->begin = s.begin;
      m->count = s.count;
      own = step15::scratch_bytes(s.count, m->cfg) + (ranks + 1) * sizeof(step15::Acc);
    }
    reduce::ensure_device_memory(m->count * sizeof(float) + own + (std::size_t{64} << 20));
    m->shard = reduce::DeviceBuffer<float>(m->count);
    if (sum_ == Sum::order) {
      m->partials = reduce::DeviceBuffer<float>(std::max<std::int64_t>(1, m->tiles.per * ranks));
      CUDA_CHECK(cudaMemsetAsync(m->partials.get(), 0, m->partials.bytes(), m->stream.get()));
    } else {
      m->accs = reduce::DeviceBuffer<step15::Acc>(ranks);
      m->total = reduce::DeviceBuffer<step15::Acc>(1);
      m->scratch = reduce::DeviceBuffer<unsigned char>(step15::scratch_bytes(m->count, m->cfg));
      CUDA_CHECK(cudaMemsetAsync(m->scratch.get(), 0, m->scratch.bytes(), m->stream.get()));  // step.cuh's contract
    }
    if (m->count > 0)
      CUDA_CHECK(cudaMemcpyAsync(m->shard.get(), host + m->begin, m->count * sizeof(float), cudaMemcpyHostToDevice,
                                 m->stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(m->stream.get()));
  }
}

std::vector<RankGpu*> ReproducibleTeam::lanes() {
  std::vector<RankGpu*> out;
  for (auto& m : members_) out.push_back(m.get());
  return out;
}

std::int64_t ReproducibleTeam::tiles() const { return sum_ == Sum::order ? step14::num_tiles(n_) : 0; }
std::int64_t ReproducibleTeam::tiles_per_rank() const { return sum_ == Sum::order ? members_.front()->tiles.per : 0; }
int ReproducibleTeam::limbs() const { return sum_ == Sum::exact ? step15::kLimbs : 0; }

ReproducibleFields ReproducibleTeam::fields() const {
  ReproducibleFields f;
  f.exact = sum_ == Sum::exact;
  f.ranks = ranks();
  f.virtual_ranks = virtual_;
  f.gpus = virtual_ ? 1 : f.ranks;
  f.tiles = tiles();
  f.tiles_per_rank = tiles_per_rank();
  f.limbs = limbs();
  return f;
}

void ReproducibleTeam::prepare(int runs) {
  runs_ = runs;
  for (auto& m : members_) {
    m->use();
    m->totals = reduce::DeviceBuffer<float>(std::max(runs, 1));
    CUDA_CHECK(cudaMemset(m->totals.get(), 0xFF, m->totals.bytes()));  // NaN: a total never written fails
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Rank 0's launch, read from a capture of one call (never run; no NCCL call is captured), then the
  // launches every run adds: the combination or the rounding, and with virtual ranks the limbs' sum.
  const Member& first = *members_.front();
  first.use();
  shape_ = reduce::launch_shape(first.stream.get(), [&](cudaStream_t s) { return launch_shard(first, s); });
  shape_.launches += 1 + (sum_ == Sum::exact && virtual_ ? 1 : 0);
  if (shape_.launches == 1) shape_.block = first.cfg.block;  // rank 0 had no tiles
}

cudaError_t ReproducibleTeam::launch_shard(const Member& m, cudaStream_t s) const {
  if (sum_ == Sum::order)
    return step14::sum_shard_tiles(m.shard.get(), n_, m.tiles.first, m.tiles.count,
                                   m.partials.get() + m.rank * m.tiles.per, m.cfg, s);
  return step15::accumulate(m.shard.get(), m.count, m.accs.get() + m.rank, reduce::view(m.scratch), m.cfg, s);
}

void ReproducibleTeam::enqueue_collective() {
  const std::int64_t per = members_.front()->tiles.per;
  const bool order = sum_ == Sum::order;
  if (virtual_) {  // every slot to every rank by device copies, each after its writer's event
    for (auto& to : members_)
      for (auto& from : members_) {
        if (from.get() == to.get() || (order && from->tiles.count == 0)) continue;
        CUDA_CHECK(cudaStreamWaitEvent(to->stream.get(), from->done.get(), 0));
        if (order)
          CUDA_CHECK(cudaMemcpyAsync(to->partials.get() + from->rank * per, from->partials.get() + from->rank * per,
                                     from->tiles.count * sizeof(float), cudaMemcpyDeviceToDevice, to->stream.get()));
        else
          CUDA_CHECK(cudaMemcpyAsync(to->accs.get() + from->rank, from->accs.get() + from->rank, sizeof(step15::Acc),
                                     cudaMemcpyDeviceToDevice, to->stream.get()));
      }
    if (!order)
      for (auto& m : members_) {  // what NCCL's all-reduce adds for real ranks
        add_accumulators<<<1, kAccThreads, 0, m->stream.get()>>>(m->accs.get(), ranks(), m->total.get());
        CUDA_CHECK(cudaGetLastError());
      }
  } else if (!order || per > 0) {
    NCCL_CHECK(ncclGroupStart());
    for (auto& m : members_) {
      if (order)  // in place: rank r's send buffer is slot r of its receive buffer
        NCCL_CHECK(ncclAllGather(m->partials.get() + m->rank * per, m->partials.get(), per, ncclFloat32, m->comm,
                                 m->stream.get()));
      else  // NCCL's order of additions is its own choice: integers make it irrelevant
        NCCL_CHECK(ncclAllReduce(m->accs.get() + m->rank, m->total.get(), kAccWords, ncclInt64, ncclSum, m->comm,
                                 m->stream.get()));
    }
    NCCL_CHECK(ncclGroupEnd());
  }
}

void ReproducibleTeam::enqueue(int run) {
  const bool order = sum_ == Sum::order;
  // 1. Each rank's shard into its own slot: its tile sums, or its accumulator.
  for (auto& m : members_) {
    m->use();
    CUDA_CHECK(launch_shard(*m, m->stream.get()));
    CUDA_CHECK(cudaEventRecord(m->done.get(), m->stream.get()));
  }
  // 2. Every rank's slot to every rank: in rank (so tile) order, or summed as integers.
  enqueue_collective();
  // 3. Every rank its total: the tile sums in the order's tree, or the summed limbs rounded once.
  for (auto& m : members_) {
    m->use();
    if (order)
      CUDA_CHECK(step14::combine_tile_sums(m->partials.get(), n_, m->totals.get() + run, m->stream.get()));
    else
      CUDA_CHECK(step15::round_to_float(m->total.get(), m->totals.get() + run, m->stream.get()));
  }
}

Totals ReproducibleTeam::totals() const {
  std::vector<std::pair<const RankGpu*, const float*>> slots;  // rank 0's first
  for (const auto& m : members_) slots.emplace_back(m.get(), m->totals.get());
  return read_totals(slots, runs_);
}

ReproducibleResult ReproducibleTeam::run(int warmup, int iters) {
  prepare(warmup + iters);
  Contender c;
  c.lanes = lanes();
  c.nccl = !virtual_ && ranks() > 1;
  c.enqueue = [this](int run) { enqueue(run); };
  run_rounds({&c}, warmup, iters);
  const Totals t = totals();
  ReproducibleResult res;
  res.ms = c.ms;
  res.summary = reduce::summarize(c.ms);
  res.results = t.results;
  res.ranks_agree = t.agree;
  res.runs_identical = t.identical;
  return res;
}

}  // namespace step16
