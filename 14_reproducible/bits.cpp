#include "bits.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "input.hpp"

namespace repro {

std::vector<BitsCase> bits_cases() {
  using reduce::Pattern;
  std::vector<BitsCase> cases;
  const std::int64_t sizes[] = {0,       1,         31,          1024,           4097,           65537,
                                1000003, (1 << 20) + 3, (1 << 24) - 1, (1 << 25) + 7};
  for (std::int64_t n : sizes)
    for (Pattern p : {Pattern::constant, Pattern::integers, Pattern::uniform, Pattern::mixed}) cases.push_back({n, p, 1});
  cases.push_back({(1 << 20) + 3, Pattern::uniform, 7});
  cases.push_back({(1 << 20) + 3, Pattern::mixed, 7});
  for (Pattern p : {Pattern::nan, Pattern::inf}) {
    cases.push_back({100003, p, 1});
    cases.push_back({(1 << 20) + 3, p, 1});
  }
  // One size for each larger tile (order.hpp: 2^10 ... 2^16 elements; 2^10 is (1 << 24) - 1's, 2^12
  // (1 << 25) + 7's).
  cases.push_back({(std::int64_t{1} << 24) + 5, Pattern::uniform, 1});
  cases.push_back({(std::int64_t{1} << 26) + 1, Pattern::uniform, 1});
  cases.push_back({(std::int64_t{1} << 27) + 3, Pattern::mixed, 1});
  cases.push_back({(std::int64_t{1} << 28) + 9, Pattern::uniform, 1});
  cases.push_back({(std::int64_t{1} << 29) + 5, Pattern::mixed, 1});
  return cases;
}

std::string bits_text(float v) {
  if (std::isnan(v)) return "nan";
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", b);
  return text;
}

std::string bits_line(const BitsCase& c, float result) {
  char value[64];
  std::snprintf(value, sizeof value, "%.9g", result);
  if (std::isnan(result)) std::snprintf(value, sizeof value, "nan");
  return std::to_string(c.n) + " " + reduce::to_string(c.pattern) + " " + std::to_string(c.seed) + " " +
         bits_text(result) + " " + value;
}

std::vector<BitsEntry> read_bits_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::vector<reduce::Pattern> all = {reduce::Pattern::constant, reduce::Pattern::integers, reduce::Pattern::uniform,
                                            reduce::Pattern::mixed,    reduce::Pattern::nan,      reduce::Pattern::inf};
  std::vector<BitsEntry> entries;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#' || line.rfind("n ", 0) == 0) continue;
    std::istringstream fields(line);
    std::int64_t n = -1;
    std::string pattern, bits, value;
    std::uint64_t seed = 0;
    fields >> n >> pattern >> seed >> bits >> value;
    const auto p = reduce::parse_pattern(pattern, all);
    if (!fields || n < 0 || !p || (bits != "nan" && (bits.size() != 10 || bits.rfind("0x", 0) != 0)))
      throw std::runtime_error(path + ":" + std::to_string(number) + ": not 'n pattern seed bits value': " + line);
    entries.push_back({{n, *p, seed}, bits});
  }
  return entries;
}

std::string make_bits_file(const std::function<float(const float*, std::int64_t)>& sum, const std::string& source,
                           const std::function<void(const std::string&)>& progress) {
  std::string text =
      "# Step 15's result for fixed inputs: n floats of fill_input(pattern, seed) (common/input.hpp), summed by\n"
      "# 14_reproducible; bits are the float's, in hex (any NaN written nan). Every GPU must give these bits:\n"
      "# build/release/bin/14_reproducible_bits --check 14_reproducible/reproducible_bits.txt compares.\n"
      "# Written by: " + source + "\n"
      "n pattern seed bits value\n";
  for (const BitsCase& c : bits_cases()) {
    std::unique_ptr<float[]> x(new float[static_cast<std::size_t>(c.n > 0 ? c.n : 1)]);
    reduce::fill_input(x.get(), c.n, c.pattern, c.seed);
    const std::string line = bits_line(c, sum(x.get(), c.n));
    if (progress) progress(line);
    text += line + "\n";
  }
  return text;
}

}  // namespace repro
