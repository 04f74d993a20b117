// 14_reproducible_bits: step 14's reproducible bits for the fixed cases of the committed file, on this
// GPU (or on the CPU model of the order with --cpu), written to a file and/or compared with one.
// Usage: 14_reproducible_bits [--check FILE [--subset]] [--write FILE] [--cpu] [--block B] [--grid G] [--device D]
//   Exit 0: every case matched (or nothing to compare); 1: a case differs or is missing, or the output
//   was lost; 2: bad usage; 77: no GPU.
// The command line is the suite's one parser (common/options.hpp): the options every step takes that
// mean nothing here (the cases fix n, pattern and seed) are refused with the reason. The comparison and
// the file's format are CPU code (bits.hpp, tested without a GPU); this file only computes the values.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bits.hpp"
#include "device.cuh"
#include "files.hpp"
#include "harness.cuh"
#include "reproducible.cuh"

namespace {

constexpr const char* kProgram = "14_reproducible_bits";
constexpr const char* kBitsFile = "14_reproducible/reproducible_bits.txt";

std::string check_file, write_file;  // --check FILE, --write FILE ("": none)
bool subset = false, cpu = false;    // --subset, --cpu
std::int64_t grid = 0;               // --grid G (0: the step's own)

reduce::OptionSpec spec() {
  reduce::OptionSpec s;
  s.summary =
      "Sums the fixed (n, pattern, seed) cases of step 14's bits file on the GPU (or with --cpu on the\n"
      "CPU model of its order) and prints one line per case: n pattern seed bits value (--format text),\n"
      "or the engine's one record of the run (--format json or csv: the counts, what ran, passed)";
  s.method = "Nothing is timed: the bits are the result.";
  s.block = step14::kStep.block;
  s.extra = {
      reduce::text_option("--check", check_file,
                          std::string("compare every case's bits and value with FILE, a regular file\n") +
                              "                   of at most 1 MiB (" + kBitsFile +
                              ");\n"
                              "                   exit 1 when a case differs or is missing",
                          "FILE"),
      reduce::flag_option("--subset", subset, "with --check: run and compare only the cases FILE holds"),
      reduce::text_option("--write", write_file,
                          "write the cases' bits to FILE, with the device named in its header\n"
                          "                   (a file is replaced by a rename; a device or FIFO written in place)",
                          "FILE"),
      reduce::flag_option("--cpu", cpu, "the CPU model of the order instead of the GPU"),
      reduce::integer_option("--grid", grid, 1, 0x7fffffff,
                             "blocks (default: the device's SMs x resident blocks per SM), to imitate another GPU",
                             "G")};
  const char* fixed = "the cases of the bits file fix n, pattern and seed";
  s.refused = {{"--n", fixed},
               {"--pattern", fixed},
               {"--seed", fixed},
               {"--iters", "each case is summed once: the bits are the result, nothing is timed"},
               {"--warmup", "each case is summed once: nothing is timed"},
               {"--cpu-runs", "nothing is timed (--cpu sums on the CPU model instead of the GPU)"}};
  return s;
}

// The run as the engine's one record (--format json or csv): n counts the elements of every case, a
// "run" is a case (correct: compared and the same), and it passed as the check did (no check: it ran).
void emit_record(const reduce::Options& opt, const reduce::DeviceInfo& device, const std::string& source,
                 std::int64_t elements, int cases, const step14::BitsCheck* check, const std::string& first_differ) {
  reduce::Bench bench{kProgram, "the bits of step 14's fixed cases"};
  bench.spec.block = step14::kStep.block;
  reduce::Report r = reduce::fill_common(bench, opt, device);
  r.n = elements;
  r.iters = r.warmup = 0;
  r.runs_total = cases;
  r.runs_correct = check ? check->compared() - check->differ() : cases;
  r.exact_check = true;
  r.runs_identical = true;
  r.extra = {reduce::text_field("source", source), reduce::number_field("cases", cases)};
  if (check) {
    r.extra.push_back(reduce::text_field("check_file", check_file));
    r.extra.push_back(reduce::number_field("compared", check->compared()));
    r.extra.push_back(reduce::number_field("differ", check->differ()));
    r.extra.push_back(reduce::number_field("missing", check->missing()));
    r.extra.push_back(reduce::number_field("not_run", check->not_run()));
    r.extra.push_back(reduce::text_field("first_differ", first_differ));
    r.extra.push_back(reduce::text_field("summary", check->summary(check_file)));
  }
  reduce::finish(r, /*input_unchanged=*/true, /*speak=*/false);
  if (check) r.passed = r.passed && check->passed();
  reduce::Emitter emit(opt.format, bench);
  emit(r);
}

int run(int argc, char** argv) {
  const reduce::OptionSpec s = spec();
  const reduce::Options opt = reduce::parse_options(argc, argv, s);
  if (opt.help) {
    std::cout << reduce::usage(kProgram, "the bits of step 14's fixed cases", s);
    return 0;
  }
  if (cpu && (opt.has("--block") || opt.has("--grid") || opt.has("--device")))
    throw reduce::UsageError("--cpu: sums on the CPU model of the order, so --block, --grid and --device mean nothing");
  if (subset && check_file.empty())
    throw reduce::UsageError("--subset: needs --check FILE (it runs the cases FILE holds)");
  // Every file is opened before any work: a path that cannot be read or written is refused at once.
  std::unique_ptr<step14::BitsCheck> check;
  if (!check_file.empty()) {
    const std::vector<step14::BitsEntry> entries = step14::read_bits_file(check_file);
    if (entries.empty())
      throw reduce::UsageError("--check: " + reduce::quote(check_file) +
                               " holds no cases (expected lines 'n pattern seed bits value')");
    check = std::make_unique<step14::BitsCheck>(entries, subset);
  }
  std::unique_ptr<reduce::FileWriter> output =
      write_file.empty() ? nullptr : std::make_unique<reduce::FileWriter>(write_file, "--write");

  std::string source = "the CPU model of the order (14_reproducible_bits --cpu)";
  std::function<float(const float*, std::int64_t)> sum = step14::model_sum;
  reduce::DeviceInfo device;
  if (!cpu) {
    device = reduce::open_device(opt.device);
    source = "14_reproducible_bits on " + device.name + " (" + std::to_string(device.sm_count) + " SMs), block " +
             std::to_string(opt.block) + (grid ? ", grid " + std::to_string(grid) : ", default grid");
    sum = [&](const float* host, std::int64_t n) {
      const reduce::LaunchConfig cfg{opt.block, opt.device, device.sm_count, grid};
      reduce::fits_on_device(n, sizeof(float), step14::scratch_bytes(n, cfg), device);
      reduce::DeviceBuffer<float> in(static_cast<std::size_t>(n));
      if (n > 0) CUDA_CHECK(cudaMemcpy(in.get(), host, n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());
      reduce::Stream stream;
      return reduce::reduce_once(step14::kStep, in.get(), n, cfg, stream.get());
    };
  }
  const bool lines = opt.format == reduce::Format::text;  // else one record at the end
  if (lines) std::cout << "# " << source << "\n";
  std::int64_t elements = 0;
  std::string first_differ;
  const std::vector<step14::BitsCase> cases = check ? check->cases() : step14::bits_cases();
  const std::string text = step14::make_bits_file(cases, sum, source, [&](const step14::BitsCase& c, float result) {
    const std::string verdict = check ? check->verdict(c, result) : "";
    if (first_differ.empty() && !verdict.empty() && verdict != "same")
      first_differ = step14::case_text(c) + ": " + verdict;
    elements += c.n;
    if (lines) std::cout << step14::bits_line(c, result) << (check ? "  " + verdict : "") << std::endl;
  });
  if (output) output->commit(text);
  const bool passed = !check || check->passed();
  if (!lines) emit_record(opt, device, source, elements, static_cast<int>(cases.size()), check.get(), first_differ);
  if (check && lines) std::cout << check->summary(check_file) << "\n";
  if (passed) return 0;
  std::fprintf(stderr, "%s: %s\n", kProgram, check->summary(check_file).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = 0;
  return reduce::guarded_main(kProgram, n, [&] { return run(argc, argv); });
}
