// 15_reproducible_bits: step 15's bits for the fixed cases of the committed file, on this GPU (or on the
// CPU model of the order with --cpu), written to a file and/or compared with one.
// Usage: 15_reproducible_bits [--check FILE] [--write FILE] [--cpu] [--block B] [--grid G] [--device D]
//   Exit 0: every case matched (or nothing to compare); 1: a case differs; 2: bad usage; 77: no GPU.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "bits.hpp"
#include "device.cuh"
#include "harness.cuh"
#include "reproducible.cuh"

namespace {

const char* kUsage =
    "usage: 15_reproducible_bits [--check FILE] [--write FILE] [--cpu] [--block B] [--grid G] [--device D]\n"
    "  Sums the fixed (n, pattern, seed) cases of step 15's bits file on the GPU (or with --cpu on the CPU\n"
    "  model of its order) and prints one line per case: n pattern seed bits value.\n"
    "  --check FILE  compare every case with FILE (15_reproducible/reproducible_bits.txt); exit 1 on a difference\n"
    "  --write FILE  write the cases' bits to FILE, with the device named in its header\n"
    "  --block B     threads per block (32 ... 1024, a power of two; default 512)\n"
    "  --grid G      blocks (default: the device's SMs x resident blocks per SM), to imitate another GPU\n"
    "  --device D    CUDA device ordinal (default 0)\n";

struct Args {
  std::string check, write;
  bool cpu = false, help = false;
  int block = 512, device = 0;
  std::int64_t grid = 0;
};

std::int64_t number(const std::string& option, const char* text, std::int64_t lo, std::int64_t hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || v < lo || v > hi)
    throw reduce::UsageError(option + " takes a number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                             ", not '" + text + "'");
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw reduce::UsageError(o + " needs a value");
      return argv[++i];
    };
    if (o == "--help" || o == "-h") a.help = true;
    else if (o == "--cpu") a.cpu = true;
    else if (o == "--check") a.check = value();
    else if (o == "--write") a.write = value();
    else if (o == "--device") a.device = static_cast<int>(number(o, value(), 0, 1024));
    else if (o == "--grid") a.grid = number(o, value(), 1, 0x7fffffff);
    else if (o == "--block") {
      a.block = static_cast<int>(number(o, value(), 32, 1024));
      if (a.block & (a.block - 1)) throw reduce::UsageError("--block takes a power of two from 32 to 1024, not " + std::to_string(a.block));
    } else throw reduce::UsageError("unknown option " + o);
  }
  if (!a.check.empty() && !std::ifstream(a.check)) throw reduce::UsageError("--check: cannot read " + a.check);
  return a;
}

int run(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.help) {
    std::cout << kUsage;
    return 0;
  }
  std::map<std::string, std::string> expected;  // "n pattern seed" -> bits
  if (!a.check.empty()) {
    try {
      for (const auto& e : repro::read_bits_file(a.check))
        expected[std::to_string(e.c.n) + " " + reduce::to_string(e.c.pattern) + " " + std::to_string(e.c.seed)] = e.bits;
    } catch (const std::runtime_error& e) {
      throw reduce::UsageError(e.what());
    }
  }

  std::string source = "the CPU model of the order (15_reproducible_bits --cpu)";
  std::function<float(const float*, std::int64_t)> sum = repro::model_sum;
  reduce::DeviceInfo device;
  if (!a.cpu) {
    device = reduce::open_device(a.device);
    source = "15_reproducible_bits on " + device.name + " (" + std::to_string(device.sm_count) + " SMs), block " +
             std::to_string(a.block) + (a.grid ? ", grid " + std::to_string(a.grid) : ", default grid");
    sum = [&](const float* host, std::int64_t n) {
      const reduce::LaunchConfig cfg{a.block, a.device, device.sm_count, a.grid};
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
      if (it == expected.end()) verdict = "  (not in " + a.check + ")";
      else {
        ++compared;
        if (it->second != bits) {
          ++differ;
          verdict = "  DIFFERS: " + a.check + " has " + it->second;
        } else verdict = "  same";
      }
    }
    std::cout << line << verdict << std::endl;
  });
  if (!a.write.empty()) {
    std::ofstream out(a.write);
    out << text;
    if (!out) throw reduce::UsageError("--write: cannot write " + a.write);
  }
  if (!expected.empty()) {
    std::cout << (differ ? "FAILED: " : "PASSED: ") << compared - differ << " of " << compared << " cases have the bits of "
              << a.check << "\n";
    if (compared != static_cast<int>(expected.size()) || compared == 0) {
      std::cout << "FAILED: " << a.check << " holds " << expected.size() << " cases, " << compared << " were run\n";
      return 1;
    }
  }
  return differ ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = 0;
  return reduce::guarded_main("15_reproducible_bits", n, [&] { return run(argc, argv); });
}
