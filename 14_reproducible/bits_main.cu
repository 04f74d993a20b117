// 14_reproducible_bits: step 15's bits for the fixed cases of the committed file, on this GPU (or on the
// CPU model of the order with --cpu), written to a file and/or compared with one.
// Usage: 14_reproducible_bits [--check FILE] [--write FILE] [--cpu] [--block B] [--grid G] [--device D]
//   Exit 0: every case matched (or nothing to compare); 1: a case differs; 2: bad usage; 77: no GPU.
// The command line is the suite's one parser (common/options.hpp): the options every step takes that
// mean nothing here (the cases fix n, pattern and seed) are refused with the reason.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "bits.hpp"
#include "device.cuh"
#include "harness.cuh"
#include "reproducible.cuh"

namespace {

constexpr const char* kProgram = "14_reproducible_bits";
constexpr const char* kBitsFile = "14_reproducible/reproducible_bits.txt";

reduce::OptionSpec spec() {
  reduce::OptionSpec s;
  s.summary = "Sums the fixed (n, pattern, seed) cases of step 15's bits file on the GPU (or with --cpu on the\n"
              "CPU model of its order) and prints one line per case: n pattern seed bits value";
  s.method = "Nothing is timed: the bits are the result.";
  s.block = repro::kStep.block;
  reduce::ExtraOption check{"--check", {}, std::string("compare every case with FILE (") + kBitsFile + "); exit 1 on a difference", "FILE"};
  reduce::ExtraOption write{"--write", {}, "write the cases' bits to FILE, with the device named in its header", "FILE"};
  reduce::ExtraOption cpu{"--cpu", {}, "the CPU model of the order instead of the GPU"};
  cpu.flag = true;
  reduce::ExtraOption grid{"--grid", {}, "blocks (default: the device's SMs x resident blocks per SM), to imitate another GPU", "G"};
  grid.check = reduce::integer_in(1, 0x7fffffff);
  s.extra = {check, write, cpu, grid};
  const char* fixed = "the cases of the bits file fix n, pattern and seed";
  s.refused = {{"--n", fixed}, {"--pattern", fixed}, {"--seed", fixed},
               {"--iters", "each case is summed once: the bits are the result, nothing is timed"},
               {"--warmup", "each case is summed once: nothing is timed"},
               {"--format", "the output is the bits file's own lines"},
               {"--cpu-runs", "nothing is timed (--cpu sums on the CPU model instead of the GPU)"}};
  return s;
}

// The cases of --check FILE: "n pattern seed" -> bits. A file that cannot be read, is malformed or holds
// no case is bad usage: comparing with nothing would pass.
std::map<std::string, std::string> expected_bits(const std::string& path) {
  if (!std::ifstream(path)) throw reduce::UsageError("--check: cannot read " + path);
  std::map<std::string, std::string> expected;
  try {
    for (const auto& e : repro::read_bits_file(path))
      expected[std::to_string(e.c.n) + " " + reduce::to_string(e.c.pattern) + " " + std::to_string(e.c.seed)] = e.bits;
  } catch (const std::runtime_error& e) {
    throw reduce::UsageError(std::string("--check: ") + e.what());
  }
  if (expected.empty()) throw reduce::UsageError("--check: " + path + " holds no cases (expected lines 'n pattern seed bits value')");
  return expected;
}

// The file --write FILE fills: a temporary file beside FILE, made before any work (so a path that cannot
// be written is refused at once), renamed over FILE only when every case is written.
class Output {
 public:
  explicit Output(std::string path) : path_(std::move(path)) {
    struct stat st {};
    if (stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw reduce::UsageError("--write: " + path_ + " is a folder, not a file");
    std::string tmpl = path_ + ".XXXXXX";
    const int fd = mkstemp(tmpl.data());
    if (fd < 0) throw reduce::UsageError("--write: cannot write " + path_ + " (" + std::strerror(errno) + ")");
    fchmod(fd, 0644);  // as a file written in place would be, not mkstemp's 0600
    close(fd);
    tmp_ = tmpl;
  }
  ~Output() {
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  void commit(const std::string& text) {
    std::ofstream out(tmp_);
    out << text;
    out.close();
    if (!out || std::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw reduce::UsageError("--write: cannot write " + path_ + " (" + std::strerror(errno) + ")");
    tmp_.clear();
  }

 private:
  std::string path_, tmp_;
};

int run(int argc, char** argv) {
  const reduce::OptionSpec s = spec();
  const reduce::Options opt = reduce::parse_options(argc, argv, s);
  if (opt.help) {
    std::cout << reduce::usage(kProgram, "the bits of step 15's fixed cases", s);
    return 0;
  }
  const std::string check_file = opt.extra.at("--check"), write_file = opt.extra.at("--write");
  const bool cpu = !opt.extra.at("--cpu").empty();
  const std::int64_t grid = opt.extra.at("--grid").empty() ? 0 : std::stoll(opt.extra.at("--grid"));
  if (cpu && (opt.has("--block") || opt.has("--grid") || opt.has("--device")))
    throw reduce::UsageError("--cpu: sums on the CPU model of the order, so --block, --grid and --device mean nothing");
  const std::map<std::string, std::string> expected =
      check_file.empty() ? std::map<std::string, std::string>{} : expected_bits(check_file);
  std::unique_ptr<Output> output = write_file.empty() ? nullptr : std::make_unique<Output>(write_file);

  std::string source = "the CPU model of the order (14_reproducible_bits --cpu)";
  std::function<float(const float*, std::int64_t)> sum = repro::model_sum;
  reduce::DeviceInfo device;
  if (!cpu) {
    device = reduce::open_device(opt.device);
    source = "14_reproducible_bits on " + device.name + " (" + std::to_string(device.sm_count) + " SMs), block " +
             std::to_string(opt.block) + (grid ? ", grid " + std::to_string(grid) : ", default grid");
    sum = [&](const float* host, std::int64_t n) {
      const reduce::LaunchConfig cfg{opt.block, opt.device, device.sm_count, grid};
      reduce::ensure_device_memory(static_cast<std::size_t>(n) * sizeof(float) + repro::scratch_bytes(n, cfg));
      reduce::DeviceBuffer<float> in(static_cast<std::size_t>(n));
      if (n > 0) CUDA_CHECK(cudaMemcpy(in.get(), host, n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());
      reduce::Stream stream;
      return reduce::reduce_once(repro::kStep, in.get(), n, cfg, stream.get());
    };
  }
  std::cerr << "# " << source << "\n";
  int differ = 0, compared = 0;
  const std::string text = repro::make_bits_file(sum, source, [&](const std::string& line) {
    std::string verdict;
    if (!expected.empty()) {
      std::istringstream fields(line);
      std::string n, pattern, seed, bits;
      fields >> n >> pattern >> seed >> bits;
      const auto it = expected.find(n + " " + pattern + " " + seed);
      if (it == expected.end()) {
        verdict = "  (not in " + check_file + ")";
      } else {
        ++compared;
        if (it->second != bits) {
          ++differ;
          verdict = "  DIFFERS: " + check_file + " has " + it->second;
        } else {
          verdict = "  same";
        }
      }
    }
    std::cout << line << verdict << std::endl;
  });
  if (output) output->commit(text);
  if (!expected.empty()) {
    std::cout << (differ ? "FAILED: " : "PASSED: ") << compared - differ << " of " << compared
              << " cases have the bits of " << check_file << "\n";
    if (compared != static_cast<int>(expected.size())) {
      std::cout << "FAILED: " << check_file << " holds " << expected.size() << " cases, " << compared << " were run\n";
      return 1;
    }
  }
  return differ ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = 0;
  return reduce::guarded_main(kProgram, n, [&] { return run(argc, argv); });
}
