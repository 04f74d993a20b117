// 12_types_ops's record for the harness (reduce::Bench): its options (--type, --op), and one
// measurement: the step's reduction for that type and operator, and its rivals CUB's DeviceReduce for
// the same and, for stats, this step's sum of the same type, each timed and checked the same way.
#include "harness.cuh"
#include "typed.hpp"
#include "types_ops.cuh"

namespace {

using reduce::Op;
using reduce::Type;

std::string type_name, op_name;  // --type, --op

template <typename T, Op O>
void measure(const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
  using S = step12::State<T, O>;
  using Sum = step12::State<T, Op::sum>;
  const reduce::LaunchConfig cfg{opt.block, device.ordinal, device.sm_count};  // opt.block: the fixed 512
  reduce::Testbed<T> bed(opt, device, step12::scratch_bytes<T, O>(opt.n, cfg));
  const reduce::TypedReference<T> ref = reduce::typed_reference(bed.host.get(), opt.n, /*moments=*/O == Op::stats);
  const char* type = reduce::to_string(reduce::type_tag<T>());
  reduce::Measurement<T, S> m;
  m.launch = [&](S* out, reduce::Scratch s, cudaStream_t st) {
    return step12::launch<T, O>(bed.in.get(), opt.n, out, s, cfg, st);
  };
  m.verdict = [&](const S* x) { return step12::typed_verdict<T, O>(*x, ref, opt.pattern); };
  m.before = [&](reduce::Report& r) {
    r.element_name = std::string(type) + "s";
    r.cpu_ms = step12::cpu_fold_ms<T, O>(bed.host.get(), opt.n, opt.cpu_runs);
  };
  m.fields = [&](const S* x) {
    std::vector<reduce::Field> f = {reduce::text_field("type", type), reduce::text_field("op", reduce::to_string(O))};
    for (reduce::Field& e : step12::typed_result_fields<T, O>(*x)) f.push_back(std::move(e));
    return f;
  };
  // The rivals: CUB's DeviceReduce for the same type and operator; for stats also this step's sum (below).
  reduce::Rival<T, S> cub{"cub", step12::cub_scratch_bytes<T, O>, step12::cub_launch<T, O>};
  cub.fields = {reduce::number_field("cub_passes", O == Op::stats ? 4 : 1)};
  m.rivals = {cub};
  m.rival_verdict = [&](const S* x) { return step12::cub_verdict<T, O>(*x, ref, opt.pattern); };
  reduce::Report r = bed.measure(emit, m).record;
  if constexpr (O == Op::stats) {
    const reduce::Rival<T, Sum> sum{"sum", [&](std::int64_t k) { return step12::scratch_bytes<T, Op::sum>(k, cfg); },
                                    [&](const T* in, std::int64_t k, Sum* out, reduce::Scratch s, cudaStream_t st) {
                                      return step12::launch<T, Op::sum>(in, k, out, s, cfg, st);
                                    }};
    const auto check = [&](const Sum* x) { return step12::typed_verdict<T, Op::sum>(*x, ref, opt.pattern); };
    reduce::add_rival(r, bed.rival(sum), check);
  }
  emit(r);
}

}  // namespace

int main(int argc, char** argv) {
  reduce::Bench b{"12_types_ops", "any type, any associative and commutative operator"};
  b.spec = step12::spec(type_name, op_name);
  b.measure = [](const reduce::Options& opt, const reduce::DeviceInfo& device, reduce::Emitter& emit) {
    const Type type = reduce::by_name(type_name, {Type::f32, Type::f64, Type::i32, Type::i64});
    const Op op = reduce::by_name(op_name, {Op::sum, Op::min, Op::max, Op::stats});
    reduce::with_type(type, [&](auto t) {
      return reduce::with_op(op, [&](auto o) {
        measure<decltype(t), decltype(o)::value>(opt, device, emit);
        return 0;
      });
    });
  };
  return reduce::run_bench(b, argc, argv);
}
