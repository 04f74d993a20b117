// Step 14: one array, several GPUs, NCCL.
//
// What this step shows: the reduction of one logical array spread over N GPUs. Each GPU holds a
// shard (n / N floats, contiguous) and reduces it with step 10's launcher, the suite's fastest
// hand-written kernel, linked from its step and not copied. NCCL then combines the N partial sums on
// the devices: an all-gather puts all N on every GPU, and every GPU adds them in rank order, so the
// total is bitwise the same on every GPU and on every run (team.cuh says why not ncclAllReduce).
// What changed from step 10: nothing in the kernel; around it, the shards, a communicator and a
// collective.
// The same source builds two programs:
//   14_multi_gpu      one process drives every GPU (ncclCommInitAll, one group call per collective);
//   14_multi_gpu_mpi  one process per GPU under mpirun (REDUCE_WITH_MPI: rank 0 makes the NCCL id,
//                     MPI broadcasts it, every rank calls ncclCommInitRank), the path across machines.
// Usage: ./14_multi_gpu [--gpus 2] [--n 2^32] [--single-gpu] [--pattern int] [--format json] [--help]
//        mpirun -np 2 ./14_multi_gpu_mpi [same options]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#ifdef REDUCE_WITH_MPI
#include <mpi.h>
#endif

#include "multi_gpu.hpp"
#include "team.cuh"

namespace {

using multigpu::Record;

#ifdef REDUCE_WITH_MPI
constexpr bool kMpi = true;
#else
constexpr bool kMpi = false;
#endif

// What the processes of one run share. One process: it is the whole world, and every operation is
// the identity. Under MPI: every rank of MPI_COMM_WORLD.
struct World {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the ranks of this machine: the GPU this rank uses
  bool root() const { return rank == 0; }
  const char* mode() const { return kMpi ? "mpi" : "single_process"; }

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
};

// How many GPUs this run uses, or a reason why it cannot run here (exit 77).
int visible_gpus(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *why = std::string("the CUDA runtime reports ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
           "); is an NVIDIA GPU with its driver present?";
    return 0;
  }
  if (count == 0) *why = "the CUDA runtime found no device";
  return count;
}

// Checks every run's total, as the single-GPU harness does; fills the record's result fields.
void check_runs(Record& rec, const std::vector<float>& results, const reduce::Reference& ref) {
  int first_wrong = -1;
  rec.runs_total = static_cast<int>(results.size());
  rec.runs_identical = true;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const reduce::Check c = reduce::check_result(results[k], ref, rec.n, rec.pattern);
    rec.runs_correct += c.passed;
    if (!c.passed && first_wrong < 0) first_wrong = static_cast<int>(k);
    rec.runs_identical = rec.runs_identical && std::memcmp(&results[k], &results[0], sizeof(float)) == 0;
  }
  const std::size_t shown = first_wrong >= 0 ? first_wrong : results.size() - 1;
  const reduce::Check c = reduce::check_result(results[shown], ref, rec.n, rec.pattern);
  rec.result = results[shown];
  rec.reference = ref.sum;
  rec.abs_error = c.abs_error;
  rec.tolerance = c.tolerance;
  rec.exact_check = c.exact;
  if (first_wrong >= 0)
    std::fprintf(stderr, "14_multi_gpu: n = %lld on %d GPUs: run %d of %d returned %.9g, reference %.9g\n",
                 static_cast<long long>(rec.n), rec.gpus, first_wrong + 1, rec.runs_total,
                 static_cast<double>(results[first_wrong]), ref.sum);
}

bool all_correct(const std::vector<float>& results, const reduce::Reference& ref, std::int64_t n, reduce::Pattern p) {
  for (float v : results)
    if (!reduce::check_result(v, ref, n, p).passed) return false;
  return true;
}

// One size: load, run, check, and (on rank 0) print the record. Returns 0 or 1.
int measure(multigpu::Team& team, const World& world, const multigpu::Options& opt, std::int64_t n) {
  const reduce::Options& o = opt.common;
  const int gpus = team.ranks();
  const bool baseline = opt.single_gpu || gpus == 1;
  const reduce::Reference ref = world.total(team.load(n, o.pattern, o.seed, baseline && world.root()));

  multigpu::Timings t = team.run(o.warmup, o.iters);
  world.max_each(t.ms);
  world.max_each(t.collective_ms);

  Record rec;
  rec.mode = world.mode();
  rec.gpus = gpus;
  rec.n = n;
  rec.n_per_gpu = opt.per_gpu ? n / gpus : 0;
  rec.shard_min = n;
  for (int r = 0; r < gpus; ++r) {
    rec.shard_min = std::min(rec.shard_min, multigpu::shard_of(n, gpus, r).count);
    rec.shard_max = std::max(rec.shard_max, multigpu::shard_of(n, gpus, r).count);
  }
  rec.pattern = o.pattern;
  rec.seed = o.seed;
  rec.block = o.block;
  rec.iters = o.iters;
  rec.warmup = o.warmup;
  rec.ms = reduce::summarize(t.ms);
  rec.collective_ms = reduce::summarize(t.collective_ms);
  check_runs(rec, t.results, ref);
  rec.gpus_agree = world.all(t.gpus_agree) && world.same_everywhere(t.results);
  rec.input_unchanged = world.all(team.input_unchanged());
  if (baseline && world.root()) {
    const multigpu::Timings one = team.single_gpu(o.warmup, o.iters);
    rec.single_gpu_ms = reduce::summarize(one.ms).median;
    rec.single_gpu_correct = all_correct(one.results, ref, n, o.pattern);
  }
  rec.single_gpu_correct = world.all(rec.single_gpu_correct);
  rec.passed = rec.runs_correct == rec.runs_total && rec.runs_identical && rec.gpus_agree && rec.input_unchanged &&
               rec.single_gpu_correct;

  const reduce::DeviceInfo& d = team.first_device();
  rec.device = d.name;
  rec.cuda_runtime = d.runtime_version;
  rec.cuda_driver = d.driver_version;
  NCCL_CHECK(ncclGetVersion(&rec.nccl_version));
  if (world.root()) {
    std::cout << (o.format == reduce::Format::json ? multigpu::format_json(rec) + "\n" : multigpu::format_text(rec));
    std::cout.flush();
  }
  return rec.passed ? 0 : 1;
}

// Everything up to and including the communicator: each failure here is agreed on by every process
// first, so that they all leave with the same code and none waits for the others forever.
int run(World& world, int argc, char** argv) {
  multigpu::Options opt;
  try {
    opt = multigpu::parse_options(argc, argv);
  } catch (const reduce::UsageError& e) {
    if (world.root()) std::fprintf(stderr, "14_multi_gpu: %s\n", e.what());
    return 2;
  }
  if (opt.common.help) {
    if (world.root()) std::cout << multigpu::usage(argv[0], kMpi, multigpu::shard_step_default_block());
    return 0;
  }
  if (!opt.common.block_given) opt.common.block = multigpu::shard_step_default_block();

  std::string why;
  const int visible = visible_gpus(&why);
  const int gpus = kMpi ? world.size : (opt.gpus ? opt.gpus : visible);
  int code = 0;
  if (kMpi && opt.gpus && opt.gpus != world.size) {
    why = "--gpus " + std::to_string(opt.gpus) + " differs from the " + std::to_string(world.size) +
          " MPI ranks (one GPU per rank; start as many ranks as GPUs)";
    code = 2;
  } else if (visible == 0) {
    code = 77;
  } else if (kMpi ? world.local_rank >= visible : gpus > visible) {  // MPI: ranks may span machines
    why = "this run needs " + std::to_string(kMpi ? world.local_rank + 1 : gpus) +
          " GPUs on this machine and it shows " + std::to_string(visible);
    code = 77;
  }
  std::vector<std::int64_t> ns;
  if (code == 0) {
    try {
      ns = multigpu::sizes(opt, gpus);
    } catch (const reduce::UsageError& e) {
      why = e.what();
      code = 2;
    }
  }
  const int agreed = world.agree(code);
  const int root_code = world.from_root(code);
  if (agreed != 0) {
    // One line: rank 0's reason, or, where rank 0 could go on, each failing rank's own.
    if (code != 0 && (world.root() || root_code == 0))
      std::fprintf(stderr, "14_multi_gpu%s: %s%s\n", world.size > 1 ? (" rank " + std::to_string(world.rank)).c_str() : "",
                   code == 77 ? "no usable GPUs: " : "", why.c_str());
    return agreed;
  }

#ifdef REDUCE_WITH_MPI
  ncclUniqueId id;
  if (world.root()) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  multigpu::Team team = multigpu::Team::one_rank(world.local_rank, world.size, world.rank, id, opt.common.block);
#else
  multigpu::Team team = multigpu::Team::all_local(gpus, opt.common.block);
#endif
  int result = 0;
  for (std::int64_t n : ns) result = std::max(result, measure(team, world, opt, n));
  return world.agree(result);
}

}  // namespace

int main(int argc, char** argv) {
  World world;
#ifdef REDUCE_WITH_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  MPI_Comm node;  // the ranks of this machine: a rank's GPU is its place among them
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &world.local_rank);
  MPI_Comm_free(&node);
#endif
  int code = 1;
  bool escaped = true;  // an exception left run(): the other ranks may not know
  try {
    code = run(world, argc, argv);
    escaped = false;
  } catch (const reduce::NoUsableDevice& e) {
    std::fprintf(stderr, "14_multi_gpu: no usable GPUs: %s\n", e.what());
    code = 77;
  } catch (const reduce::CudaError& e) {
    code = reduce::is_unsupported_device_error(e.code()) ? 77 : 1;
    std::fprintf(stderr, "14_multi_gpu: %s: %s\n", code == 77 ? "no usable GPUs" : "CUDA error", e.what());
  } catch (const multigpu::NcclError& e) {
    std::fprintf(stderr, "14_multi_gpu: NCCL error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "14_multi_gpu: no usable machine: not enough host memory\n");
    code = 77;
  }
#ifdef REDUCE_WITH_MPI
  // A failure on one rank may leave the others waiting inside a collective: end them all, with this
  // code (mpirun passes it on).
  if (escaped && world.size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
#else
  (void)escaped;
#endif
  return code;
}
