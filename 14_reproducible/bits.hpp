// The committed bits file (14_reproducible/reproducible_bits.txt): step 15's result for fixed
// (n, pattern, seed) inputs, as the float's hex bits. Any GPU must give exactly these bits; the CPU
// model of the order (order.hpp) gives them too, which is how the file was first written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"

namespace repro {

struct BitsCase {
  std::int64_t n;
  reduce::Pattern pattern;
  std::uint64_t seed;
};

// The cases of the file, smallest first: sizes around warps, tiles and L2, every tile size (2^10 to
// 2^14 elements), the four patterns every step takes and the two special ones (NaN, infinities).
std::vector<BitsCase> bits_cases();

// "0x3f800000", or "nan" for any NaN (a GPU and a CPU produce different NaN payloads).
std::string bits_text(float v);

// One line of the file: "n pattern seed bits value".
std::string bits_line(const BitsCase& c, float result);

// The file's lines that hold a case (comments and the header skipped); throws std::runtime_error
// naming the file and line when one is malformed or the file cannot be read.
struct BitsEntry {
  BitsCase c;
  std::string bits;
};
std::vector<BitsEntry> read_bits_file(const std::string& path);

// Computes every case with `sum` (the input filled by common/input.hpp's fill_input) and writes the
// file's text to `out`; `progress` hears each line. Returns the text.
std::string make_bits_file(const std::function<float(const float*, std::int64_t)>& sum, const std::string& source,
                           const std::function<void(const std::string&)>& progress = {});

}  // namespace repro
