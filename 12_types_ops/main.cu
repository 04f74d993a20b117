// main() of 12_types_ops: the harness's pieces (options, input, reference, check, timing, report)
// for one type and operator, then the same timing of CUB's DeviceReduce for that type and operator.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "harness.cuh"
#include "input.hpp"
#include "types_ops.cuh"

namespace {

using reduce::Op;
using reduce::Type;

const char* const kName = "12_types_ops";
const char* const kLesson = "any type, any associative operator";

reduce::OptionSpec option_spec() {
  reduce::OptionSpec spec;
  spec.summary = "Reduces n elements of --type with --op on the GPU";
  spec.extra = {
      {"--type", {"float", "double", "int32", "int64"},
       "element type; an int32 sum accumulates in int64 (exact up to 2^32 elements),\n"
       "                   an int64 sum wraps as two's complement"},
      {"--op", {"sum", "min", "max", "stats"},
       "operator; min and max propagate NaN, min(-0,+0) = -0, max(-0,+0) = +0, and n = 0\n"
       "                   gives the identity (+inf / -inf, the type's max / min); stats = count,\n"
       "                   sum, min, max, sum of squares, mean and variance (M2 / n) in one pass"},
  };
  for (reduce::Pattern p : {reduce::Pattern::nan, reduce::Pattern::inf, reduce::Pattern::ties, reduce::Pattern::limits})
    spec.patterns.push_back(p);
  return spec;
}

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

// Runs `launch(in, out_slot, stream)` warmup + iters times as the harness times a step, results to
// device slots; returns the milliseconds of the timed runs.
template <typename S, typename F>
std::vector<double> time_into(const reduce::Options& opt, reduce::L2Flusher& flusher, reduce::Stream& stream,
                              reduce::DeviceBuffer<S>& results, F&& launch) {
  return reduce::time_runs(opt.warmup, opt.iters, flusher, stream.get(), [&](int r) {
    CUDA_CHECK(launch(results.get() + r));
    CUDA_CHECK(cudaGetLastError());
  });
}

template <typename T, Op O>
reduce::Report measure(const reduce::Options& opt, const reduce::DeviceInfo& device) {
  using S = step12::State<T, O>;
  const std::int64_t n = opt.n;
  const reduce::LaunchConfig cfg{step12::kBlock, device.ordinal, device.sm_count};
  const int runs = opt.warmup + opt.iters;
  const std::size_t scratch_bytes = step12::scratch_bytes<T, O>(n, cfg);
  const std::size_t sum_scratch_bytes = step12::scratch_bytes<T, Op::sum>(n, cfg);
  const std::size_t cub_bytes = step12::cub_scratch_bytes<T, O>(n);
  reduce::ensure_device_memory(n * sizeof(T) + scratch_bytes + sum_scratch_bytes + cub_bytes + 2 * device.l2_bytes +
                               (64 << 20));

  std::unique_ptr<T[]> host(new T[std::max<std::int64_t>(n, 1)]);
  reduce::fill_input(host.get(), n, opt.pattern, opt.seed);
  const reduce::TypedReference<T> ref = reduce::typed_reference(host.get(), n, /*moments=*/O == Op::stats);

  reduce::Stream stream;
  reduce::DeviceBuffer<T> in(n);
  reduce::DeviceBuffer<unsigned char> scratch(scratch_bytes), sum_scratch(sum_scratch_bytes), cub_scratch(cub_bytes);
  reduce::DeviceBuffer<S> results(runs), cub_results(runs);
  reduce::DeviceBuffer<step12::State<T, Op::sum>> sum_results(runs);
  reduce::L2Flusher flusher(device);
  CUDA_CHECK(cudaMemcpyAsync(in.get(), host.get(), in.bytes(), cudaMemcpyHostToDevice, stream.get()));
  CUDA_CHECK(cudaMemsetAsync(results.get(), 0xFF, results.bytes(), stream.get()));  // an unwritten result fails
  for (auto* s : {&scratch, &sum_scratch}) CUDA_CHECK(cudaMemsetAsync(s->get(), 0, s->bytes(), stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  reduce::LaunchShape shape;
  reduce::LaunchConfig first_cfg = cfg;
  first_cfg.shape = &shape;
  int launched = 0;
  const std::vector<double> ms = time_into(opt, flusher, stream, results, [&](S* out) {
    return step12::launch<T, O>(in.get(), n, out, reduce::Scratch{scratch.get(), scratch.bytes()},
                                launched++ == 0 ? first_cfg : cfg, stream.get());
  });
  const std::vector<double> cub_ms = time_into(opt, flusher, stream, cub_results, [&](S* out) {
    return step12::cub_launch<T, O>(in.get(), n, out, reduce::Scratch{cub_scratch.get(), cub_scratch.bytes()},
                                    stream.get());
  });
  // stats: the plain sum of the same type, timed the same way (the bar: stats >= 0.95x of it).
  std::vector<double> sum_ms;
  if constexpr (O == Op::stats)
    sum_ms = time_into(opt, flusher, stream, sum_results, [&](step12::State<T, Op::sum>* out) {
      return step12::launch<T, Op::sum>(in.get(), n, out, reduce::Scratch{sum_scratch.get(), sum_scratch.bytes()},
                                        cfg, stream.get());
    });
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  std::vector<S> got(runs);
  CUDA_CHECK(cudaMemcpy(got.data(), results.get(), results.bytes(), cudaMemcpyDeviceToHost));

  reduce::Report r;
  r.step = kName;
  r.lesson = kLesson;
  r.element_bytes = sizeof(T);
  r.element_name = std::string(reduce::to_string(reduce::type_tag<T>())) + "s";
  r.device = device;
  r.n = n;
  r.pattern = opt.pattern;
  r.seed = opt.seed;
  r.block = shape.block;
  r.grid = shape.grid;
  r.launches = shape.launches;
  r.iters = opt.iters;
  r.warmup = opt.warmup;
  r.ms = reduce::summarize(ms);
  r.deterministic = true;
  r.runs_total = runs;
  r.runs_identical = true;
  r.fits_in_l2 = n * static_cast<std::int64_t>(sizeof(T)) <= device.l2_bytes;

  int first_wrong = -1;
  for (int k = 0; k < runs; ++k) {
    const reduce::Check c = reduce::check_typed<T, O>(got[k], ref, opt.pattern);
    r.runs_correct += c.passed;
    if (!c.passed && first_wrong < 0) first_wrong = k;
    if (std::memcmp(&got[k], &got[0], sizeof(S)) != 0) r.runs_identical = false;
  }
  const int shown = first_wrong >= 0 ? first_wrong : runs - 1;
  std::string failed_field;
  const reduce::Check c = reduce::check_typed<T, O>(got[shown], ref, opt.pattern, &failed_field);
  r.result = headline<T, O>(got[shown]);
  r.reference = headline<T, O>(ref);
  r.abs_error = c.abs_error;
  r.tolerance = c.tolerance;
  r.exact_check = c.exact;
  r.input_unchanged = reduce::device_equals_host(in.get(), host.get(), n);
  r.passed = r.runs_correct == runs && r.input_unchanged && r.runs_identical;
  reduce::derive_rates(r);

  const reduce::Summary cub = reduce::summarize(cub_ms);
  const double bytes = static_cast<double>(n) * sizeof(T);
  const double cub_gbps = cub.median > 0 ? bytes / (cub.median * 1e-3) / 1e9 : 0.0;
  r.extra = {reduce::text_field("type", reduce::to_string(reduce::type_tag<T>())),
             reduce::text_field("op", reduce::to_string(O))};
  add_result_fields<T, O>(got[shown], r.extra);
  r.extra.push_back(reduce::number_field("cub_passes", O == Op::stats ? 4 : 1));
  r.extra.push_back(reduce::number_field("cub_median_ms", cub.median));
  r.extra.push_back(reduce::number_field("cub_gbps", cub_gbps));
  r.extra.push_back(reduce::number_field("vs_cub", cub_gbps > 0 ? r.gbps / cub_gbps : 0.0));
  if constexpr (O == Op::stats) {
    const reduce::Summary sum = reduce::summarize(sum_ms);
    const double sum_gbps = sum.median > 0 ? bytes / (sum.median * 1e-3) / 1e9 : 0.0;
    r.extra.push_back(reduce::number_field("sum_gbps", sum_gbps));
    r.extra.push_back(reduce::number_field("vs_sum", sum_gbps > 0 ? r.gbps / sum_gbps : 0.0));
  }

  if (first_wrong >= 0)
    std::fprintf(stderr, "%s: run %d of %d: %s is wrong: got %.17g, reference %.17g (|error| %.3g, allowed %.3g)\n",
                 kName, first_wrong + 1, runs, failed_field.empty() ? "the result" : failed_field.c_str(), r.result,
                 r.reference, c.abs_error, c.tolerance);
  if (!r.input_unchanged) std::fprintf(stderr, "%s: the step modified its input\n", kName);
  if (!r.runs_identical) std::fprintf(stderr, "%s: repeated runs gave different bits\n", kName);
  return r;
}

Type parse_type(const std::string& s) {
  for (Type t : {Type::f32, Type::f64, Type::i32, Type::i64})
    if (s == reduce::to_string(t)) return t;
  return Type::f32;  // unreachable: the option parser accepts only the names above
}
Op parse_op(const std::string& s) {
  for (Op o : {Op::sum, Op::min, Op::max, Op::stats})
    if (s == reduce::to_string(o)) return o;
  return Op::sum;
}

}  // namespace

int main(int argc, char** argv) {
  reduce::Options opt;
  return reduce::guarded_main(kName, opt.n, [&] {
    const reduce::OptionSpec spec = option_spec();
    opt = reduce::parse_options(argc, argv, spec);
    if (opt.help) {
      std::cout << kName << ": " << kLesson << "\n"
                << reduce::usage(kName, step12::kBlock, spec)
                << "--block is fixed at " << step12::kBlock << " here (a template parameter); the CPU yardsticks are\n"
                << "not run. Besides the step, the run times CUB's DeviceReduce for the same type and operator\n"
                << "(stats: its four passes Sum, Min, Max and a sum of squares) and, for stats, this step's sum.\n";
      return 0;
    }
    if (opt.block_given && opt.block != step12::kBlock)
      throw reduce::UsageError("--block " + std::to_string(opt.block) + ": this step runs " +
                               std::to_string(step12::kBlock) + " threads per block only");
    const Type type = parse_type(opt.extra.at("--type"));
    const Op op = parse_op(opt.extra.at("--op"));
    const reduce::DeviceInfo device = reduce::open_device(opt.device);
    const reduce::Report r = reduce::with_type(type, [&](auto t) {
      return reduce::with_op(op, [&](auto o) { return measure<decltype(t), decltype(o)::value>(opt, device); });
    });
    reduce::print_report(r, opt.format);
    return r.passed ? 0 : 1;
  });
}
