// 13_segmented's host side (CPU only, so the CPU tests exercise it without a GPU): the segment
// distributions, the validation of offsets, and the per-segment reference and check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "input.hpp"
#include "options.hpp"

namespace step13 {

using Offsets = std::vector<std::int64_t>;  // offsets[0..S]: segment s is [offsets[s], offsets[s+1])

struct Distribution {
  const char* name;
  const char* description;  // for --help and the README
};
// The distributions --segments knows, in the order --help lists them.
const std::vector<Distribution>& distributions();
const Distribution* find_distribution(std::string_view name);

// The offsets of distribution `name` over n floats under `seed`: offsets[0] = 0, offsets[S] = n, the
// same offsets for the same (name, n, seed) on every machine (a counter-based generator, no
// std:: distributions). Throws reduce::UsageError for an unknown name.
Offsets make_offsets(std::string_view name, std::int64_t n, std::uint64_t seed);

// The offsets of --segment-size L over n floats: {0, L, 2L, ..., S L} with S = n / L (the floats after
// S L belong to no segment).
Offsets fixed_offsets(std::int64_t n, std::int64_t length);

// The length every segment has, when they all have one and there is at least one segment; else 0.
std::int64_t equal_length(const Offsets& offsets);

// Checks offsets for n floats before anything runs: at least one entry (S = 0 is the single entry
// {x}), offsets[0] >= 0, non-decreasing, offsets[S] <= n. Throws reduce::UsageError with a one-line
// message naming the first bad entry.
void validate_offsets(const Offsets& offsets, std::int64_t n);

// Reads offsets for n floats from a text file: S + 1 integers separated by white space, streamed and
// checked as they are read, so the first bad entry is refused at once however long the file. Throws
// reduce::UsageError (one line, the path and any bad token quoted) for what is not a regular file (a
// folder, a FIFO, a device: reading it could block or never end), a file over kMaxOffsetsFileBytes or
// of more than kMaxOffsets entries, a read error, a token that is not a 64-bit integer (one longer than
// kMaxOffsetChars at its next byte), and an entry validate_offsets() refuses; an empty file gives no
// entries (validate_offsets() then says so).
constexpr std::int64_t kMaxOffsetsFileBytes = std::int64_t{1} << 30;  // 1 GiB of text: ~10^8 offsets
constexpr std::int64_t kMaxOffsets = (std::int64_t{1} << 27) + 1;     // 2^27 segments: 1 GiB of offsets
constexpr std::size_t kMaxOffsetChars = 64;  // "-9223372036854775808" is 20, with room for leading zeros
Offsets read_offsets(const std::string& path, std::int64_t n);

// The double-precision reference of segment [a, b) and the suite's rule applied to it: exact for the
// int pattern, else |gpu - ref| <= reduce::tolerance_for(b - a, sum |x|). NaN never passes.
reduce::Reference segment_reference(const float* x, std::int64_t a, std::int64_t b);

// The step's own options (--segments, --offsets, --segment-size, --search), as the harness takes them,
// each bound to its field of args() (the values once parsed; before, the defaults).
struct Args {
  std::string segments;           // --segments: a distribution's name
  std::string offsets;            // --offsets FILE ("": none)
  std::int64_t segment_size = 0;  // --segment-size L (0: none)
  std::string search;             // --search: auto, kernel or block
};
Args& args();
std::vector<reduce::ExtraOption> options();
// The whole command line: the summary, those options, the block rule (chosen inside) and --help's notes.
reduce::OptionSpec spec();
// What the parser cannot see, before any device is touched: --offsets and --segment-size each replace
// --segments, --search applies to offsets, and a file must hold valid offsets for n. Throws UsageError.
void check_options(const reduce::Options& opt);

// The segments one run sums, from its options: the offsets (validated; with --segment-size L they
// exist only for the CPU check and the CUBs, the step reads none), L or 0, and the record's name.
struct Layout {
  Offsets offsets;
  std::int64_t fixed = 0;
  std::string distribution;  // "powerlaw", "fixed:1000", "file:PATH"
};
Layout layout_of(const reduce::Options& opt);

struct SegmentsCheck {
  std::int64_t wrong = 0;         // segments that failed
  std::int64_t first_wrong = -1;  // the first of them, or -1
  float first_gpu = 0.0f;         // its result...
  reduce::Check first_check;      // ...and its check (reference, error, tolerance)
  double first_reference = 0.0;
  bool exact = true;  // every segment was compared exactly
};
// Checks every segment's result gpu[s] against its reference (on all the CPU's cores).
SegmentsCheck check_segments(const float* x, const Offsets& offsets, const float* gpu, reduce::Pattern p);
// That check as the record's verdict: the first wrong segment named with its range and the count.
reduce::Verdict verdict_of(const SegmentsCheck& c, const Offsets& offsets);

}  // namespace step13
