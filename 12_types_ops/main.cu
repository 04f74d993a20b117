// 12_types_ops's record for the harness (reduce::Bench): its options (--type, --op), and one
// measurement: the step's reduction for that type and operator, CUB's DeviceReduce for the same,
// and for stats this step's sum of the same type, each timed and checked the same way.
#include <string>
#include <vector>

#include "harness.cuh"
#include "types_ops.cuh"

namespace {

using reduce::exact_text;
using reduce::Op;
using reduce::Type;

// The result's fields for the record: the value itself, or the parts of stats.
template <typename T, Op O>
void add_result_fields(const step12::State<T, O>& s, std::vector<reduce::Field>& out) {
  if constexpr (O != Op::stats) {
    out.push_back(reduce::text_field("result_exact", exact_text(s)));
  } else {
    const auto& m = s.moments;
    out.push_back(reduce::number_field("count", static_cast<double>(m.count)));
    out.push_back(reduce::text_field("sum", exact_text(s.sum)));
    out.push_back(reduce::text_field("min", exact_text(s.min)));
    out.push_back(reduce::text_field("max", exact_text(s.max)));
    out.push_back(reduce::number_field("sum_squares", s.sum_squares));
    out.push_back(reduce::number_field("mean", m.mean));
    out.push_back(reduce::number_field("variance", m.count > 0 ? m.m2 / m.count : 0.0));
  }
}

// The value reported as `result` (and `reference`): the result itself, or for stats its mean.
template <typename T, Op O>
double headline(const step12::State<T, O>& s) {
  if constexpr (O == Op::stats) return static_cast<double>(s.moments.mean);
  else return static_cast<double>(s);
}
template <typename T, Op O>
double headline(const reduce::TypedReference<T>& r) {
  if constexpr (O == Op::sum) return std::is_integral_v<T> ? static_cast<double>(r.exact_sum) : static_cast<double>(r.sum);
  else if constexpr (O == Op::min) return static_cast<double>(r.min);
  else if constexpr (O == Op::max) return static_cast<double>(r.max);
  else return static_cast<double>(r.mean);
}

template <typename T, Op O>
void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  using S = step12::State<T, O>;
  using OpT = reduce::op_t<O, T>;
  const std::int64_t n = opt.n;
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count};  // opt.block: the fixed 512
  const std::size_t scratch_bytes = step12::scratch_bytes<T, O>(n, cfg), cub_bytes = step12::cub_scratch_bytes<T, O>(n),
                    sum_scratch_bytes = step12::scratch_bytes<T, Op::sum>(n, cfg);
  const int runs = opt.warmup + opt.iters;
  reduce::ensure_device_memory(n * sizeof(T) + scratch_bytes + sum_scratch_bytes + cub_bytes +
                               3 * runs * sizeof(S) + 2 * device.l2_bytes + (64 << 20));

  reduce::Testbed<T> bed(opt, device);
  const reduce::TypedReference<T> ref = reduce::typed_reference(bed.host.get(), n, /*moments=*/O == Op::stats);
  // The CPU yardstick: the same operator folded element by element on one core.
  const double cpu_ms = reduce::time_cpu(opt.cpu_runs, [&] {
    S s = OpT::identity();
    for (std::int64_t i = 0; i < n; ++i) s = OpT::combine(s, OpT::lift(bed.host[i]));
    volatile double sink = headline<T, O>(s);
    (void)sink;
  });
  const auto scratch = bed.scratch(scratch_bytes), sum_scratch = bed.scratch(sum_scratch_bytes),
             cub_scratch = bed.scratch(cub_bytes);
  const auto mine = bed.template time<S>(1, [&](S* out, int k) {
    return step12::launch<T, O>(bed.in.get(), n, out, reduce::view(scratch), bed.config(cfg, k), bed.stream.get());
  });
  const auto cub = bed.template time<S>(1, [&](S* out, int) {
    return step12::cub_launch<T, O>(bed.in.get(), n, out, reduce::view(cub_scratch), bed.stream.get());
  });
  // stats: the plain sum of the same type, timed the same way (the bar: stats >= 0.95x of it).
  reduce::Summary sum_ms;
  if constexpr (O == Op::stats)
    sum_ms = bed.template time<step12::State<T, Op::sum>>(1, [&](step12::State<T, Op::sum>* out, int) {
                  return step12::launch<T, Op::sum>(bed.in.get(), n, out, reduce::view(sum_scratch), cfg, bed.stream.get());
                }).summary;

  reduce::Report r = reduce::fill_common(emit, opt, device);
  r.element_bytes = sizeof(T);
  r.element_name = std::string(reduce::to_string(reduce::type_tag<T>())) + "s";
  r.cpu_ms = cpu_ms;
  reduce::fill_timing(r, mine, bed.shape);
  const int shown = reduce::check_runs(r, [&](int k) {
    std::string what;
    const reduce::Check c = reduce::check_typed<T, O>(*mine.run(k), ref, opt.pattern, &what);
    return reduce::Verdict(c, headline<T, O>(*mine.run(k)), headline<T, O>(ref), what);
  });
  reduce::finish(r, bed.input_unchanged());

  r.extra = {reduce::text_field("type", reduce::to_string(reduce::type_tag<T>())),
             reduce::text_field("op", reduce::to_string(O))};
  add_result_fields<T, O>(*mine.run(shown), r.extra);
  r.extra.push_back(reduce::number_field("cub_passes", O == Op::stats ? 4 : 1));
  reduce::add_comparison(r, "cub", cub.summary);
  if constexpr (O == Op::stats) reduce::add_comparison(r, "sum", sum_ms);
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
      "gives each as <name>_median_ms, <name>_gbps and vs_<name>. --cpu-runs times the same operator folded\n"
      "element by element on one CPU core (there is no all-cores yardstick here).";
  b.measure = measure_chosen;
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(make_bench(), argc, argv); }
