// Step 16: one array, several GPUs, NCCL.
//
// What this step shows: the reduction of one logical array spread over N GPUs. Each GPU holds a
// shard (n / N floats, contiguous) and reduces it with step 10's launcher, the suite's fastest
// hand-written kernel, linked from its step and not copied. NCCL then combines the N partial sums on
// the devices: an all-gather puts all N on every GPU, and every GPU adds them in rank order, so the
// total is bitwise the same on every GPU and on every run (team.cuh says why not ncclAllReduce).
// What changed from step 10: nothing in the kernel; around it, the shards, a communicator and a
// collective. Two modes give the same bits for any number of ranks (ranks.cuh): --reproducible,
// 14_reproducible's order over the ranks, and --exact, 15_exact's integer accumulators summed by an
// ordinary int64 all-reduce and rounded once; --virtual-ranks N runs N ranks on one GPU.
// This file is the step's record for the harness (reduce::Bench); the world of processes is
// world.hpp. The same source builds 16_multi_gpu (one process drives every GPU) and 16_multi_gpu_mpi
// (one process per GPU under mpirun: rank 0 makes the NCCL id, MPI broadcasts it).
// Usage: ./16_multi_gpu [--gpus 2] [--n 2^32] [--single-gpu] [--pattern int] [--format json] [--help]
//        ./16_multi_gpu --reproducible | --exact [--gpus 2 | --virtual-ranks 3] [--n 16777221]
//        mpirun -np 2 ./16_multi_gpu_mpi [same options, without the two modes]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bits.hpp"  // 14_reproducible_host: a float's bits as text
#include "harness.cuh"
#include "input.hpp"
#include "multi_gpu.hpp"
#include "ranks.cuh"
#include "team.cuh"
#include "world.hpp"

namespace {

using multigpu::kMpi;
using multigpu::kProgram;
using multigpu::world;

constexpr const char* kStep = "16_multi_gpu";  // the record's step: both programs are this one step
constexpr const char* kLesson = "one array over several GPUs: step 10 on each shard, NCCL joins the partial sums";

// One size: load, the CPU yardsticks (rank 0), run, check, and the record (printed by rank 0). The
// team (team.cuh) runs step 10 per shard, an all-gather and the add in rank order.
void measure_size(multigpu::Team& team, const reduce::Options& opt, const multigpu::Plan& plan, std::int64_t n,
                  reduce::Emitter& emit) {
  const int gpus = team.ranks();
  const bool baseline = plan.single_gpu || gpus == 1;
  reduce::Options at_n = opt;
  at_n.n = n;
  reduce::Report r = reduce::fill_common(emit, at_n, team.first_device());
  if (world.root() && opt.cpu_runs > 0) {  // the whole array in host memory, for these only
    std::unique_ptr<float[]> host(new float[std::max<std::int64_t>(n, 1)]);
    reduce::fill_input(host.get(), n, opt.pattern, opt.seed);
    reduce::time_cpu_yardsticks(r, host.get(), n, opt.cpu_runs);
  }

  const reduce::Reference ref = world.total(team.load(n, opt.pattern, opt.seed, baseline && world.root()));
  multigpu::Timings t = team.run(opt.warmup, opt.iters);
  world.max_each(t.ms);
  world.max_each(t.collective_ms);
  const bool identical = std::all_of(t.results.begin(), t.results.end(),
                                     [&](float x) { return std::memcmp(&x, &t.results[0], sizeof x) == 0; });
  reduce::LaunchShape shape = team.shard_shape();
  if (shape.launches == 0) shape.block = team.block();
  shape.grid *= gpus;  // every GPU's blocks, so that per_thread reads right
  shape.launches += 1; // step 10's kernels and the add in rank order (NCCL's not counted)
  reduce::fill_timing(r, reduce::summarize(t.ms), identical, shape);
  reduce::check_runs(r, [&](int k) { return reduce::Verdict(t.results[k], ref, n, opt.pattern); }, world.root());
  reduce::finish(r, world.all(team.input_unchanged()), world.root());

  multigpu::TeamFields f;
  f.mode = world.mode();
  f.gpus = gpus;
  f.n_per_gpu = plan.per_gpu ? n / gpus : 0;
  f.collective_ms = reduce::summarize(t.collective_ms);
  f.gpus_agree = world.all(t.gpus_agree) && world.same_everywhere(t.results);
  reduce::Summary single_ms;
  if (baseline && world.root()) {
    const reduce::Runs<float> one = team.single_gpu(opt.warmup, opt.iters);
    single_ms = one.summary;
    for (float v : one.results) f.single_gpu_correct = f.single_gpu_correct && reduce::check_result(v, ref, n, r.pattern).passed;
  }
  f.single_gpu_correct = world.all(f.single_gpu_correct);
  NCCL_CHECK(ncclGetVersion(&f.nccl_version));
  r.passed = r.passed && f.gpus_agree && f.single_gpu_correct;
  multigpu::add_team_fields(r, f);
  if (baseline) reduce::add_comparison(r, "single_gpu", single_ms);  // step 10 alone on one GPU (rank 0's)

  if (world.root()) {
    if (!f.gpus_agree) std::fprintf(stderr, "%s: n = %lld: the GPUs hold different totals\n", kProgram, static_cast<long long>(n));
    if (!f.single_gpu_correct) std::fprintf(stderr, "%s: n = %lld: step 10 alone gave a wrong result\n", kProgram, static_cast<long long>(n));
  }
  emit(r);
}

// One size of --reproducible or --exact (one process): the ranks' sum, checked against the reference
// and against the mode's single launch bit for bit; then the ordinary team on as many GPUs, timed the
// same way, for the comparison.
void measure_ranks_size(multigpu::ReproducibleTeam& team, multigpu::Team& ordinary, const reduce::Options& opt,
                        const multigpu::Plan& plan, std::int64_t n, reduce::Emitter& emit) {
  reduce::Options at_n = opt;
  at_n.n = n;
  reduce::Report r = reduce::fill_common(emit, at_n, team.first_device());
  std::vector<float> host(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  reduce::fill_input(host.data(), n, opt.pattern, opt.seed);
  reduce::time_cpu_yardsticks(r, host.data(), n, opt.cpu_runs);
  const reduce::Reference ref = reduce::reference_sum(host.data(), n);
  const int block = multigpu::single_step(team.sum()).block.size;
  const float single = multigpu::single_launch(team.sum(), host.data(), n, team.first_device().ordinal, block);

  team.load(host.data(), n);
  const multigpu::ReproducibleResult res = team.run(opt.warmup, opt.iters);
  reduce::fill_timing(r, res.summary, res.runs_identical, res.shape);
  const int shown = reduce::check_runs(r, [&](int k) { return reduce::Verdict(res.results[k], ref, n, opt.pattern); });
  reduce::finish(r, team.input_unchanged(host.data()));

  ordinary.load(n, opt.pattern, opt.seed);
  const reduce::Summary ordinary_ms = reduce::summarize(ordinary.run(opt.warmup, opt.iters).ms);

  multigpu::ReproducibleFields f;
  f.exact = team.sum() == multigpu::Sum::exact;
  f.ranks = team.ranks();
  f.virtual_ranks = team.virtual_ranks();
  f.gpus = f.virtual_ranks ? 1 : f.ranks;
  f.n_per_gpu = plan.per_gpu ? n / f.ranks : 0;
  f.tiles = res.tiles;
  f.tiles_per_rank = res.tiles_per_rank;
  f.limbs = res.limbs;
  f.result_bits = repro::bits_text(res.results[shown]);
  f.single_bits = repro::bits_text(single);
  f.ranks_agree = res.ranks_agree;
  NCCL_CHECK(ncclGetVersion(&f.nccl_version));
  multigpu::add_reproducible_fields(r, f);
  reduce::add_comparison(r, "ordinary", ordinary_ms);  // the ordinary mode on as many GPUs
  emit(r);
}

// --reproducible or --exact: one process drives every rank (check_options refused them under MPI).
void measure_ranks(const reduce::Options& opt, const multigpu::Plan& plan, reduce::Emitter& emit) {
  multigpu::Plan on = plan;
  if (plan.virtual_ranks) on.gpus = 1;
  const int gpus = multigpu::team_size(on);
  const int ranks = plan.virtual_ranks ? plan.virtual_ranks : gpus;
  const std::vector<std::int64_t> ns = multigpu::sizes(plan, opt.n, ranks);
  const multigpu::Sum sum = plan.exact ? multigpu::Sum::exact : multigpu::Sum::order;
  const int block = multigpu::single_step(sum).block.size;
  multigpu::ReproducibleTeam team = plan.virtual_ranks ? multigpu::ReproducibleTeam::virtual_ranks(sum, 0, ranks, block)
                                                       : multigpu::ReproducibleTeam::nccl_ranks(sum, gpus, block);
  multigpu::Team ordinary = multigpu::Team::all_local(gpus, opt.block);
  for (std::int64_t n : ns) measure_ranks_size(team, ordinary, opt, plan, n, emit);
}

void measure(const reduce::Options& opt, const reduce::DeviceInfo&, reduce::Emitter& emit) {
  const multigpu::Plan plan = multigpu::plan_of(opt);
  if (plan.reproducible || plan.exact) return measure_ranks(opt, plan, emit);
  const int gpus = multigpu::team_size(plan);
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

reduce::Bench make_bench() {
  reduce::Bench b{kStep, kLesson};
  b.program = world.name.c_str();
  b.spec = multigpu::option_spec(kMpi, multigpu::shard_step_default_block());
  b.check = [](const reduce::Options& opt) { multigpu::check_options(opt, kMpi, world.size); };
  b.measure = measure;
  b.opens_own_devices = true;  // the team opens GPUs 0 .. N-1 (under MPI, the rank's own)
  return b;
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
  int code = reduce::run_bench(make_bench(), argc, argv);
  code = world.agree(code);
#ifdef REDUCE_WITH_MPI
  MPI_Finalize();
#endif
  return code;
}
