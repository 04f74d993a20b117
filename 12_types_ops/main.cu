// 12_types_ops's record for the harness (reduce::Bench): its options (--type, --op), and one
// measurement: the step's reduction for that type and operator, and its rivals CUB's DeviceReduce for
// the same and, for stats, this step's sum of the same type, each timed and checked the same way.
#include <string>

#include "harness.cuh"
#include "types_ops.cuh"

namespace {

using reduce::Op;
using reduce::Type;

template <typename T, Op O>
void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  using S = step12::State<T, O>;
  using Sum = step12::State<T, Op::sum>;
  using OpT = reduce::op_t<O, T>;
  const std::int64_t n = opt.n;
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count};  // opt.block: the fixed 512
  const std::size_t scratch_bytes = step12::scratch_bytes<T, O>(n, cfg);
  reduce::Testbed<T> bed(opt, device, scratch_bytes);
  const reduce::TypedReference<T> ref = reduce::typed_reference(bed.host.get(), n, /*moments=*/O == Op::stats);
  // The CPU yardstick: the same operator folded element by element on one core.
  const double cpu_ms = reduce::time_cpu(opt.cpu_runs, [&] {
    S s = OpT::identity();
    for (std::int64_t i = 0; i < n; ++i) s = OpT::combine(s, OpT::lift(bed.host[i]));
    volatile double sink = reduce::shown_value<T, O>(s);
    (void)sink;
  });
  const auto scratch = bed.scratch(scratch_bytes);
  const auto mine = bed.template time<S>(1, [&](S* out, int k) {
    return step12::launch<T, O>(bed.in.get(), n, out, reduce::view(scratch), cfg, bed.stream.get());
  });
  // The rivals: CUB's DeviceReduce for the same type and operator, and for stats this step's sum of the
  // same type (the bar: stats >= 0.95x of it).
  const reduce::Rival<T, S> cub_rival{"cub", step12::cub_scratch_bytes<T, O>, step12::cub_launch<T, O>, 1, "",
                                      {reduce::number_field("cub_passes", O == Op::stats ? 4 : 1)}};
  const auto cub = bed.rival(cub_rival);
  reduce::RivalRuns<Sum> sum;
  if constexpr (O == Op::stats)
    sum = bed.rival(reduce::Rival<T, Sum>{"sum", [cfg](std::int64_t m) { return step12::scratch_bytes<T, Op::sum>(m, cfg); },
                                         [cfg](const T* in, std::int64_t m, Sum* out, reduce::Scratch s, cudaStream_t st) {
                                           return step12::launch<T, Op::sum>(in, m, out, s, cfg, st);
                                         }});

  reduce::Report r = reduce::fill_common(emit, opt, device);
  r.element_bytes = sizeof(T);
  r.element_name = std::string(reduce::to_string(reduce::type_tag<T>())) + "s";
  r.cpu_ms = cpu_ms;
  reduce::fill_timing(r, mine);
  const int shown = reduce::check_runs(r, [&](int k) { return reduce::typed_verdict<T, O>(*mine.run(k), ref, opt.pattern); });
  reduce::finish(r, bed.input_unchanged());

  r.extra = {reduce::text_field("type", reduce::to_string(reduce::type_tag<T>())),
             reduce::text_field("op", reduce::to_string(O))};
  for (reduce::Field& f : reduce::typed_result_fields<T, O>(*mine.run(shown))) r.extra.push_back(std::move(f));
  reduce::add_rival(r, cub, [&](const S* x) {
    S s = *x;
    if constexpr (O == Op::stats)  // CUB's passes make no moments: the check sees its sum, min, max and squares
      s.moments = {ref.count, static_cast<decltype(s.moments.mean)>(ref.mean), static_cast<decltype(s.moments.m2)>(ref.m2)};
    return reduce::typed_verdict<T, O>(s, ref, opt.pattern);
  });
  if constexpr (O == Op::stats)
    reduce::add_rival(r, sum, [&](const Sum* x) { return reduce::typed_verdict<T, Op::sum>(*x, ref, opt.pattern); });
  emit(r);
}

void measure_chosen(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const Type type = reduce::by_name(opt.extra.at("--type"), {Type::f32, Type::f64, Type::i32, Type::i64});
  const Op op = reduce::by_name(opt.extra.at("--op"), {Op::sum, Op::min, Op::max, Op::stats});
  reduce::with_type(type, [&](auto t) {
    return reduce::with_op(op, [&](auto o) {
      measure<decltype(t), decltype(o)::value>(opt, device, emit);
      return 0;
    });
  });
}

reduce::Bench make_bench() {
  reduce::Bench b{"12_types_ops", "any type, any associative and commutative operator"};
  b.spec.summary = "Reduces n elements of --type with --op on the GPU";
  b.spec.extra = {
      {"--type", {"float", "double", "int32", "int64"},
       "element type; an int32 sum accumulates in int64 (exact up to 2^32 elements),\n"
       "                   an int64 sum wraps as two's complement"},
      {"--op", {"sum", "min", "max", "stats"},
       "operator; min and max propagate NaN, min(-0,+0) = -0, max(-0,+0) = +0, and n = 0\n"
       "                   gives the identity (+inf / -inf, the type's max / min); stats = count,\n"
       "                   sum, min, max, sum of squares, mean and variance (M2 / n) in one pass"},
  };
  for (reduce::Pattern p : {reduce::Pattern::nan, reduce::Pattern::inf, reduce::Pattern::ties, reduce::Pattern::limits})
    b.spec.patterns.push_back(p);
  b.spec.block = step12::kBlockRule;
  b.spec.notes =
      "Besides the step, the run times CUB's DeviceReduce for the same type and operator (stats: its four\n"
      "passes Sum, Min, Max and a sum of squares) and, for stats, this step's sum of the same type; the record\n"
      "gives each as <name>_median_ms, <name>_gbps, vs_<name> and <name>_passed (its every run checked like the\n"
      "step's; CUB's min and max need not propagate NaN). --cpu-runs times the same operator folded\n"
      "element by element on one CPU core (there is no all-cores yardstick here).";
  b.measure = measure_chosen;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
