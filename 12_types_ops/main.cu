// 12_types_ops's record for the harness (reduce::Bench): its options (--type, --op), and one
// measurement: the step's reduction for that type and operator, CUB's DeviceReduce for the same,
// and for stats this step's sum of the same type, each timed and checked the same way.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "harness.cuh"
#include "input.hpp"
#include "types_ops.cuh"

namespace {

using reduce::Op;
using reduce::Type;

template <typename V>
std::string exact_text(V v) {  // integers in full, floats to round-trip precision
  char buf[64];
  if constexpr (std::is_integral_v<V>) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
  return buf;
}

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

const reduce::Bench& bench();

template <typename T, Op O>
void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  using S = step12::State<T, O>;
  using OpT = reduce::op_t<O, T>;
  const std::int64_t n = opt.n;
  const reduce::LaunchConfig cfg{step12::kBlock, device.ordinal, device.sm_count};
  const std::size_t scratch_bytes = step12::scratch_bytes<T, O>(n, cfg);
  const std::size_t sum_scratch_bytes = step12::scratch_bytes<T, Op::sum>(n, cfg);
  const std::size_t cub_bytes = step12::cub_scratch_bytes<T, O>(n);
  const int runs = opt.warmup + opt.iters;
  reduce::ensure_device_memory(n * sizeof(T) + scratch_bytes + sum_scratch_bytes + cub_bytes +
                               3 * runs * sizeof(S) + 2 * device.l2_bytes + (64 << 20));

  std::unique_ptr<T[]> host(new T[std::max<std::int64_t>(n, 1)]);
  reduce::fill_input(host.get(), n, opt.pattern, opt.seed);
  const reduce::TypedReference<T> ref = reduce::typed_reference(host.get(), n, /*moments=*/O == Op::stats);
  // The CPU yardstick: the same operator folded element by element on one core.
  const double cpu_ms = reduce::time_cpu(opt.cpu_runs, [&] {
    S s = OpT::identity();
    for (std::int64_t i = 0; i < n; ++i) s = OpT::combine(s, OpT::lift(host[i]));
    volatile double sink = headline<T, O>(s);
    (void)sink;
  });

  reduce::Stream stream;
  reduce::DeviceBuffer<T> in(n);
  reduce::DeviceBuffer<unsigned char> scratch(scratch_bytes), sum_scratch(sum_scratch_bytes), cub_scratch(cub_bytes);
  reduce::L2Flusher flusher(device);
  CUDA_CHECK(cudaMemcpyAsync(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice, stream.get()));
  for (auto* s : {&scratch, &sum_scratch}) CUDA_CHECK(cudaMemsetAsync(s->get(), 0, s->bytes(), stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  reduce::LaunchShape shape;
  reduce::LaunchConfig first_cfg = cfg;
  first_cfg.shape = &shape;
  const reduce::Runs<S> mine = reduce::run_slots<S>(opt.warmup, opt.iters, 1, flusher, stream.get(), [&](S* out, int k) {
    return step12::launch<T, O>(in.get(), n, out, {scratch.get(), scratch.bytes()}, k == 0 ? first_cfg : cfg,
                                stream.get());
  });
  const reduce::Runs<S> cub = reduce::run_slots<S>(opt.warmup, opt.iters, 1, flusher, stream.get(), [&](S* out, int) {
    return step12::cub_launch<T, O>(in.get(), n, out, {cub_scratch.get(), cub_scratch.bytes()}, stream.get());
  });
  // stats: the plain sum of the same type, timed the same way (the bar: stats >= 0.95x of it).
  reduce::Summary sum_ms;
  if constexpr (O == Op::stats)
    sum_ms = reduce::run_slots<step12::State<T, Op::sum>>(
                 opt.warmup, opt.iters, 1, flusher, stream.get(),
                 [&](step12::State<T, Op::sum>* out, int) {
                   return step12::launch<T, Op::sum>(in.get(), n, out, {sum_scratch.get(), sum_scratch.bytes()}, cfg,
                                                     stream.get());
                 })
                 .summary;

  reduce::Report r = reduce::fill_common(bench(), opt, device);
  r.element_bytes = sizeof(T);
  r.element_name = std::string(reduce::to_string(reduce::type_tag<T>())) + "s";
  r.cpu_ms = cpu_ms;
  reduce::fill_timing(r, mine, shape);
  const int first_wrong = reduce::check_runs(r, [&](int k) {
    reduce::Verdict v;
    v.check = reduce::check_typed<T, O>(*mine.run(k), ref, opt.pattern, &v.what);
    v.passed = v.check.passed;
    v.result = headline<T, O>(*mine.run(k));
    v.reference = headline<T, O>(ref);
    return v;
  });
  reduce::finish(r, reduce::device_equals_host(in.get(), host.get(), n));

  r.extra = {reduce::text_field("type", reduce::to_string(reduce::type_tag<T>())),
             reduce::text_field("op", reduce::to_string(O))};
  add_result_fields<T, O>(*mine.run(first_wrong >= 0 ? first_wrong : runs - 1), r.extra);
  r.extra.push_back(reduce::number_field("cub_passes", O == Op::stats ? 4 : 1));
  reduce::add_comparison(r, "cub", cub.summary);
  if constexpr (O == Op::stats) reduce::add_comparison(r, "sum", sum_ms);
  emit(r);
}

template <typename E>
E by_name(const std::string& s, std::initializer_list<E> all) {
  for (E e : all)
    if (s == reduce::to_string(e)) return e;
  return *all.begin();  // unreachable: the option parser accepts only the names
}

void measure_chosen(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  const Type type = by_name(opt.extra.at("--type"), {Type::f32, Type::f64, Type::i32, Type::i64});
  const Op op = by_name(opt.extra.at("--op"), {Op::sum, Op::min, Op::max, Op::stats});
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

const reduce::Bench& bench() {
  static const reduce::Bench b = make_bench();
  return b;
}

}  // namespace

int main(int argc, char** argv) { return reduce::run_bench(bench(), argc, argv); }
