// Command-line options of every step executable (CPU only: the tests exercise it without a GPU).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "step.cuh"  // BlockRule, kDefaultBlock

namespace reduce {

// The first four serve every step; the others (special values, for the steps beyond a float sum)
// only programs that list them in OptionSpec::patterns (input.hpp describes each).
enum class Pattern {
  constant,
  integers,
  uniform,
  mixed,
  nan,
  inf,
  ties,
  limits,  // the suite's first eight
  normal,
  lognormal,
  logu40,
  logu120,
  wide,
  outliers,
  products  // distributions of many scales (input.hpp)
};
enum class Format { text, csv, json };

struct Options {
  std::int64_t n = std::int64_t{1} << 26;  // 256 MiB of floats: several times a data-center L2
  int iters = 50;                          // timed runs; the report gives their median, min and max
  int warmup = 5;                          // untimed runs first (module load, clocks, caches of the driver)
  int block = kDefaultBlock;               // threads per block: --block, else the rule's size (BlockRule)
  std::uint64_t seed = 1;
  Pattern pattern = Pattern::uniform;
  Format format = Format::text;
  int device = 0;
  int cpu_runs = 3;  // timed runs of the single-thread CPU sum (0: skip it)
  bool help = false;
  std::vector<std::string> given;           // the options on the command line, as named there ("--n")
  bool has(const std::string& name) const;  // `name` was on the command line
};

// An option that one program adds to the common ones, bound to a typed field of the program's (`set`
// stores it there; the helpers below make one). Three kinds:
//   a choice   `values` lists what it accepts, the first is the default (step 12's --type);
//   a value    `values` is empty: any text `check` accepts, `default_value` shown when absent (--offsets FILE);
//   a flag     `flag` is true: no value; `set` is called with "1" when given (--single-gpu).
struct ExtraOption {
  std::string name;                 // "--type"
  std::vector<std::string> values;  // a choice's values; the first is the default
  std::string help;                 // its --help text, after the name (may hold "\n" for more lines)
  std::string metavar;              // a value's placeholder in --help: "FILE", "N", "A:B"
  std::string default_value;        // a value's default, for --help ("" = none)
  bool flag = false;
  // A value's check: "" when the text is acceptable, else what was expected ("an integer from 1 to 8").
  std::function<std::string(const std::string&)> check;
  // Where the value goes once it passed the check: the program's own typed field (the helpers below
  // bind one), called with the text ("1" for a flag). Not called when the option is absent.
  std::function<void(const std::string&)> set;
};

// Options bound to a program's own typed fields, whose values before parsing are the defaults: the
// parser checks the text and stores the value there. An integer in [lo, hi]; any non-empty text; a
// flag; one of `values` (the first the default).
ExtraOption integer_option(std::string name, std::int64_t& field, std::int64_t lo, std::int64_t hi, std::string help,
                           std::string metavar = "N");
ExtraOption text_option(std::string name, std::string& field, std::string help, std::string metavar);
ExtraOption flag_option(std::string name, bool& field, std::string help);
ExtraOption choice_option(std::string name, std::string& field, std::vector<std::string> values, std::string help);

// What a program accepts beyond the common options. The default is what every step accepts.
struct OptionSpec {
  std::string summary;  // what the program reduces, for --help ("Reduces n floats to their sum on the GPU")
  // How it checks and times, after the summary in --help.
  std::string method =
      "checks every run's result against a CPU reference and times it (L2 flushed before\n"
      "every timed run, so the bandwidth is DRAM bandwidth).";
  std::vector<ExtraOption> extra;
  std::vector<Pattern> patterns = {Pattern::constant, Pattern::integers,  Pattern::uniform, Pattern::mixed,
                                   Pattern::normal,   Pattern::lognormal, Pattern::logu40,  Pattern::logu120,
                                   Pattern::wide,     Pattern::outliers,  Pattern::products};
  std::int64_t default_n = std::int64_t{1} << 26;  // --n when absent
  BlockRule block;  // --block: free (with its default), fixed or chosen (refused, with the reason)
  // Common options that mean nothing to this program: name -> why. The parser refuses each with that
  // reason ("--pattern: read_ceiling reads zeros; nothing is summed") and --help says so.
  std::vector<std::pair<std::string, std::string>> refused;
  std::string notes;  // a paragraph after the options in --help (what else the run measures)
};

// A malformed or unknown option. what() is the one-line message printed before exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses argv[1..argc). Accepts "--name value" and "--name=value"; a flag and --help take no value.
// Throws UsageError, whose one line shows any value the user gave through quote() (files.hpp).
Options parse_options(int argc, const char* const* argv, const OptionSpec& spec = {});
Options parse_options(const std::vector<std::string>& args, const OptionSpec& spec = {});

// "--n" syntax: a plain count (1000), a count with a binary suffix K/M/G (4K = 4096, 1M = 2^20),
// or a power of two written 2^k. Returns nullopt for anything else, for negatives and for
// counts above max_n().
std::optional<std::int64_t> parse_count(std::string_view text);
constexpr std::int64_t max_n() { return std::int64_t{1} << 36; }

const char* to_string(Pattern p);
const char* to_string(Format f);
// A pattern by name, among `allowed` (default: the four every step takes).
std::optional<Pattern> parse_pattern(std::string_view text,
                                     const std::vector<Pattern>& allowed = OptionSpec{}.patterns);

// The --help text: a title line "<program>: <lesson>", the usage, the options with their defaults
// (spec's own among them; the refused ones with their reason), any notes, and the exit codes.
std::string usage(const char* program, const char* lesson, const OptionSpec& spec);
std::string usage(const char* program, BlockRule block = {});

// "2^26" for powers of two, else the count: how --help shows a default n.
std::string count_text(std::int64_t n);

}  // namespace reduce
