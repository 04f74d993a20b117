// The committed bits file (14_reproducible/reproducible_bits.txt): step 14's reproducible result for
// fixed (n, pattern, seed) inputs, as the float's hex bits and its value. Any GPU must give exactly
// these bits; the CPU model of the order (order.hpp) gives them too, which is how the file was first
// written. CPU only: 14_reproducible_bits computes the values, everything else is here (and tested).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "options.hpp"

namespace step14 {

struct BitsCase {
  std::int64_t n;
  reduce::Pattern pattern;
  std::uint64_t seed;
};

// The cases of the file, smallest first: sizes around warps, tiles and L2, every tile size (2^10 to
// 2^14 elements), the four patterns every step takes and the two special ones (NaN, infinities).
std::vector<BitsCase> bits_cases();

// "n pattern seed": a case as the file and the messages name it.
std::string case_text(const BitsCase& c);

// "0x3f800000", or "nan" for any NaN (a GPU and a CPU produce different NaN payloads).
std::string bits_text(float v);

// a and b have the same bits, any NaN matching any NaN (as bits_text writes them).
bool same_bits(float a, float b);

// One line of the file: "n pattern seed bits value".
std::string bits_line(const BitsCase& c, float result);

// A line of the file that holds a case: its bits (normalized: "0x" and eight lower-case hex digits, or
// "nan"), the value column's text and the bits of that value, and its line number.
struct BitsEntry {
  BitsCase c;
  std::string bits;
  std::string value;
  std::string value_bits;
  int line = 0;
};
// The cases of a file's text (`name` in messages), comments and the header skipped. Throws
// reduce::UsageError naming the line (quoted) when one is not "n pattern seed bits value" with a known
// pattern, hex bits and a number, or when a case repeats.
std::vector<BitsEntry> parse_bits_text(const std::string& text, const std::string& name);
// The same for a file, read as --check reads it (a regular file of at most kMaxBitsFileBytes).
constexpr std::int64_t kMaxBitsFileBytes = std::int64_t{1} << 20;
std::vector<BitsEntry> read_bits_file(const std::string& path);

// A check against a file's entries. Every committed case is run and must be in the file with the same
// bits and the same value, unless `subset`: then only the committed cases the file holds are run. A case
// of the file that is not committed fails too (nothing runs it).
class BitsCheck {
 public:
  BitsCheck(const std::vector<BitsEntry>& expected, bool subset);
  // The cases to run, in the committed order.
  std::vector<BitsCase> cases() const;
  // One case's result against the file: "same", "DIFFERS: ..." or "MISSING from the file"; counted.
  std::string verdict(const BitsCase& c, float result);
  int compared() const { return compared_; }
  int differ() const { return differ_; }
  int missing() const { return missing_; }
  int not_run() const;  // cases of the file that no verdict compared (not committed, or not run)
  bool passed() const { return compared_ > 0 && differ_ == 0 && missing_ == 0 && not_run() == 0; }
  // "PASSED: 48 of 48 cases ..." or "FAILED: ..." with every count, naming `file`.
  std::string summary(const std::string& file) const;

 private:
  std::map<std::string, BitsEntry> expected_;  // by case_text
  std::map<std::string, bool> seen_;
  bool subset_;
  int compared_ = 0, differ_ = 0, missing_ = 0;
};

// Computes each case with `sum` (the input filled by common/input.hpp's fill_input) and returns the
// file's text; `progress` hears each case and its result. `source` names what computed them.
std::string make_bits_file(const std::vector<BitsCase>& cases,
                           const std::function<float(const float*, std::int64_t)>& sum, const std::string& source,
                           const std::function<void(const BitsCase&, float)>& progress = {});

}  // namespace step14
