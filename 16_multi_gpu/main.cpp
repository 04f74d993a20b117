// Step 16: one array, several GPUs, NCCL. Each GPU holds a shard (n / N floats, contiguous) and reduces it with step
// 10's launcher, linked from its step and not copied; NCCL all-gathers the N partial sums and every GPU adds them in
// rank order, so the total is bitwise the same on every GPU and run (team.cuh says why not ncclAllReduce). Two modes
// give the same bits for any number of ranks (ranks.cuh): --reproducible, 14_reproducible's order over the ranks, and
// --exact, 15_exact's integer accumulators summed by an int64 all-reduce and rounded once; --virtual-ranks N runs N
// ranks on one GPU. Everything a record compares is timed one way, in the same interleaved rounds (rounds.cuh).
// world.hpp: 16_multi_gpu drives every GPU; 16_multi_gpu_mpi is one process per GPU under mpirun.
// Usage: ./16_multi_gpu [--gpus 2] [--n 2^32 | --sweep 16:32] [--single-gpu] [--pattern int] [--format json]
//        ./16_multi_gpu --reproducible | --exact [--gpus 2 | --virtual-ranks 3] [--n 16777221]
//        mpirun -np 2 ./16_multi_gpu_mpi [the same, without the two modes]
#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "14_reproducible/bits.hpp"  // 14_reproducible_host: a float's bits as text
#include "harness.cuh"
#include "input.hpp"
#include "multi_gpu.hpp"
#include "rounds.cuh"
#include "world.hpp"

namespace {

using step16::world;

constexpr const char* kStep = "16_multi_gpu";  // the record's step: both programs are this one step
constexpr const char* kLesson = "one array over several GPUs: step 10 on each shard, NCCL joins the partial sums";
step16::Plan parsed;  // 16's own options, as the parser sets them (option_spec binds them)

// How the record's runs were timed, and its collective and step alone, from the same rounds.
step16::Timing timing_of(const step16::Lineup& line) {
  step16::Timing t;
  t.collective = reduce::summarize(line.collective().ms);
  if (line.solo()) {
    t.single = reduce::summarize(line.alone().ms);
    t.single_step = line.solo()->step().name;
  }
  t.head_start_ms = line.timed().head_start_ms;
  t.enqueue_ms = reduce::summarize(line.timed().enqueue_ms).median;
  t.late_runs = line.timed().late;
  return t;
}

// One size: load, time every contender in the same rounds, check, and the record (rank 0 prints it).
void measure_size(step16::Lineup& line, const reduce::Options& opt, const step16::Plan& plan, std::int64_t n,
                  reduce::Emitter& emit) {
  reduce::Options at_n = opt;
  at_n.n = n;
  step16::ReproducibleTeam* mode = line.mode();
  std::vector<float> host;  // the whole array in host memory, where the mode or the CPU yardsticks need it
  if (world.root() && (mode || opt.cpu_runs > 0)) {
    host.resize(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    reduce::fill_input(host.data(), n, opt.pattern, opt.seed);
  }
  const float* whole = host.empty() ? nullptr : host.data();
  const reduce::Reference ref = world.total(line.load(n, opt.pattern, opt.seed, whole));
  line.time(opt.warmup, opt.iters);
  for (step16::Contender* c : line.contenders()) world.max_each(c->ms);  // the slowest process's, per run
  step16::Team& team = line.team();
  reduce::Report r = reduce::fill_common(emit, at_n, team.first_device());
  if (whole && opt.cpu_runs > 0) reduce::time_cpu_yardsticks(r, whole, n, opt.cpu_runs);
  const step16::Totals t = mode ? mode->totals() : team.totals();
  reduce::fill_timing(r, reduce::summarize(line.timed().ms), t.identical, mode ? mode->shape() : team.run_shape());
  const int shown = reduce::check_runs(
      r, [&](int k) { return reduce::Verdict(t.results[k], ref, n, opt.pattern); }, world.root());
  reduce::finish(r, world.all(line.input_unchanged(whole)), world.root());
  const step16::Totals alone = line.solo() ? line.solo()->totals() : step16::Totals{};
  int nccl_version = 0;
  NCCL_CHECK(ncclGetVersion(&nccl_version));

  if (mode) {
    step16::ReproducibleFields f = mode->fields();
    f.n_per_gpu = plan.per_gpu ? n / f.ranks : 0;
    f.result_bits = step14::bits_text(t.results[shown]);
    f.single_bits =
        alone.identical && !alone.results.empty() ? step14::bits_text(alone.results.back()) : "differs run to run";
    f.ranks_agree = t.agree;
    f.nccl_version = nccl_version;
    f.timing = timing_of(line);
    f.ordinary = reduce::summarize(line.ordinary().ms);
    step16::add_reproducible_fields(r, f);
    return emit(r);
  }
  step16::TeamFields f;
  f.mode = world.mode();
  f.gpus = team.ranks();
  f.n_per_gpu = plan.per_gpu ? n / f.gpus : 0;
  f.gpus_agree = world.all(t.agree) && world.same_everywhere(t.results);
  for (float v : alone.results)
    f.single_gpu_correct = f.single_gpu_correct && reduce::check_result(v, ref, n, r.pattern).passed;
  f.single_gpu_correct = world.all(f.single_gpu_correct);
  f.nccl_version = nccl_version;
  f.timing = timing_of(line);
  r.passed = r.passed && f.gpus_agree && f.single_gpu_correct;
  step16::add_team_fields(r, f);
  if (world.root() && !(f.gpus_agree && f.single_gpu_correct))
    std::fprintf(stderr, "%s: n = %lld: %s\n", world.name.c_str(), static_cast<long long>(n),
                 f.gpus_agree ? "step 10 alone was wrong" : "the GPUs hold different totals");
  emit(r);
}

void measure(const reduce::Options& opt, const reduce::DeviceInfo&, reduce::Emitter& emit) {
  step16::Plan plan = parsed;
  if (plan.virtual_ranks) plan.gpus = 1;  // the ordinary mode beside N virtual ranks: GPU 0 alone
  const int gpus = step16::team_size(plan);
  const std::vector<std::int64_t> ns = step16::sizes(plan, opt.n, plan.virtual_ranks ? plan.virtual_ranks : gpus);
  world.speak();
  world.ends_all_on_failure(opt.n, [&] {
#ifdef REDUCE_WITH_MPI
    ncclUniqueId id;
    if (world.root()) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    step16::Team team = step16::Team::one_rank(world.local_rank, world.size, world.rank, id, opt.block);
#else
    step16::Team team = step16::Team::all_local(gpus, opt.block);
#endif
    std::optional<step16::ReproducibleTeam> mode;  // check_options refused the modes under MPI
    const step16::Sum sum = plan.exact ? step16::Sum::exact : step16::Sum::order;
    const int block = step16::single_step(sum).block.size;  // the mode's step's own, as alone
    if (plan.reproducible || plan.exact)
      mode = plan.virtual_ranks ? step16::ReproducibleTeam::virtual_ranks(sum, 0, plan.virtual_ranks, block)
                                : step16::ReproducibleTeam::nccl_ranks(sum, gpus, block);
    step16::Lineup line(std::move(team), std::move(mode), plan.single_gpu, world.root());
    for (std::int64_t n : ns) measure_size(line, opt, plan, n, emit);
  });
}

}  // namespace

// A main() of its own rather than the one line run_bench(bench, argc, argv) of the other steps: under
// MPI every rank runs this program, so MPI has to start before the harness and end after it, and the
// ranks have to leave with one exit code. Without MPI, World is trivial.
int main(int argc, char** argv) {
#ifdef REDUCE_WITH_MPI
  MPI_Init(&argc, &argv);
  world.join();
#endif
  reduce::Bench b{kStep, kLesson};
  b.program = world.name.c_str();
  b.spec = step16::option_spec(step16::kMpi, step16::shard_step_default_block(), parsed);
  b.check = [](const reduce::Options& opt) { step16::check_options(opt, parsed, step16::kMpi, world.size); };
  b.measure = measure;
  b.opens_own_devices = true;  // the team opens GPUs 0 .. N-1 (under MPI, the rank's own)
  const int code = world.agree(reduce::run_bench(b, argc, argv));
#ifdef REDUCE_WITH_MPI
  MPI_Finalize();
#endif
  return code;
}
