// Step 16's one way of timing (rounds.cuh): the head start, the flush, the start line, the events.
#include "rounds.cuh"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

namespace step16 {
namespace {

constexpr double kLongestHeadStartMs = 20.0;  // a host slower than this (a sanitizer) counts late runs

__device__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Step 1: waits `ns` nanoseconds of the GPU's own clock and nothing else, so it ends whatever the host
// or the other GPUs do, while the host enqueues the rest of the run behind it.
__global__ void head_start(long long ns) {
  const long long begin = global_ns();
  while (global_ns() - begin < ns) {
#if __CUDA_ARCH__ >= 700
    __nanosleep(1000);  // leaves the SM's issue slots to others while it waits
#endif
  }
}

// The first lane of c on lane i's GPU: it holds that GPU's start event.
RankGpu* first_on_gpu(const std::vector<RankGpu*>& lanes, std::size_t i) {
  for (std::size_t j = 0; j < i; ++j)
    if (lanes[j]->device.ordinal == lanes[i]->device.ordinal) return lanes[j];
  return lanes[i];
}

}  // namespace

double run_once(Contender& c, bool timed) {
  const int run = c.runs++;
  const std::vector<RankGpu*>& lanes = c.lanes;
  if (lanes.empty()) return 0.0;
  const auto begin = std::chrono::steady_clock::now();
  const double head = c.head_start_ms;
  // 1-2. The head start and the flush, once per GPU, on its first lane's stream.
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (first_on_gpu(lanes, i) != lanes[i]) continue;
    lanes[i]->use();
    head_start<<<1, 1, 0, lanes[i]->stream.get()>>>(static_cast<long long>(head * 1e6));
    CUDA_CHECK(cudaGetLastError());
    lanes[i]->flusher.flush(lanes[i]->stream.get());  // in warm-up runs too: they are the timed ones untimed
  }
  // 3. The start line: every GPU flushed before any lane starts.
  if (c.nccl) {
    NCCL_CHECK(ncclGroupStart());
    for (RankGpu* l : lanes)
      NCCL_CHECK(ncclAllReduce(l->barrier.get(), l->barrier.get(), 1, ncclInt32, ncclMax, l->comm, l->stream.get()));
    NCCL_CHECK(ncclGroupEnd());
  }
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    RankGpu* first = first_on_gpu(lanes, i);
    lanes[i]->use();
    if (first == lanes[i])
      CUDA_CHECK(cudaEventRecord(lanes[i]->start.get(), lanes[i]->stream.get()));
    else
      CUDA_CHECK(cudaStreamWaitEvent(lanes[i]->stream.get(), first->start.get(), 0));
  }
  // 4. The run between the start and a stop event on every lane.
  c.enqueue(run);
  for (RankGpu* l : lanes) {
    l->use();
    CUDA_CHECK(cudaEventRecord(l->stop.get(), l->stream.get()));
  }
  const double enqueue_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  if (run > 0)  // the first run sets up NCCL's connections and loads kernels: not what a run costs
    c.head_start_ms = std::min(kLongestHeadStartMs, std::max(c.head_start_ms, 2 * enqueue_ms));
  if (timed) {
    c.enqueue_ms.push_back(enqueue_ms);
    c.late += enqueue_ms > head;
  }
  // 5. Every lane done; the slowest lane's time from its GPU's start.
  double slowest = 0.0;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    lanes[i]->use();
    CUDA_CHECK(cudaStreamSynchronize(lanes[i]->stream.get()));
    float ms = 0.0f;
    if (timed) CUDA_CHECK(cudaEventElapsedTime(&ms, first_on_gpu(lanes, i)->start.get(), lanes[i]->stop.get()));
    slowest = std::max(slowest, static_cast<double>(ms));
  }
  return slowest;
}

void run_rounds(const std::vector<Contender*>& contenders, int warmup, int iters) {
  for (Contender* c : contenders) {
    c->ms.clear();
    c->enqueue_ms.clear();
    c->late = c->runs = 0;
  }
  for (Contender* c : contenders)
    for (int w = 0; w < warmup; ++w) run_once(*c, false);
  const int count = static_cast<int>(contenders.size());
  for (int r = 0; r < iters; ++r)
    for (int k : round_order(count, r)) contenders[k]->ms.push_back(run_once(*contenders[k], true));
}

Solo::Solo(const reduce::Step& step, RankGpu& gpu, int block) : step_(step), gpu_(gpu), cfg_(gpu.cfg) {
  cfg_.block = block;
  cfg_.grid = 0;  // the step's own choice, as its single launch makes it
}

void Solo::load(const float* in, std::int64_t n) {
  gpu_.use();
  in_ = in;
  n_ = n;
  scratch_ = reduce::DeviceBuffer<unsigned char>();
  const std::size_t bytes = step_.scratch_bytes(n, cfg_);
  reduce::ensure_device_memory(bytes + (std::size_t{64} << 20));
  scratch_ = reduce::DeviceBuffer<unsigned char>(bytes);
  if (bytes > 0) CUDA_CHECK(cudaMemsetAsync(scratch_.get(), 0, bytes, gpu_.stream.get()));  // step.cuh's contract
  CUDA_CHECK(cudaStreamSynchronize(gpu_.stream.get()));
}

void Solo::prepare(int runs) {
  gpu_.use();
  out_ = reduce::DeviceBuffer<float>(std::max(runs, 1));
  CUDA_CHECK(cudaMemsetAsync(out_.get(), 0xFF, out_.bytes(), gpu_.stream.get()));  // NaN: a total never written fails
  CUDA_CHECK(cudaStreamSynchronize(gpu_.stream.get()));
  runs_ = runs;
}

void Solo::enqueue(int run) {
  CUDA_CHECK(step_.launch(in_, n_, out_.get() + run, reduce::view(scratch_), cfg_, gpu_.stream.get()));
  CUDA_CHECK(cudaGetLastError());
}

Totals Solo::totals() const { return read_totals({{&gpu_, out_.get()}}, runs_); }

Lineup::Lineup(Team team, std::optional<ReproducibleTeam> mode, bool single_gpu, bool root)
    : team_(std::move(team)), mode_(std::move(mode)) {
  ordinary_.lanes = team_.lanes();
  ordinary_.nccl = team_.ranks() > 1;
  ordinary_.enqueue = [this](int run) { team_.enqueue(run); };
  if (mode_) {
    mode_runs_.lanes = collective_.lanes = mode_->lanes();
    mode_runs_.nccl = collective_.nccl = !mode_->virtual_ranks() && mode_->ranks() > 1;
    mode_runs_.enqueue = [this](int run) { mode_->enqueue(run); };
    collective_.enqueue = [this](int) { mode_->enqueue_collective(); };
  } else {
    collective_.lanes = ordinary_.lanes;
    collective_.nccl = ordinary_.nccl;
    collective_.enqueue = [this](int) { team_.enqueue_collective(); };
  }
  with_alone_ = mode_ || single_gpu || team_.ranks() == 1;
  if (with_alone_ && root) {
    const reduce::Step& step = mode_ ? single_step(mode_->sum()) : shard_step();
    solo_ = std::make_unique<Solo>(step, team_.first(), mode_ ? step.block.size : team_.block());
    alone_.lanes = {&team_.first()};
    alone_.enqueue = [this](int run) { solo_->enqueue(run); };
  }
}

std::vector<Contender*> Lineup::contenders() {
  std::vector<Contender*> all = {&ordinary_};
  if (mode_) all.push_back(&mode_runs_);
  all.push_back(&collective_);
  if (with_alone_) all.push_back(&alone_);  // on every process (empty where not root), to keep one order
  return all;
}

std::vector<reduce::Reference> Lineup::load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, const float* host) {
  std::vector<reduce::Reference> refs = team_.load(n, p, seed, solo_ != nullptr);
  if (solo_) solo_->load(team_.whole(), n);
  if (mode_) mode_->load(host, n);
  return refs;
}

void Lineup::time(int warmup, int iters) {
  const int runs = warmup + iters;
  team_.prepare(runs);
  if (mode_) mode_->prepare(runs);
  if (solo_) solo_->prepare(runs);
  run_rounds(contenders(), warmup, iters);
}

bool Lineup::input_unchanged(const float* host) const {
  return team_.input_unchanged() && (!mode_ || mode_->input_unchanged(host));
}

}  // namespace step16
