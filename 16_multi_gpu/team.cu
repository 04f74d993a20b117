#include "team.cuh"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>

#include "multi_gpu.hpp"
#include "rounds.cuh"
#include "steps.hpp"  // generated: every step's kStep; the shard's is step 10's (beyond.txt: 16 uses 10)

namespace step16 {
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

// Generates elements [first, first + count) of the array into dst (device memory) through `host`,
// a slice at a time; returns their reference sum.
reduce::Reference upload(float* dst, std::int64_t first, std::int64_t count, reduce::Pattern p, std::uint64_t seed,
                         const PinnedBuffer& host, cudaStream_t stream) {
  reduce::Reference ref;
  for (std::int64_t done = 0; done < count; done += kSlice) {
    const std::int64_t len = std::min(kSlice, count - done);
    reduce::fill_input_at(host.get(), first + done, len, p, seed);
    const reduce::Reference part = reduce::reference_sum(host.get(), len);
    ref.sum += part.sum;
    ref.abs_sum += part.abs_sum;
    CUDA_CHECK(cudaMemcpyAsync(dst + done, host.get(), len * sizeof(float), cudaMemcpyHostToDevice, stream));
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
    if (unwinding)
      ncclCommAbort(*c);
    else
      ncclCommDestroy(*c);
    *c = nullptr;
  }
}

const reduce::Step& shard_step() { return kShardStep; }
int shard_step_default_block() { return kShardStep.block.size; }

void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line) {
  throw NcclError(std::string("NCCL: ") + call + " failed at " + file + ":" + std::to_string(line) + ": " +
                  ncclGetErrorString(code) + " (" + ncclGetLastError(nullptr) + ")");
}

// One GPU of the team and everything its part of the reduction uses. Constructed with its device
// current (open_device makes it so), so the stream, the flusher and the buffers live there.
struct Team::Member : RankGpu {
  Member(int rank_, int ordinal, int ranks, int block) : RankGpu(rank_, ordinal, block), partials(ranks) {
    CUDA_CHECK(cudaMemset(partials.get(), 0, partials.bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Step 10 on its shard into its slot of the partials, on `s` (this GPU's stream, or a capture of it).
  cudaError_t launch(cudaStream_t s) const {
    return kShardStep.launch(shard.get(), count, partials.get() + rank, reduce::view(scratch), cfg, s);
  }

  reduce::DeviceBuffer<float> partials;  // slot r: rank r's partial sum (after the all-gather: all of them)
  reduce::DeviceBuffer<unsigned char> scratch;
  reduce::DeviceBuffer<float> shard;  // elements [begin, begin + count) of the array
  std::int64_t begin = 0, count = 0;
  reduce::DeviceBuffer<float> whole;    // the whole array, for a step alone when there are several ranks
  reduce::DeviceBuffer<float> results;  // one total per run (prepare)
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

reduce::LaunchShape Team::run_shape() const {
  reduce::LaunchShape shape = shard_shape_;
  if (shape.launches == 0) shape.block = block_;
  shape.grid *= ranks_;
  shape.launches += 1;
  return shape;
}

RankGpu& Team::first() { return *members_.front(); }

std::vector<RankGpu*> Team::lanes() {
  std::vector<RankGpu*> out;
  for (auto& m : members_) out.push_back(m.get());
  return out;
}

const float* Team::whole() const {
  const Member& m = *members_.front();
  return ranks_ > 1 ? m.whole.get() : m.shard.get();
}

std::vector<reduce::Reference> Team::load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, bool whole_too) {
  n_ = n;
  pattern_ = p;
  seed_ = seed;
  PinnedBuffer host(kSlice);
  std::vector<reduce::Reference> refs;
  for (auto& m : members_) {
    m->use();
    const Shard s = shard_of(n, ranks_, m->rank);
    m->shard = reduce::DeviceBuffer<float>();  // free the previous size's buffers before asking for room
    m->whole = reduce::DeviceBuffer<float>();
    m->scratch = reduce::DeviceBuffer<unsigned char>();
    const bool whole_here = whole_too && ranks_ > 1 && m.get() == members_.front().get();
    reduce::ensure_device_memory((s.count + (whole_here ? n : 0)) * sizeof(float) + (std::size_t{512} << 20));
    m->shard = reduce::DeviceBuffer<float>(s.count);
    if (whole_here) m->whole = reduce::DeviceBuffer<float>(n);
    // Scratch for the longest reduction this GPU runs, zero-filled as step.cuh asks.
    m->scratch = reduce::DeviceBuffer<unsigned char>(kShardStep.scratch_bytes(whole_here ? n : s.count, m->cfg));
    CUDA_CHECK(cudaMemsetAsync(m->scratch.get(), 0, m->scratch.bytes(), m->stream.get()));
    m->begin = s.begin;
    m->count = s.count;
    refs.push_back(upload(m->shard.get(), s.begin, s.count, p, seed, host, m->stream.get()));
    if (whole_here) upload(m->whole.get(), 0, n, p, seed, host, m->stream.get());
  }
  return refs;
}

void Team::prepare(int runs) {
  runs_ = runs;
  for (auto& m : members_) {
    m->use();
    m->results = reduce::DeviceBuffer<float>(std::max(runs, 1));
    CUDA_CHECK(cudaMemset(m->results.get(), 0xFF, m->results.bytes()));  // NaN: a total never written fails
  }
  // Step 10's launch on the first local shard, read from a capture of one call (never run), before any run.
  const Member& first = *members_.front();
  first.use();
  shard_shape_ = reduce::launch_shape(first.stream.get(), [&](cudaStream_t s) { return first.launch(s); });
  for (auto& m : members_) {
    m->use();
    CUDA_CHECK(cudaDeviceSynchronize());
  }
}

void Team::enqueue_collective() {
  NCCL_CHECK(ncclGroupStart());
  for (auto& m : members_)  // in place: rank r's send buffer is slot r of the receive buffer
    NCCL_CHECK(ncclAllGather(m->partials.get() + m->rank, m->partials.get(), 1, ncclFloat32, m->comm, m->stream.get()));
  NCCL_CHECK(ncclGroupEnd());
}

void Team::enqueue(int run) {
  for (auto& m : members_) {
    m->use();
    CUDA_CHECK(m->launch(m->stream.get()));
    CUDA_CHECK(cudaGetLastError());
  }
  enqueue_collective();
  for (auto& m : members_) {
    m->use();
    add_in_rank_order<<<1, 1, 0, m->stream.get()>>>(m->partials.get(), ranks_, m->results.get() + run);
    CUDA_CHECK(cudaGetLastError());
  }
}

Totals read_totals(const std::vector<std::pair<const RankGpu*, const float*>>& slots, int runs) {
  Totals t;
  std::vector<float> mine(runs);
  for (const auto& [gpu, slot] : slots) {
    gpu->use();
    if (runs > 0) CUDA_CHECK(cudaMemcpy(mine.data(), slot, runs * sizeof(float), cudaMemcpyDeviceToHost));
    if (gpu == slots.front().first)
      t.results = mine;
    else
      t.agree = t.agree && std::memcmp(mine.data(), t.results.data(), mine.size() * sizeof(float)) == 0;
  }
  for (float v : t.results) t.identical = t.identical && std::memcmp(&v, &t.results[0], sizeof v) == 0;
  return t;
}

Totals Team::totals() const {
  std::vector<std::pair<const RankGpu*, const float*>> slots;
  for (const auto& m : members_) slots.emplace_back(m.get(), m->results.get());
  return read_totals(slots, runs_);
}

Timings Team::run(int warmup, int iters) {
  prepare(warmup + iters);
  Contender runs, collective;
  runs.lanes = collective.lanes = lanes();
  runs.nccl = collective.nccl = ranks_ > 1;
  runs.enqueue = [this](int run) { enqueue(run); };
  collective.enqueue = [this](int) { enqueue_collective(); };
  run_rounds({&runs, &collective}, warmup, iters);
  const Totals t = totals();
  return Timings{runs.ms, collective.ms, t.results, t.agree};
}

bool Team::input_unchanged() const {
  std::vector<float> expected(static_cast<std::size_t>(kSlice));
  PinnedBuffer seen(kSlice);
  for (const auto& m : members_) {
    m->use();
    for (std::int64_t done = 0; done < m->count; done += kSlice) {
      const std::int64_t len = std::min(kSlice, m->count - done);
      CUDA_CHECK(cudaMemcpy(seen.get(), m->shard.get() + done, len * sizeof(float), cudaMemcpyDeviceToHost));
      reduce::fill_input_at(expected.data(), m->begin + done, len, pattern_, seed_);
      if (std::memcmp(seen.get(), expected.data(), len * sizeof(float)) != 0) return false;
    }
  }
  return true;
}

}  // namespace step16
