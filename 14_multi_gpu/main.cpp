// Step 14: one array, several GPUs, NCCL.
//
// What this step shows: the reduction of one logical array spread over N GPUs. Each GPU holds a
// shard (n / N floats, contiguous) and reduces it with step 10's launcher, the suite's fastest
// hand-written kernel, linked from its step and not copied. NCCL then combines the N partial sums on
// the devices: an all-gather puts all N on every GPU, and every GPU adds them in rank order, so the
// total is bitwise the same on every GPU and on every run (team.cuh says why not ncclAllReduce).
// What changed from step 10: nothing in the kernel; around it, the shards, a communicator and a
// collective.
// This file is the step's record for the harness (reduce::Bench: its options, one measurement per
// size) plus what is its own: the world of processes. The same source builds two programs:
//   14_multi_gpu      one process drives every GPU (ncclCommInitAll, one group call per collective);
//   14_multi_gpu_mpi  one process per GPU under mpirun (REDUCE_WITH_MPI: rank 0 makes the NCCL id,
//                     MPI broadcasts it, every rank calls ncclCommInitRank), the path across machines.
// Usage: ./14_multi_gpu [--gpus 2] [--n 2^32] [--single-gpu] [--pattern int] [--format json] [--help]
//        mpirun -np 2 ./14_multi_gpu_mpi [same options]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifdef REDUCE_WITH_MPI
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>
#endif

#include "harness.cuh"
#include "input.hpp"
#include "multi_gpu.hpp"
#include "team.cuh"

namespace {

#ifdef REDUCE_WITH_MPI
constexpr bool kMpi = true;
constexpr const char* kProgram = "14_multi_gpu_mpi";
#else
constexpr bool kMpi = false;
constexpr const char* kProgram = "14_multi_gpu";
#endif
constexpr const char* kStep = "14_multi_gpu";  // the record's step: both programs are this one step
constexpr const char* kLesson = "one array over several GPUs: step 10 on each shard, NCCL joins the partial sums";

// What the processes of one run share. One process: it is the whole world, and every operation is
// the identity. Under MPI: every rank of MPI_COMM_WORLD.
struct World {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the ranks of this machine: the GPU this rank uses
  std::string name = kProgram;  // how this process signs its messages
  bool root() const { return rank == 0; }
  const char* mode() const { return kMpi ? "mpi" : "single_process"; }

#ifdef REDUCE_WITH_MPI
  int saved_stderr = -1;

  void join() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;  // the ranks of this machine: a rank's GPU is its place among them
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    if (root()) return;
    name += " rank " + std::to_string(rank);
    // Rank 0 prints --help and the records. Every rank parses the same command line and would refuse
    // it with the same words, so the others keep quiet until it is accepted (speak()).
    if (!std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);
    std::fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (saved_stderr >= 0 && null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    if (null_fd >= 0) close(null_fd);
  }
  void speak() {
    if (saved_stderr < 0) return;
    std::fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
  }
#else
  void speak() {}
#endif

  // The largest code any process has: 0 only when every process can go on.
  int agree(int code) const {
#ifdef REDUCE_WITH_MPI
    MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
    return code;
  }
  bool all(bool ok) const { return agree(ok ? 0 : 1) == 0; }
  // Rank 0's value, on every rank.
  int from_root(int v) const {
#ifdef REDUCE_WITH_MPI
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    return v;
  }

  // Per timed run, the slowest process's time.
  void max_each(std::vector<double>& v) const {
#ifdef REDUCE_WITH_MPI
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#else
    (void)v;
#endif
  }

  // The reference of the whole array: every rank's shard references, added in rank order.
  reduce::Reference total(const std::vector<reduce::Reference>& local) const {
    std::vector<double> mine;
    for (const auto& r : local) mine.insert(mine.end(), {r.sum, r.abs_sum});
    std::vector<double> all = mine;
#ifdef REDUCE_WITH_MPI
    all.resize(mine.size() * size);  // one shard per rank under MPI
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
                  MPI_DOUBLE, MPI_COMM_WORLD);
#endif
    reduce::Reference ref;
    for (std::size_t i = 0; i < all.size(); i += 2) {
      ref.sum += all[i];
      ref.abs_sum += all[i + 1];
    }
    return ref;
  }

  // Every process's results are bitwise the same as every other's.
  bool same_everywhere(const std::vector<float>& results) const {
#ifdef REDUCE_WITH_MPI
    std::vector<unsigned> lo(results.size()), hi;
    std::memcpy(lo.data(), results.data(), results.size() * sizeof(float));
    hi = lo;
    MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
#else
    (void)results;
    return true;
#endif
  }

  // Runs body. Under MPI with several ranks, a failure here may leave the other ranks waiting inside a
  // collective for this one: this rank says why (the harness's one mapping, guarded_main, gives the
  // words and the code), then every rank ends with that code (mpirun passes it on).
  template <typename Body>
  void ends_all_on_failure(std::int64_t n, Body&& body) const {
#ifdef REDUCE_WITH_MPI
    if (size > 1) {
      try {
        body();
      } catch (...) {
        const int code = reduce::guarded_main(name.c_str(), n, []() -> int { throw; });
        MPI_Abort(MPI_COMM_WORLD, code);
      }
      return;
    }
#else
    (void)n;
#endif
    body();
  }
};

World world;  // set up by main() before the harness runs

// How many GPUs this machine shows; throws NoUsableDevice, in the harness's words, when none. Opens no
// device where there are some (under MPI every rank would make a context on GPU 0).
int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) reduce::open_device(0);  // throws, with the reason
  return count;
}

// How many GPUs the run uses, once every process knows it can run. One process: --gpus, or every
// visible GPU. Under MPI: one per rank, each rank's the local_rank-th of its machine; the ranks agree
// first, so that all leave with the same code and none waits for the others forever. The reason is
// printed once: rank 0's, or, where rank 0 could go on, each failing rank's own.
int team_size(const multigpu::Plan& plan) {
  if (!kMpi) {
    const int visible = visible_gpus();
    const int gpus = plan.gpus ? plan.gpus : visible;
    if (gpus > visible)
      throw reduce::NoUsableDevice("needs " + std::to_string(gpus) + " GPUs, this machine shows " + std::to_string(visible));
    return gpus;
  }
  std::string why;
  try {
    const int visible = visible_gpus();
    if (world.local_rank >= visible)
      why = "needs " + std::to_string(world.local_rank + 1) + " GPUs (one per rank on this machine), this machine shows " +
            std::to_string(visible);
  } catch (const reduce::NoUsableDevice& e) {
    why = e.what();
  }
  const int code = why.empty() ? 0 : 77;
  const int agreed = world.agree(code);
  const int root_code = world.from_root(code);
  if (agreed != 0) {
    if (code != 0 && (world.root() || root_code == 0)) world.speak();
    throw reduce::NoUsableDevice(why.empty() ? "another rank has no usable GPU" : why);
  }
  return world.size;
}

// Checks every run's total; fills the report's result fields (the first wrong run's, else the last's).
void check_runs(reduce::Report& r, const std::vector<float>& results, const reduce::Reference& ref) {
  int first_wrong = -1;
  r.runs_total = static_cast<int>(results.size());
  r.runs_identical = true;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const reduce::Check c = reduce::check_result(results[k], ref, r.n, r.pattern);
    r.runs_correct += c.passed;
    if (!c.passed && first_wrong < 0) first_wrong = static_cast<int>(k);
    r.runs_identical = r.runs_identical && std::memcmp(&results[k], &results[0], sizeof(float)) == 0;
  }
  const std::size_t shown = first_wrong >= 0 ? first_wrong : results.size() - 1;
  const reduce::Check c = reduce::check_result(results[shown], ref, r.n, r.pattern);
  r.result = results[shown];
  r.reference = ref.sum;
  r.abs_error = c.abs_error;
  r.tolerance = c.tolerance;
  r.exact_check = c.exact;
  if (first_wrong >= 0 && world.root())
    std::fprintf(stderr, "%s: n = %lld: run %d of %d returned %.9g, reference %.9g\n", kProgram,
                 static_cast<long long>(r.n), first_wrong + 1, r.runs_total, static_cast<double>(results[first_wrong]),
                 ref.sum);
}

// One size: load, the CPU yardsticks (rank 0), run, check, and the record (printed by rank 0).
void measure_size(multigpu::Team& team, const reduce::Options& opt, const multigpu::Plan& plan, std::int64_t n,
                  reduce::Emitter& emit) {
  const int gpus = team.ranks();
  const bool baseline = plan.single_gpu || gpus == 1;
  reduce::Report r;
  r.step = kStep;
  r.lesson = kLesson;
  r.n = n;
  r.pattern = opt.pattern;
  r.seed = opt.seed;
  r.iters = opt.iters;
  r.warmup = opt.warmup;
  r.deterministic = true;  // the all-gather copies bits and the add order is fixed

  if (world.root() && opt.cpu_runs > 0) {  // the whole array in host memory, for these only
    std::unique_ptr<float[]> host(new float[std::max<std::int64_t>(n, 1)]);
    reduce::fill_input(host.get(), n, opt.pattern, opt.seed);
    float sum = 0.0f;
    r.cpu_ms = reduce::time_cpu_sum(host.get(), n, opt.cpu_runs, &sum);
    r.cpu_parallel_ms = reduce::time_cpu_sum_parallel(host.get(), n, opt.cpu_runs, &sum, &r.cpu_threads);
  }

  const reduce::Reference ref = world.total(team.load(n, opt.pattern, opt.seed, baseline && world.root()));
  multigpu::Timings t = team.run(opt.warmup, opt.iters);
  world.max_each(t.ms);
  world.max_each(t.collective_ms);
  r.ms = reduce::summarize(t.ms);
  check_runs(r, t.results, ref);

  multigpu::TeamFields f;
  f.mode = world.mode();
  f.gpus = gpus;
  f.n_per_gpu = plan.per_gpu ? n / gpus : 0;
  f.shard_min = n;
  for (int k = 0; k < gpus; ++k) {
    f.shard_min = std::min(f.shard_min, multigpu::shard_of(n, gpus, k).count);
    f.shard_max = std::max(f.shard_max, multigpu::shard_of(n, gpus, k).count);
  }
  f.collective_ms = reduce::summarize(t.collective_ms);
  f.gpus_agree = world.all(t.gpus_agree) && world.same_everywhere(t.results);
  r.input_unchanged = world.all(team.input_unchanged());
  if (baseline && world.root()) {
    const reduce::Runs<float> one = team.single_gpu(opt.warmup, opt.iters);
    f.single_gpu_ms = one.summary.median;
    for (float v : one.results) f.single_gpu_correct = f.single_gpu_correct && reduce::check_result(v, ref, n, r.pattern).passed;
  }
  f.single_gpu_correct = world.all(f.single_gpu_correct);
  NCCL_CHECK(ncclGetVersion(&f.nccl_version));
  r.passed = r.runs_correct == r.runs_total && r.runs_identical && f.gpus_agree && r.input_unchanged &&
             f.single_gpu_correct;

  r.device = team.first_device();
  const reduce::LaunchShape& shape = team.shard_shape();
  r.block = shape.launches > 0 ? shape.block : team.block();
  r.grid = shape.grid * gpus;            // every GPU's blocks, so that per_thread reads right
  r.launches = shape.launches + 1;       // step 10's kernels and the add in rank order (NCCL's not counted)
  r.fits_in_l2 = f.shard_max * static_cast<std::int64_t>(sizeof(float)) <= r.device.l2_bytes;
  reduce::derive_rates(r);
  multigpu::add_team_fields(r, f);

  if (world.root()) {
    if (!f.gpus_agree) std::fprintf(stderr, "%s: n = %lld: the GPUs hold different totals\n", kProgram, static_cast<long long>(n));
    if (!r.runs_identical) std::fprintf(stderr, "%s: n = %lld: repeated runs gave different bits\n", kProgram, static_cast<long long>(n));
    if (!r.input_unchanged) std::fprintf(stderr, "%s: n = %lld: the input was modified\n", kProgram, static_cast<long long>(n));
    if (!f.single_gpu_correct) std::fprintf(stderr, "%s: n = %lld: step 10 alone gave a wrong result\n", kProgram, static_cast<long long>(n));
  }
  emit(r);
}

void check(const reduce::Options& opt) { multigpu::check_options(opt, kMpi, world.size); }

void measure(const reduce::Options& opt, const reduce::DeviceInfo&, reduce::Emitter& emit) {
  const multigpu::Plan plan = multigpu::plan_of(opt);
  const int gpus = team_size(plan);
  const std::vector<std::int64_t> ns = multigpu::sizes(plan, opt.n, gpus);  // the same refusal on every rank
  world.speak();
  world.ends_all_on_failure(opt.n, [&] {
#ifdef REDUCE_WITH_MPI
    ncclUniqueId id;
    if (world.root()) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    multigpu::Team team = multigpu::Team::one_rank(world.local_rank, world.size, world.rank, id, opt.block);
#else
    multigpu::Team team = multigpu::Team::all_local(gpus, opt.block);
#endif
    for (std::int64_t n : ns) measure_size(team, opt, plan, n, emit);
  });
}

}  // namespace

// A main() of its own rather than the one line run_bench(bench, argc, argv) of the other steps: under
// MPI every rank runs this program, so MPI has to start before the harness and end after it, and the
// ranks have to leave with one exit code. Without MPI it is that one line with the World trivial.
int main(int argc, char** argv) {
#ifdef REDUCE_WITH_MPI
  MPI_Init(&argc, &argv);
  world.join();
#endif
  reduce::Bench bench{world.name.c_str(), kLesson};
  bench.spec = multigpu::option_spec(kMpi, multigpu::shard_step_default_block());
  bench.check = check;
  bench.measure = measure;
  bench.opens_own_devices = true;  // the team opens GPUs 0 .. N-1 (under MPI, the rank's own)
  int code = reduce::run_bench(bench, argc, argv);
  code = world.agree(code);
#ifdef REDUCE_WITH_MPI
  MPI_Finalize();
#endif
  return code;
}
