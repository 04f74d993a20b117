#include "rounds.cuh"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <utility>

#include "multi_gpu.hpp"

namespace multigpu {
namespace {

// Long enough for any host to enqueue one run, short enough that a hold nothing releases costs seconds.
constexpr long long kHoldLimitNs = 4'000'000'000LL;

__device__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits until the host's release number reaches `number` (compared as a difference, so it may wrap).
__global__ void held(const volatile unsigned* gate, unsigned number, volatile unsigned* gave_up) {
  const long long begin = global_ns();
  while (static_cast<int>(gate[0] - number) < 0) {
    if (global_ns() - begin > kHoldLimitNs) {
      *gave_up = 1;
      return;
    }
    __nanosleep(1000);
  }
}

// Releases the hold once: where the run releases it, or, when an exception leaves the run first, at
// its end (the GPUs must not wait for the timeout).
class Release {
 public:
  explicit Release(Hold* hold) : hold_(hold) {}
  ~Release() { now(); }
  void now() {
    if (hold_) hold_->release();
    hold_ = nullptr;
  }

 private:
  Hold* hold_;
};

bool first_on_its_gpu(const std::vector<RankGpu*>& lanes, std::size_t i) {
  for (std::size_t j = 0; j < i; ++j)
    if (lanes[j]->device.ordinal == lanes[i]->device.ordinal) return false;
  return true;
}

}  // namespace

Hold::Hold() {
  void* p = nullptr;
  // Mapped, so kernels read it (through the same pointer: unified addressing); portable, so every GPU may.
  CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  gate_ = static_cast<volatile unsigned*>(p);
  gate_[0] = 0;
  gate_[1] = 0;
}

Hold::~Hold() { cudaFreeHost(const_cast<unsigned*>(gate_)); }

void Hold::enqueue(cudaStream_t stream) {
  held<<<1, 1, 0, stream>>>(gate_, next_, gate_ + 1);
  CUDA_CHECK(cudaGetLastError());
}

void Hold::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  gate_[0] = next_++;
}

bool Hold::timed_out() const { return gate_[1] != 0; }

double run_once(Contender& c, Hold* hold, bool timed) {
  const int run = c.runs++;
  const std::vector<RankGpu*>& lanes = c.lanes;
  if (lanes.empty()) return 0.0;
  Hold* const held = run > 0 ? hold : nullptr;
  Release release(held);
  // 1-2. Hold and flush every GPU, once each, on its first lane's stream.
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (!first_on_its_gpu(lanes, i)) continue;
    lanes[i]->use();
    if (held) held->enqueue(lanes[i]->stream.get());
    if (timed) lanes[i]->flusher.flush(lanes[i]->stream.get());
  }
  // 3. The start line: no lane starts before every GPU is flushed.
  if (c.nccl) {
    NCCL_CHECK(ncclGroupStart());
    for (RankGpu* l : lanes)
      NCCL_CHECK(ncclAllReduce(l->barrier.get(), l->barrier.get(), 1, ncclInt32, ncclMax, l->comm, l->stream.get()));
    NCCL_CHECK(ncclGroupEnd());
  } else if (lanes.size() > 1) {
    for (RankGpu* l : lanes) {
      l->use();
      CUDA_CHECK(cudaEventRecord(l->ready.get(), l->stream.get()));
    }
    for (RankGpu* l : lanes)
      for (RankGpu* other : lanes)
        if (other != l) CUDA_CHECK(cudaStreamWaitEvent(l->stream.get(), other->ready.get(), 0));
  }
  // 4. The run between a start and a stop event on every lane.
  auto record = [&](reduce::Event RankGpu::*event) {
    if (!timed) return;
    for (RankGpu* l : lanes) {
      l->use();
      CUDA_CHECK(cudaEventRecord((l->*event).get(), l->stream.get()));
    }
  };
  record(&RankGpu::start);
  c.enqueue(run);
  record(&RankGpu::stop);
  // 5. Release, then wait for every lane.
  release.now();
  double slowest = 0.0;
  for (RankGpu* l : lanes) {
    l->use();
    CUDA_CHECK(cudaStreamSynchronize(l->stream.get()));
    float ms = 0.0f;
    if (timed) CUDA_CHECK(cudaEventElapsedTime(&ms, l->start.get(), l->stop.get()));
    slowest = std::max(slowest, static_cast<double>(ms));
  }
  if (held && held->timed_out())
    throw HoldTimedOut(cudaErrorLaunchTimeout, "16_multi_gpu: a held GPU waited more than 4 s for the host to enqueue "
                                               "one run (--no-hold times without the hold)");
  return slowest;
}

void run_rounds(const std::vector<Contender*>& contenders, Hold* hold, int warmup, int iters) {
  for (Contender* c : contenders)
    for (int w = 0; w < warmup; ++w) run_once(*c, hold, false);
  const int count = static_cast<int>(contenders.size());
  for (int r = 0; r < iters; ++r)
    for (int k : round_order(count, r)) contenders[k]->ms.push_back(run_once(*contenders[k], hold, true));
}

Lineup::Mode::Mode(ReproducibleTeam team_, RankGpu& first)
    : team(std::move(team_)), solo(single_step(team.sum()), first, single_step(team.sum()).block.size) {
  runs.lanes = team.lanes();
  runs.nccl = !team.virtual_ranks() && team.ranks() > 1;
  runs.enqueue = [this](int run) { team.enqueue(run); };
  alone.lanes = {&first};
  alone.enqueue = [this](int run) { solo.enqueue(run); };
}

Lineup::Lineup(Team team, const Plan& plan, bool root) : team_(std::move(team)), plan_(plan) {
  ordinary_.lanes = floor_.lanes = team_.lanes();
  ordinary_.nccl = floor_.nccl = team_.ranks() > 1;
  ordinary_.enqueue = [this](int run) { team_.enqueue(run); };
  floor_.enqueue = [this](int) { team_.enqueue_floor(); };
  if (root && (plan.single_gpu || team_.ranks() == 1)) {
    step10_ = std::make_unique<Solo>(shard_step(), team_.first(), team_.block());
    alone_.lanes = {&team_.first()};
    alone_.enqueue = [this](int run) { step10_->enqueue(run); };
  }
  const int gpus = team_.ranks();
  for (Sum sum : {Sum::order, Sum::exact}) {
    if (!(sum == Sum::order ? plan.reproducible : plan.exact)) continue;
    const int block = single_step(sum).block.size;
    ReproducibleTeam t = plan.virtual_ranks ? ReproducibleTeam::virtual_ranks(sum, 0, plan.virtual_ranks, block)
                                            : ReproducibleTeam::nccl_ranks(sum, gpus, block);
    modes_.push_back(std::make_unique<Mode>(std::move(t), team_.first()));
  }
}

std::vector<Contender*> Lineup::contenders() {
  std::vector<Contender*> all = {&ordinary_, &floor_};
  if (plan_.single_gpu || team_.ranks() == 1) all.push_back(&alone_);  // on every process, to keep one order
  for (auto& m : modes_) all.insert(all.end(), {&m->runs, &m->alone});
  return all;
}

std::vector<reduce::Reference> Lineup::load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, const float* host) {
  const bool whole = step10_ || !modes_.empty();
  std::vector<reduce::Reference> refs = team_.load(n, p, seed, whole, host);
  if (step10_) step10_->load(team_.whole(), n);
  for (auto& m : modes_) {
    m->team.load(host, n);
    m->solo.load(team_.whole(), n);
  }
  return refs;
}

void Lineup::time(int warmup, int iters) {
  try {
    rounds(warmup, iters);
  } catch (const HoldTimedOut& e) {
    if (team_.lanes().size() != static_cast<std::size_t>(team_.ranks())) throw;  // MPI: the other ranks go on
    std::fprintf(stderr, "%s: timing without the hold from here\n", e.what());
    plan_.hold = false;
    rounds(warmup, iters);
  }
}

void Lineup::rounds(int warmup, int iters) {
  const int runs = warmup + iters;
  team_.prepare(runs);
  if (step10_) step10_->prepare(runs);
  for (auto& m : modes_) {
    m->team.prepare(runs);
    m->solo.prepare(runs);
  }
  const std::vector<Contender*> all = contenders();
  for (Contender* c : all) {
    c->ms.clear();
    c->runs = 0;
  }
  run_rounds(all, plan_.hold ? &hold_ : nullptr, warmup, iters);
}

Timing Lineup::timing(const Mode* mode) const {
  Timing t;
  t.nccl_floor = reduce::summarize(floor_.ms);
  const Solo* solo = mode ? &mode->solo : step10_.get();
  if (solo) {
    t.single = reduce::summarize(mode ? mode->alone.ms : alone_.ms);
    t.single_step = solo->step().name;
  }
  t.held = plan_.hold;
  return t;
}

bool Lineup::input_unchanged(const float* host) const {
  bool same = team_.input_unchanged();
  for (const auto& m : modes_) same = same && m->team.input_unchanged(host);
  return same;
}

}  // namespace multigpu
