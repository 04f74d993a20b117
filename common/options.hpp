// Command-line options of every step executable (CPU only: the tests exercise it without a GPU).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reduce {

// The first four serve every step; the others (special values, for the steps beyond a float sum)
// only programs that list them in OptionSpec::patterns (input.hpp describes each).
enum class Pattern { constant, integers, uniform, mixed, nan, inf, ties, limits };
enum class Format { text, csv, json };

constexpr int kDefaultBlock = 256;  // threads per block when neither --block nor the step says otherwise

struct Options {
  std::int64_t n = std::int64_t{1} << 26;  // 256 MiB of floats: several times a data-center L2
  int iters = 50;                          // timed runs; the report gives their median, min and max
  int warmup = 5;                          // untimed runs first (module load, clocks, caches of the driver)
  int block = kDefaultBlock;               // threads per block for steps that take one
  bool block_given = false;                // --block was on the command line (else the step's default applies)
  std::uint64_t seed = 1;
  Pattern pattern = Pattern::uniform;
  Format format = Format::text;
  int device = 0;
  int cpu_runs = 3;                        // timed runs of the single-thread CPU sum (0: skip it)
  bool help = false;
  std::map<std::string, std::string> extra;  // a program's own options (OptionSpec::extra): name -> value
};

// An option that one program adds to the common ones, with a fixed set of values (step 12's --type).
struct ExtraOption {
  std::string name;                 // "--type"
  std::vector<std::string> values;  // the values it accepts; the first is the default
  std::string help;                 // its --help line, after the name and the values
};

// What a program accepts beyond the common options. The default is what every step accepts.
struct OptionSpec {
  std::string summary;  // what the program reduces, for --help ("Reduces n floats to their sum on the GPU")
  std::vector<ExtraOption> extra;
  std::vector<Pattern> patterns = {Pattern::constant, Pattern::integers, Pattern::uniform, Pattern::mixed};
};

// A malformed or unknown option. what() is the one-line message printed before exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses argv[1..argc). Accepts "--name value" and "--name=value". Throws UsageError.
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
std::optional<Pattern> parse_pattern(std::string_view text, const std::vector<Pattern>& allowed = OptionSpec{}.patterns);

// The --help text; default_block is the step's own default for --block; spec adds its options.
std::string usage(const char* program, int default_block = kDefaultBlock, const OptionSpec& spec = {});

}  // namespace reduce
