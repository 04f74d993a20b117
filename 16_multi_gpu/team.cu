#include "team.cuh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>

#include "multi_gpu.hpp"
#include "step.cuh"

namespace step10 {
extern const reduce::Step kStep;  // the suite's fastest hand-written kernel, from 10_loads_in_flight_kernel
}

namespace multigpu {
namespace {

const reduce::Step& kShardStep = step10::kStep;

// The last step of the combination: one thread adds the N gathered partials in rank order, so every
// GPU computes the same total with the same roundings on every run.
__global__ void add_in_rank_order(const float* partials, int ranks, float* out) {
  float sum = partials[0];
  for (int r = 1; r < ranks; ++r) sum += partials[r];
  *out = sum;
}

// Host memory the input is generated in, a slice at a time, before it is copied to a GPU. Pinned
// (page-locked) so the copies run at the bus's speed; portable, so every GPU's copies may use it.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    CUDA_CHECK(cudaHostAlloc(&ptr_, count * sizeof(float), cudaHostAllocPortable));
  }
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  float* get() const { return ptr_; }

 private:
  float* ptr_ = nullptr;
  std::size_t count_ = 0;
};

constexpr std::int64_t kSlice = std::int64_t{1} << 24;  // floats generated and copied at a time (64 MB)

// Puts elements [first, first + count) of the array into dst (device memory) and returns their
// reference sum: copied from src (the whole array in host memory) when given, else generated into
// `host` a slice at a time.
reduce::Reference upload(float* dst, std::int64_t first, std::int64_t count, reduce::Pattern p, std::uint64_t seed,
                         const float* src, const PinnedBuffer& host, cudaStream_t stream) {
  reduce::Reference ref;
  for (std::int64_t done = 0; done < count; done += kSlice) {
    const std::int64_t len = std::min(kSlice, count - done);
    const float* slice = src ? src + first + done : host.get();
    if (!src) reduce::fill_input_at(host.get(), first + done, len, p, seed);
    const reduce::Reference part = reduce::reference_sum(slice, len);
    ref.sum += part.sum;
    ref.abs_sum += part.abs_sum;
    CUDA_CHECK(cudaMemcpyAsync(dst + done, slice, len * sizeof(float), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));  // the slice buffer is filled again next
  }
  return ref;
}

// Before the first NCCL call of the process (NCCL reads its environment once): NVLS off unless the
// environment already chose (team.cuh says why).
void nvls_off_unless_chosen() { setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0); }

}  // namespace

RankGpu::RankGpu(int rank_, int ordinal, int block)
    : rank(rank_), device(reduce::open_device(ordinal)), flusher(device), barrier(1) {
  cfg.block = block;
  cfg.device = device.ordinal;
  cfg.sm_count = device.sm_count;
  CUDA_CHECK(cudaMemset(barrier.get(), 0, barrier.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());
}

void RankGpu::use() const { CUDA_CHECK(cudaSetDevice(device.ordinal)); }

std::vector<ncclComm_t> local_communicators(int gpus) {
  nvls_off_unless_chosen();
  std::vector<ncclComm_t> comms(gpus);
  std::vector<int> devices(gpus);
  for (int d = 0; d < gpus; ++d) devices[d] = d;
  NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, devices.data()));
  return comms;
}

void end_communicators(const std::vector<ncclComm_t*>& comms) {
  if (std::none_of(comms.begin(), comms.end(), [](ncclComm_t* c) { return *c != nullptr; })) return;
  // During unwinding (an error somewhere) peers may never join a finalize: abort instead.
  const bool unwinding = std::uncaught_exceptions() > 0;
  if (!unwinding) {
    ncclGroupStart();  // one thread finalizing several communicators of one clique must group the calls
    for (ncclComm_t* c : comms)
      if (*c) ncclCommFinalize(*c);
    ncclGroupEnd();
  }
  for (ncclComm_t* c : comms) {
    if (!*c) continue;
    if (unwinding) ncclCommAbort(*c);
    else ncclCommDestroy(*c);
    *c = nullptr;
  }
}

int shard_step_default_block() { return kShardStep.block.size; }
const reduce::Step& shard_step() { return kShardStep; }

void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line) {
  throw NcclError(std::string("NCCL: ") + call + " failed at " + file + ":" + std::to_string(line) + ": " +
                  ncclGetErrorString(code) + " (" + ncclGetLastError(nullptr) + ")");
}


Totals read_totals(const std::vector<std::pair<const RankGpu*, const float*>>& slots, int runs) {
  Totals t;
  std::vector<float> mine(static_cast<std::size_t>(runs));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    slots[i].first->use();
    if (runs > 0) CUDA_CHECK(cudaMemcpy(mine.data(), slots[i].second, runs * sizeof(float), cudaMemcpyDeviceToHost));
    if (i == 0) t.results = mine;
    else t.agree = t.agree && std::memcmp(mine.data(), t.results.data(), mine.size() * sizeof(float)) == 0;
  }
  for (int r = 1; r < runs; ++r) t.identical = t.identical && std::memcmp(&t.results[r], &t.results[0], sizeof(float)) == 0;
  return t;
}

// One GPU of the team and everything its part of the reduction uses. Constructed with its device
// current (open_device makes it so), so the stream, the flusher and the buffers live there.
struct Team::Member : RankGpu {
  Member(int rank_, int ordinal, int ranks, int block) : RankGpu(rank_, ordinal, block), partials(ranks), echo(ranks) {
    CUDA_CHECK(cudaMemset(partials.get(), 0, partials.bytes()));
    CUDA_CHECK(cudaMemset(echo.get(), 0, echo.bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  reduce::DeviceBuffer<float> partials;  // slot r: rank r's partial sum (after the all-gather: all of them)
  reduce::DeviceBuffer<float> echo;      // what the bare all-gather (the yardstick) moves
  reduce::DeviceBuffer<unsigned char> scratch;
  reduce::DeviceBuffer<float> shard;     // elements [begin, begin + count) of the array
  std::int64_t begin = 0, count = 0;
  reduce::DeviceBuffer<float> whole;     // the whole array, for the single-GPU baselines when there are several ranks
  reduce::DeviceBuffer<float> results;   // one total per run
  reduce::LaunchShape shape;             // step 10's launch on the shard in run 0
};

Team::Team(int ranks, int block) : ranks_(ranks), block_(block) {}
Team::Team(Team&&) noexcept = default;
Team& Team::operator=(Team&&) noexcept = default;

Team::~Team() {
  std::vector<ncclComm_t*> comms;
  for (auto& m : members_) comms.push_back(&m->comm);
  end_communicators(comms);
}

Team Team::all_local(int gpus, int block) {
  Team team(gpus, block);
  for (int d = 0; d < gpus; ++d) team.members_.push_back(std::make_unique<Member>(d, d, gpus, block));
  const std::vector<ncclComm_t> comms = local_communicators(gpus);
  for (int d = 0; d < gpus; ++d) team.members_[d]->comm = comms[d];
  return team;
}

Team Team::one_rank(int device, int ranks, int rank, const ncclUniqueId& id, int block) {
  nvls_off_unless_chosen();
  Team team(ranks, block);
  team.members_.push_back(std::make_unique<Member>(rank, device, ranks, block));
  team.members_[0]->use();
  NCCL_CHECK(ncclCommInitRank(&team.members_[0]->comm, ranks, id, rank));
  return team;
}

const reduce::DeviceInfo& Team::first_device() const { return members_.front()->device; }
reduce::LaunchShape Team::shape() const {
  reduce::LaunchShape s = members_.front()->shape;
  if (s.launches == 0) s.block = block_;
  s.grid *= ranks_;
  s.launches += 1;
  return s;
}
RankGpu& Team::first() const { return *members_.front(); }

std::vector<RankGpu*> Team::lanes() const {
  std::vector<RankGpu*> out;
  for (const auto& m : members_) out.push_back(m.get());
  return out;
}

const float* Team::whole() const {
  const Member& m = *members_.front();
  return ranks_ == 1 ? m.shard.get() : m.whole.get();
}

std::vector<reduce::Reference> Team::load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, bool whole,
                                          const float* host) {
  n_ = n;
  pattern_ = p;
  seed_ = seed;
  PinnedBuffer pinned(kSlice);
  std::vector<reduce::Reference> refs;
  for (auto& m : members_) {
    m->use();
    const Shard s = shard_of(n, ranks_, m->rank);
    m->shard = reduce::DeviceBuffer<float>();  // free the previous size's buffers before asking for room
    m->whole = reduce::DeviceBuffer<float>();
    m->scratch = reduce::DeviceBuffer<unsigned char>();
    const bool whole_here = whole && ranks_ > 1 && m.get() == members_.front().get();
    reduce::ensure_device_memory((s.count + (whole_here ? n : 0)) * sizeof(float) + (std::size_t{512} << 20));
    m->shard = reduce::DeviceBuffer<float>(s.count);
    if (whole_here) m->whole = reduce::DeviceBuffer<float>(n);
    // Scratch for step 10 on the shard, zero-filled as step.cuh asks.
    m->scratch = reduce::DeviceBuffer<unsigned char>(kShardStep.scratch_bytes(s.count, m->cfg));
    CUDA_CHECK(cudaMemsetAsync(m->scratch.get(), 0, m->scratch.bytes(), m->stream.get()));
    m->begin = s.begin;
    m->count = s.count;
    refs.push_back(upload(m->shard.get(), s.begin, s.count, p, seed, host, pinned, m->stream.get()));
    if (whole_here) upload(m->whole.get(), 0, n, p, seed, host, pinned, m->stream.get());
  }
  return refs;
}

void Team::prepare(int runs) {
  runs_ = runs;
  for (auto& m : members_) {
    m->use();
    m->results = reduce::DeviceBuffer<float>(std::max(runs, 1));
    CUDA_CHECK(cudaMemset(m->results.get(), 0xFF, m->results.bytes()));  // NaN: a total never written fails
    m->shape = reduce::LaunchShape{};
    CUDA_CHECK(cudaDeviceSynchronize());
  }
}

void Team::enqueue(int run) {
  for (auto& m : members_) {
    m->use();
    reduce::LaunchConfig c = m->cfg;
    c.shape = run == 0 ? &m->shape : nullptr;
    CUDA_CHECK(kShardStep.launch(m->shard.get(), m->count, m->partials.get() + m->rank, reduce::view(m->scratch), c,
                                 m->stream.get()));
    CUDA_CHECK(cudaGetLastError());
  }
  NCCL_CHECK(ncclGroupStart());
  for (auto& m : members_)  // in place: rank r's send buffer is slot r of the receive buffer
    NCCL_CHECK(ncclAllGather(m->partials.get() + m->rank, m->partials.get(), 1, ncclFloat32, m->comm, m->stream.get()));
  NCCL_CHECK(ncclGroupEnd());
  for (auto& m : members_) {
    m->use();
    add_in_rank_order<<<1, 1, 0, m->stream.get()>>>(m->partials.get(), ranks_, m->results.get() + run);
    CUDA_CHECK(cudaGetLastError());
  }
}

void Team::enqueue_floor() {
  NCCL_CHECK(ncclGroupStart());
  for (auto& m : members_)
    NCCL_CHECK(ncclAllGather(m->echo.get() + m->rank, m->echo.get(), 1, ncclFloat32, m->comm, m->stream.get()));
  NCCL_CHECK(ncclGroupEnd());
}

Totals Team::totals() const {
  std::vector<std::pair<const RankGpu*, const float*>> slots;
  for (const auto& m : members_) slots.emplace_back(m.get(), m->results.get());
  return read_totals(slots, runs_);
}

bool Team::input_unchanged() const {
  std::vector<float> expected(static_cast<std::size_t>(kSlice));
  PinnedBuffer seen(kSlice);
  auto same = [&](const float* device, std::int64_t first, std::int64_t count) {
    for (std::int64_t done = 0; done < count; done += kSlice) {
      const std::int64_t len = std::min(kSlice, count - done);
      CUDA_CHECK(cudaMemcpy(seen.get(), device + done, len * sizeof(float), cudaMemcpyDeviceToHost));
      reduce::fill_input_at(expected.data(), first + done, len, pattern_, seed_);
      if (std::memcmp(seen.get(), expected.data(), len * sizeof(float)) != 0) return false;
    }
    return true;
  };
  for (const auto& m : members_) {
    m->use();
    if (!same(m->shard.get(), m->begin, m->count) || (m->whole.get() && !same(m->whole.get(), 0, n_))) return false;
  }
  return true;
}

Solo::Solo(const reduce::Step& step, RankGpu& gpu, int block) : step_(step), gpu_(gpu), cfg_(gpu.cfg) { cfg_.block = block; }

void Solo::load(const float* in, std::int64_t n) {
  gpu_.use();
  in_ = in;
  n_ = n;
  scratch_ = reduce::DeviceBuffer<unsigned char>();
  scratch_ = reduce::DeviceBuffer<unsigned char>(step_.scratch_bytes(n, cfg_));
  CUDA_CHECK(cudaMemsetAsync(scratch_.get(), 0, scratch_.bytes(), gpu_.stream.get()));  // step.cuh's contract
  CUDA_CHECK(cudaStreamSynchronize(gpu_.stream.get()));
}

void Solo::prepare(int runs) {
  gpu_.use();
  runs_ = runs;
  results_ = reduce::DeviceBuffer<float>(std::max(runs, 1));
  CUDA_CHECK(cudaMemsetAsync(results_.get(), 0xFF, results_.bytes(), gpu_.stream.get()));  // NaN
  CUDA_CHECK(cudaStreamSynchronize(gpu_.stream.get()));
}

void Solo::enqueue(int run) {
  gpu_.use();
  CUDA_CHECK(step_.launch(in_, n_, results_.get() + run, reduce::view(scratch_), cfg_, gpu_.stream.get()));
  CUDA_CHECK(cudaGetLastError());
}

Totals Solo::totals() const { return read_totals({{&gpu_, results_.get()}}, runs_); }

}  // namespace multigpu
