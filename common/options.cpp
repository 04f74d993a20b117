#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <cstdlib>
#include <sstream>

namespace reduce {
namespace {

template <typename Int>
std::optional<Int> parse_int(std::string_view text) {
  Int value{};
  if (text.empty() || text.front() == '+' || text.front() == '-') return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

std::optional<std::int64_t> parse_count(std::string_view text) {
  std::optional<std::int64_t> value;
  if (text.size() > 2 && text.substr(0, 2) == "2^") {
    const auto k = parse_int<int>(text.substr(2));
    if (k && *k <= 62) value = std::int64_t{1} << *k;
  } else if (!text.empty() && (text.back() == 'K' || text.back() == 'M' || text.back() == 'G')) {
    const int shift = text.back() == 'K' ? 10 : text.back() == 'M' ? 20 : 30;
    const auto base = parse_int<std::int64_t>(text.substr(0, text.size() - 1));
    if (base && *base <= (max_n() >> shift)) value = *base << shift;
  } else {
    value = parse_int<std::int64_t>(text);
  }
  if (value && *value > max_n()) return std::nullopt;
  return value;
}

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::constant: return "constant";
    case Pattern::integers: return "int";
    case Pattern::uniform: return "uniform";
    case Pattern::mixed: return "mixed";
    case Pattern::nan: return "nan";
    case Pattern::inf: return "inf";
    case Pattern::ties: return "ties";
    case Pattern::limits: return "limits";
  }
  return "?";
}

const char* to_string(Format f) {
  switch (f) {
    case Format::text: return "text";
    case Format::csv: return "csv";
    case Format::json: return "json";
  }
  return "?";
}

std::optional<Pattern> parse_pattern(std::string_view text, const std::vector<Pattern>& allowed) {
  for (Pattern p : allowed)
    if (text == to_string(p)) return p;
  return std::nullopt;
}

namespace {

// "a, b or c"
std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

std::vector<std::string> pattern_names(const std::vector<Pattern>& patterns) {
  std::vector<std::string> names;
  for (Pattern p : patterns) names.push_back(to_string(p));
  return names;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args, const OptionSpec& spec) {
  Options opt;
  for (const ExtraOption& e : spec.extra) opt.extra[e.name] = e.values.at(0);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "--help" || name == "-h") {
      opt.help = true;
      continue;
    }
    if (name.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + args[i] + "' (options start with --; see --help)");
    static const char* const kKnown[] = {"--n", "--iters", "--warmup", "--block", "--seed",
                                         "--pattern", "--format", "--device", "--cpu-runs"};
    const auto extra = std::find_if(spec.extra.begin(), spec.extra.end(), [&](const ExtraOption& e) { return e.name == name; });
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown) && extra == spec.extra.end())
      throw UsageError("unknown option '" + name + "' (see --help)");
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError("option " + name + " needs a value");
      value = args[++i];
    }
    const std::string& v = *value;
    auto bad = [&](const std::string& expected) {
      return UsageError("invalid value '" + v + "' for " + name + ": expected " + expected);
    };
    auto int_in = [&](int lo, int hi, const std::string& expected) {
      const auto x = parse_int<int>(v);
      if (!x || *x < lo || *x > hi) throw bad(expected);
      return *x;
    };

    if (extra != spec.extra.end()) {
      if (std::find(extra->values.begin(), extra->values.end(), v) == extra->values.end()) throw bad(one_of(extra->values));
      opt.extra[name] = v;
    } else if (name == "--n") {
      const auto n = parse_count(v);
      if (!n) throw bad("a count from 0 to 2^36: 1000, 4K, 16M, 1G or 2^20");
      opt.n = *n;
    } else if (name == "--iters") {
      opt.iters = int_in(1, 100000, "an integer from 1 to 100000");
    } else if (name == "--warmup") {
      opt.warmup = int_in(0, 10000, "an integer from 0 to 10000");
    } else if (name == "--block") {
      opt.block = int_in(32, 1024, "a power of two from 32 to 1024");
      if (!is_power_of_two(opt.block)) throw bad("a power of two from 32 to 1024");
      opt.block_given = true;
    } else if (name == "--seed") {
      const auto s = parse_int<std::uint64_t>(v);
      if (!s) throw bad("a non-negative integer");
      opt.seed = *s;
    } else if (name == "--pattern") {
      const auto p = parse_pattern(v, spec.patterns);
      if (!p) throw bad(one_of(pattern_names(spec.patterns)));
      opt.pattern = *p;
    } else if (name == "--format") {
      if (v == "text") opt.format = Format::text;
      else if (v == "csv") opt.format = Format::csv;
      else if (v == "json") opt.format = Format::json;
      else throw bad("text, csv or json");
    } else if (name == "--device") {
      opt.device = int_in(0, 1023, "a device ordinal (0, 1, ...)");
    } else if (name == "--cpu-runs") {
      opt.cpu_runs = int_in(0, 1000, "an integer from 0 to 1000");
    } else {
      throw UsageError("option " + name + " is listed but not handled");  // a bug, not bad input
    }
  }
  return opt;
}

Options parse_options(int argc, const char* const* argv, const OptionSpec& spec) {
  return parse_options(std::vector<std::string>(argv + 1, argv + argc), spec);
}

std::string usage(const char* program, int default_block, const OptionSpec& spec) {
  const Options d;
  std::ostringstream os;
  os << "usage: " << program << " [options]\n"
     << (spec.summary.empty() ? "Reduces n floats to their sum on the GPU" : spec.summary)
     << ", checks the result against a CPU reference and\n"
     << "times it (L2 flushed before every timed run, so the bandwidth is DRAM bandwidth).\n\n"
     << "  --n COUNT        elements: 1000, 4K (=4096), 16M (=2^24), 1G (=2^30) or 2^k  [2^26]\n"
     << "  --iters N        timed runs; the report gives median, min and max            [" << d.iters << "]\n"
     << "  --warmup N       untimed runs before them                                    [" << d.warmup << "]\n"
     << "  --block N        threads per block, a power of two from 32 to 1024           [" << default_block << "]\n"
     << "  --seed N         seed of the input generator                                 [" << d.seed << "]\n"
     << "  --pattern P      input values: constant (all 1.0), int (small integers, exact\n"
     << "                   check), uniform (in [0,1)), mixed (in [-1,1))                [" << to_string(d.pattern) << "]\n";
  if (const auto names = pattern_names(spec.patterns); names.size() > 4)
    os << "                   also " << one_of({names.begin() + 4, names.end()}) << " (special values)\n";
  for (const ExtraOption& e : spec.extra) {
    os << "  " << e.name << " " << one_of(e.values) << "\n                   " << e.help << "  [" << e.values.at(0) << "]\n";
  }
  os
     << "  --format F       text, or one csv or json record for scripts                 [text]\n"
     << "  --device N       CUDA device ordinal                                         [0]\n"
     << "  --cpu-runs N     timed runs of each CPU sum (one thread; all cores), 0 to skip [" << d.cpu_runs << "]\n"
     << "  --help           this text\n\n"
     << "Exit codes: 0 result correct, 1 wrong result or CUDA error, 2 bad usage,\n"
     << "77 no usable CUDA device (or too little device memory for --n).\n";
  return os.str();
}

}  // namespace reduce
