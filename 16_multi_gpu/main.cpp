// Step 16: one array, several GPUs, NCCL.
//
// Each GPU holds a shard (n / N floats, contiguous) and reduces it with step 10's launcher, linked from
// its step and not copied; NCCL all-gathers the N partial sums and every GPU adds them in rank order, so
// the total is bitwise the same on every GPU and run (team.cuh says why not ncclAllReduce). Two modes
// give the same bits for any number of ranks (ranks.cuh): --reproducible, 14_reproducible's order over
// the ranks, and --exact, 15_exact's integer accumulators summed by an int64 all-reduce and rounded
// once; --virtual-ranks N runs N ranks on one GPU. Everything compared is timed one way, in the same
// interleaved rounds (rounds.cuh). This file turns the runs into the harness's records; world.hpp is
// the world of processes: 16_multi_gpu drives every GPU, 16_multi_gpu_mpi is one process per GPU.
// Usage: ./16_multi_gpu [--gpus 2] [--n 2^32 | --sweep 16:32] [--single-gpu] [--reproducible] [--exact]
//        mpirun -np 2 ./16_multi_gpu_mpi [the same, without the two modes]
#include <algorithm>
#include <cstdio>
#include <vector>

#include "bits.hpp"  // 14_reproducible_host: a float's bits as text
#include "harness.cuh"
#include "input.hpp"
#include "multi_gpu.hpp"
#include "rounds.cuh"
#include "world.hpp"

namespace {

using multigpu::world;

constexpr const char* kStep = "16_multi_gpu";  // the record's step: both programs are this one step
constexpr const char* kLesson = "one array over several GPUs: step 10 on each shard, NCCL joins the partial sums";

// A mode's record (--reproducible or --exact): its runs checked against the reference and, bit for bit,
// against its step alone on the first GPU; compared with the ordinary mode and that step, same rounds.
reduce::Report mode_record(multigpu::Lineup& line, multigpu::Lineup::Mode& m, reduce::Report r, const reduce::Reference& ref,
                           bool unchanged, const reduce::Options& opt, const multigpu::Plan& plan) {
  const multigpu::Totals t = m.team.totals(), alone = m.solo.totals();
  reduce::fill_timing(r, reduce::summarize(m.runs.ms), t.identical, m.team.shape());
  const int shown = reduce::check_runs(r, [&](int k) { return reduce::Verdict(t.results[k], ref, r.n, opt.pattern); });
  reduce::finish(r, unchanged);
  multigpu::ReproducibleFields f;
  f.exact = m.team.sum() == multigpu::Sum::exact;
  f.ranks = m.team.ranks();
  f.virtual_ranks = m.team.virtual_ranks();
  f.gpus = f.virtual_ranks ? 1 : f.ranks;
  f.n_per_gpu = plan.per_gpu ? r.n / f.ranks : 0;
  f.tiles = m.team.tiles();
  f.tiles_per_rank = m.team.tiles_per_rank();
  f.limbs = m.team.limbs();
  f.result_bits = repro::bits_text(t.results[shown]);
  f.single_bits = alone.identical ? repro::bits_text(alone.results.back()) : "differs from run to run";
  f.ranks_agree = t.agree;
  NCCL_CHECK(ncclGetVersion(&f.nccl_version));
  f.timing = line.timing(&m);
  f.ordinary = reduce::summarize(line.ordinary().ms);
  multigpu::add_reproducible_fields(r, f);
  return r;
}

// One size: load, time every contender in the same rounds, then one record per mode (rank 0 prints).
void measure_size(multigpu::Lineup& line, const reduce::Options& opt, const multigpu::Plan& plan, std::int64_t n,
                  reduce::Emitter& emit) {
  reduce::Options at_n = opt;
  at_n.n = n;
  std::vector<float> host;  // the whole array in host memory, where the modes or the CPU yardsticks need it
  if (world.root() && (line.needs_host() || opt.cpu_runs > 0)) {
    host.resize(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    reduce::fill_input(host.data(), n, opt.pattern, opt.seed);
  }
  const float* whole = host.empty() ? nullptr : host.data();
  const reduce::Reference ref = world.total(line.load(n, opt.pattern, opt.seed, whole));
  line.time(opt.warmup, opt.iters);
  for (multigpu::Contender* c : line.contenders()) world.max_each(c->ms);  // the slowest process's, per run

  multigpu::Team& team = line.team();
  const reduce::Report common = reduce::fill_common(emit, at_n, team.first_device());
  reduce::Report r = common;
  if (whole && opt.cpu_runs > 0) reduce::time_cpu_yardsticks(r, whole, n, opt.cpu_runs);
  const multigpu::Totals t = team.totals();
  reduce::fill_timing(r, reduce::summarize(line.ordinary().ms), t.identical, team.shape());
  reduce::check_runs(r, [&](int k) { return reduce::Verdict(t.results[k], ref, n, opt.pattern); }, world.root());
  const bool unchanged = world.all(line.input_unchanged(whole));
  reduce::finish(r, unchanged, world.root());

  multigpu::TeamFields f;
  f.mode = world.mode();
  f.gpus = team.ranks();
  f.n_per_gpu = plan.per_gpu ? n / f.gpus : 0;
  f.gpus_agree = world.all(t.agree) && world.same_everywhere(t.results);
  if (const multigpu::Solo* alone = line.step10_alone())
    for (float v : alone->totals().results) f.single_gpu_correct &= reduce::check_result(v, ref, n, r.pattern).passed;
  f.single_gpu_correct = world.all(f.single_gpu_correct);
  NCCL_CHECK(ncclGetVersion(&f.nccl_version));
  f.timing = line.timing();
  r.passed = r.passed && f.gpus_agree && f.single_gpu_correct;
  multigpu::add_team_fields(r, f);
  const char* wrong = !f.gpus_agree ? "the GPUs hold different totals" : !f.single_gpu_correct ? "step 10 alone was wrong" : nullptr;
  if (world.root() && wrong) std::fprintf(stderr, "%s: n = %lld: %s\n", world.name.c_str(), static_cast<long long>(n), wrong);
  emit(r);
  for (auto& m : line.modes()) emit(mode_record(line, *m, common, ref, unchanged, opt, plan));
}

void measure(const reduce::Options& opt, const reduce::DeviceInfo&, reduce::Emitter& emit) {
  multigpu::Plan plan = multigpu::plan_of(opt);
  if (plan.virtual_ranks) plan.gpus = 1;  // the ordinary mode beside N virtual ranks: GPU 0 alone
  const int gpus = multigpu::team_size(plan);
  const std::vector<std::int64_t> ns = multigpu::sizes(plan, opt.n, plan.virtual_ranks ? plan.virtual_ranks : gpus);
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
    multigpu::Lineup line(std::move(team), plan, world.root());
    for (std::int64_t n : ns) measure_size(line, opt, plan, n, emit);
  });
}

reduce::Bench make_bench() {
  reduce::Bench b{kStep, kLesson};
  b.program = world.name.c_str();
  b.spec = multigpu::option_spec(multigpu::kMpi, multigpu::shard_step_default_block());
  b.check = [](const reduce::Options& opt) { multigpu::check_options(opt, multigpu::kMpi, world.size); };
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
