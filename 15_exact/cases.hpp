// The named cases of 15_exact's fsum table (15_exact --write-cases FILE, check_fsum.py): small inputs
// that each test one rule of the exact sum (order, cancellation, ties, subnormals, range, NaN and
// infinities) and a few random ones over the whole exponent range. CPU only.
#pragma once

#include <string>
#include <vector>

namespace reduce {
struct LaunchConfig;
}

namespace step15 {

struct Case {
  std::string name;
  std::vector<float> x;
};

std::vector<Case> fsum_cases();

// One line per case: "name result x0 x1 ...", every float in C's hex notation (%a: exact, and read by
// Python's float.fromhex), "inf", "-inf" or "nan". Lines starting with "#" are comments.
std::string cases_text(const std::vector<Case>& cases, const std::vector<float>& results);

// The cases summed by the step on the current GPU (write_cases.cu), written to path with their results;
// false when one differs from the CPU's exact sum (each one told on stderr).
bool write_cases(const std::string& path, const reduce::LaunchConfig& cfg);

}  // namespace step15
