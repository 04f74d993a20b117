#include "bits.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "files.hpp"
#include "input.hpp"

namespace step14 {

std::vector<BitsCase> bits_cases() {
  using reduce::Pattern;
  std::vector<BitsCase> cases;
  const std::int64_t sizes[] = {0, 1, 31, 1024, 4097, 65537, 1000003, (1 << 20) + 3, (1 << 24) - 1, (1 << 25) + 7};
  for (std::int64_t n : sizes)
    for (Pattern p : {Pattern::constant, Pattern::integers, Pattern::uniform, Pattern::mixed})
      cases.push_back({n, p, 1});
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

bool same_bits(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0; }

std::string bits_text(float v) {
  if (std::isnan(v)) return "nan";
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", b);
  return text;
}

std::string case_text(const BitsCase& c) {
  return std::to_string(c.n) + " " + reduce::to_string(c.pattern) + " " + std::to_string(c.seed);
}

std::string bits_line(const BitsCase& c, float result) {
  char value[64];
  std::snprintf(value, sizeof value, "%.9g", result);  // 9 digits: the value reads back as these bits
  if (std::isnan(result)) std::snprintf(value, sizeof value, "nan");
  return case_text(c) + " " + bits_text(result) + " " + value;
}

std::vector<BitsEntry> parse_bits_text(const std::string& text, const std::string& name) {
  const std::vector<reduce::Pattern> all = {reduce::Pattern::constant, reduce::Pattern::integers,
                                            reduce::Pattern::uniform,  reduce::Pattern::mixed,
                                            reduce::Pattern::nan,      reduce::Pattern::inf};
  std::vector<BitsEntry> entries;
  std::map<std::string, int> lines;  // case -> its line
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#' || line == "n pattern seed bits value") continue;
    const std::string where = reduce::quote(name) + " line " + std::to_string(number) + ": ";
    std::istringstream fields(line);
    std::string n, pattern, seed, bits, value, extra;
    fields >> n >> pattern >> seed >> bits >> value >> extra;
    BitsEntry e{{0, reduce::Pattern::uniform, 0}, "", value, "", number};
    const auto count = reduce::parse_count(n);
    const auto p = reduce::parse_pattern(pattern, all);
    char* end = nullptr;
    errno = 0;
    const unsigned long long s = std::strtoull(seed.c_str(), &end, 10);
    const bool seed_ok = !seed.empty() && std::isdigit(static_cast<unsigned char>(seed[0])) &&
                         end == seed.c_str() + seed.size() && errno == 0;
    unsigned long word = 0;
    const bool hex = bits.size() == 10 && bits.rfind("0x", 0) == 0 &&
                     bits.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
    if (hex) word = std::strtoul(bits.c_str() + 2, nullptr, 16);
    const float v = std::strtof(value.c_str(), &end);
    const bool value_ok = !value.empty() && end == value.c_str() + value.size();  // a NUL inside is no end
    if (!count || std::to_string(*count) != n || !p || !seed_ok || !(hex || bits == "nan") || !value_ok ||
        !extra.empty())
      throw reduce::UsageError(where + "not 'n pattern seed bits value': " + reduce::quote(line));
    e.c = {*count, *p, s};
    if (hex) {
      float f;
      const std::uint32_t w = static_cast<std::uint32_t>(word);
      std::memcpy(&f, &w, sizeof f);
      e.bits = bits_text(f);
    } else {
      e.bits = "nan";
    }
    e.value_bits = bits_text(v);
    const auto [it, added] = lines.emplace(case_text(e.c), number);
    if (!added)
      throw reduce::UsageError(where + "case " + case_text(e.c) + " repeats line " + std::to_string(it->second));
    entries.push_back(e);
  }
  return entries;
}

std::vector<BitsEntry> read_bits_file(const std::string& path) {
  return parse_bits_text(reduce::read_text_file(path, "--check", kMaxBitsFileBytes), path);
}

BitsCheck::BitsCheck(const std::vector<BitsEntry>& expected, bool subset) : subset_(subset) {
  for (const BitsEntry& e : expected) expected_.emplace(case_text(e.c), e);
}

std::vector<BitsCase> BitsCheck::cases() const {
  std::vector<BitsCase> run;
  for (const BitsCase& c : bits_cases())
    if (!subset_ || expected_.count(case_text(c))) run.push_back(c);
  return run;
}

std::string BitsCheck::verdict(const BitsCase& c, float result) {
  const auto it = expected_.find(case_text(c));
  if (it == expected_.end()) {
    ++missing_;
    return "MISSING from the file";
  }
  seen_[it->first] = true;
  ++compared_;
  const BitsEntry& e = it->second;
  const std::string got = bits_text(result);
  if (e.bits == got && e.value_bits == got) return "same";
  ++differ_;
  if (e.bits != got) return "DIFFERS: the file has bits " + e.bits + " (line " + std::to_string(e.line) + ")";
  return "DIFFERS: the file's value " + reduce::quote(e.value, 24) + " has bits " + e.value_bits + " (line " +
         std::to_string(e.line) + ")";
}

int BitsCheck::not_run() const { return static_cast<int>(expected_.size()) - static_cast<int>(seen_.size()); }

std::string BitsCheck::summary(const std::string& file) const {
  std::string s = std::string(passed() ? "PASSED: " : "FAILED: ") + std::to_string(compared_ - differ_) + " of " +
                  std::to_string(compared_) + " cases have the bits and values of " + reduce::quote(file);
  if (differ_) s += "; " + std::to_string(differ_) + " differ";
  if (missing_)
    s += "; " + std::to_string(missing_) + " of the " + std::to_string(bits_cases().size()) +
         " committed cases are missing from it (--subset compares only the cases it holds)";
  if (not_run()) s += "; " + std::to_string(not_run()) + " of its cases are not committed cases, so none ran";
  if (compared_ == 0) s += "; nothing was compared";
  return s;
}

std::string make_bits_file(const std::vector<BitsCase>& cases,
                           const std::function<float(const float*, std::int64_t)>& sum, const std::string& source,
                           const std::function<void(const BitsCase&, float)>& progress) {
  std::string text =
      "# Step 14's reproducible sum of fixed inputs: n floats of fill_input(pattern, seed) (common/input.hpp);\n"
      "# bits are the float's, in hex (any NaN written nan), value the same float in decimal. Every GPU must give\n"
      "# these: build/release/bin/14_reproducible_bits --check 14_reproducible/reproducible_bits.txt compares.\n"
      "# Written by: " +
      source +
      "\n"
      "n pattern seed bits value\n";
  for (const BitsCase& c : cases) {
    std::unique_ptr<float[]> x(new float[static_cast<std::size_t>(c.n > 0 ? c.n : 1)]);
    reduce::fill_input(x.get(), c.n, c.pattern, c.seed);
    const float result = sum(x.get(), c.n);
    if (progress) progress(c, result);
    text += bits_line(c, result) + "\n";
  }
  return text;
}

}  // namespace step14
