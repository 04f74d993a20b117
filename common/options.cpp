#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <utility>

#include "files.hpp"  // quote()

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
    case Pattern::constant:
      return "constant";
    case Pattern::integers:
      return "int";
    case Pattern::uniform:
      return "uniform";
    case Pattern::mixed:
      return "mixed";
    case Pattern::nan:
      return "nan";
    case Pattern::inf:
      return "inf";
    case Pattern::ties:
      return "ties";
    case Pattern::limits:
      return "limits";
    case Pattern::normal:
      return "normal";
    case Pattern::lognormal:
      return "lognormal";
    case Pattern::logu40:
      return "logu40";
    case Pattern::logu120:
      return "logu120";
    case Pattern::wide:
      return "wide";
    case Pattern::outliers:
      return "outliers";
    case Pattern::products:
      return "products";
  }
  return "?";
}

const char* to_string(Format f) {
  switch (f) {
    case Format::text:
      return "text";
    case Format::csv:
      return "csv";
    case Format::json:
      return "json";
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

bool Options::has(const std::string& name) const { return std::find(given.begin(), given.end(), name) != given.end(); }

std::string count_text(std::int64_t n) {
  if (n > 0 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t{1} << k) < n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

namespace {
// integer_option's check: an integer in [lo, hi].
std::function<std::string(const std::string&)> integer_in(long long lo, long long hi) {
  return [lo, hi](const std::string& v) -> std::string {
    const auto x = parse_int<long long>(v);
    if (x && *x >= lo && *x <= hi) return "";
    return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  };
}
}  // namespace

ExtraOption integer_option(std::string name, std::int64_t& field, std::int64_t lo, std::int64_t hi, std::string help,
                           std::string metavar) {
  ExtraOption e{std::move(name), {}, std::move(help), std::move(metavar)};
  e.check = integer_in(lo, hi);
  e.set = [&field](const std::string& v) { field = *parse_int<std::int64_t>(v); };
  return e;
}

ExtraOption text_option(std::string name, std::string& field, std::string help, std::string metavar) {
  ExtraOption e{std::move(name), {}, std::move(help), std::move(metavar), field};
  e.set = [&field](const std::string& v) { field = v; };
  return e;
}

ExtraOption flag_option(std::string name, bool& field, std::string help) {
  ExtraOption e{std::move(name), {}, std::move(help)};
  e.flag = true;
  e.set = [&field](const std::string&) { field = true; };
  return e;
}

ExtraOption choice_option(std::string name, std::string& field, std::vector<std::string> values, std::string help) {
  field = values.at(0);
  ExtraOption e{std::move(name), std::move(values), std::move(help)};
  e.set = [&field](const std::string& v) { field = v; };
  return e;
}

Options parse_options(const std::vector<std::string>& args, const OptionSpec& spec) {
  Options opt;
  opt.n = spec.default_n;
  opt.block = spec.block.size;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "--help" || name == "-h") {
      if (value) throw UsageError("option " + name + " takes no value");
      opt.help = true;
      continue;
    }
    if (name.rfind("--", 0) != 0)
      throw UsageError("unexpected argument " + quote(args[i]) + " (options start with --; see --help)");
    static const char* const kKnown[] = {"--n",       "--iters",  "--warmup", "--block",   "--seed",
                                         "--pattern", "--format", "--device", "--cpu-runs"};
    const auto extra =
        std::find_if(spec.extra.begin(), spec.extra.end(), [&](const ExtraOption& e) { return e.name == name; });
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown) && extra == spec.extra.end())
      throw UsageError("unknown option " + quote(name) + " (see --help)");
    if (opt.has(name)) throw UsageError("option " + name + " given twice");
    if (name == "--block" && !spec.block.takes_option()) throw UsageError("--block: " + std::string(spec.block.reason));
    for (const auto& [refused, why] : spec.refused)
      if (name == refused) throw UsageError(name + ": " + why);
    opt.given.push_back(name);
    if (extra != spec.extra.end() && extra->flag) {
      if (value) throw UsageError("option " + name + " takes no value");
      if (extra->set) extra->set("1");
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError("option " + name + " needs a value");
      value = args[++i];
    }
    const std::string& v = *value;
    auto bad = [&](const std::string& expected) {
      return UsageError("invalid value " + quote(v) + " for " + name + ": expected " + expected);
    };
    auto int_in = [&](int lo, int hi, const std::string& expected) {
      const auto x = parse_int<int>(v);
      if (!x || *x < lo || *x > hi) throw bad(expected);
      return *x;
    };

    if (extra != spec.extra.end()) {
      if (!extra->values.empty()) {
        if (std::find(extra->values.begin(), extra->values.end(), v) == extra->values.end())
          throw bad(one_of(extra->values));
      } else if (extra->check) {
        if (const std::string expected = extra->check(v); !expected.empty()) throw bad(expected);
      } else if (v.empty()) {
        throw bad("a value");
      }
      if (extra->set) extra->set(v);
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
    } else if (name == "--seed") {
      const auto s = parse_int<std::uint64_t>(v);
      if (!s) throw bad("a non-negative integer");
      opt.seed = *s;
    } else if (name == "--pattern") {
      const auto p = parse_pattern(v, spec.patterns);
      if (!p) throw bad(one_of(pattern_names(spec.patterns)));
      opt.pattern = *p;
    } else if (name == "--format") {
      if (v == "text")
        opt.format = Format::text;
      else if (v == "csv")
        opt.format = Format::csv;
      else if (v == "json")
        opt.format = Format::json;
      else
        throw bad("text, csv or json");
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

namespace {

// One option's --help entry: the name and its argument padded to a column, the text, the default.
void option_line(std::ostringstream& os, const std::string& left, const std::string& text, const std::string& dflt) {
  std::string line = "  " + left;
  line += std::string(line.size() < 19 ? 19 - line.size() : 1, ' ') + text;
  if (!dflt.empty()) line += std::string(line.size() < 80 ? 80 - line.size() : 1, ' ') + "[" + dflt + "]";
  os << line << "\n";
}

}  // namespace

std::string usage(const char* program, const char* lesson, const OptionSpec& spec) {
  const Options d;
  std::ostringstream os;
  if (lesson && *lesson) os << program << ": " << lesson << "\n";
  os << "usage: " << program << " [options]\n"
     << (spec.summary.empty() ? "Reduces n floats to their sum on the GPU" : spec.summary) << ";\n"
     << spec.method << "\n\n";
  // A common option's line, or "refused here" with the reason where this program refuses it.
  auto common = [&](const std::string& name, const std::string& left, const std::string& text,
                    const std::string& dflt) {
    for (const auto& [refused, why] : spec.refused)
      if (refused == name) return option_line(os, left, "refused here: " + why, "");
    option_line(os, left, text, dflt);
  };
  common("--n", "--n COUNT", "elements: 1000, 4K (=4096), 16M (=2^24), 1G (=2^30) or 2^k", count_text(spec.default_n));
  common("--iters", "--iters N", "timed runs; the report gives median, min and max", std::to_string(d.iters));
  common("--warmup", "--warmup N", "untimed runs before them", std::to_string(d.warmup));
  if (spec.block.takes_option())
    option_line(os, "--block N", "threads per block, a power of two from 32 to 1024", std::to_string(spec.block.size));
  else
    option_line(os, "--block N", "refused here: " + std::string(spec.block.reason), "");
  common("--seed", "--seed N", "seed of the input generator", std::to_string(d.seed));
  const bool patterns =
      std::none_of(spec.refused.begin(), spec.refused.end(), [](const auto& r) { return r.first == "--pattern"; });
  if (patterns) {
    os << "  --pattern P      input values: constant (all 1.0), int (small integers, exact\n";
    option_line(os, "", "check), uniform (in [0,1)), mixed (in [-1,1))", to_string(d.pattern));
    os << "                   of many scales: normal, lognormal, logu40 and logu120 (log-uniform over\n"
          "                   40 or 120 binades), wide (every binade to 2^91), outliers, products\n";
    const std::size_t common_patterns = OptionSpec{}.patterns.size();
    if (const auto names = pattern_names(spec.patterns); names.size() > common_patterns)
      os << "                   also " << one_of({names.begin() + common_patterns, names.end()})
         << " (special values)\n";
  } else {
    common("--pattern", "--pattern P", "", "");
  }
  for (const ExtraOption& e : spec.extra) {
    const std::string left = e.name + (e.flag ? "" : " " + (e.values.empty() ? e.metavar : one_of(e.values)));
    const std::string dflt = e.flag ? "" : e.values.empty() ? e.default_value : e.values.at(0);
    if (left.size() > 16) {
      os << "  " << left << "\n";
      option_line(os, "", e.help, dflt);
    } else {
      option_line(os, left, e.help, dflt);
    }
  }
  common("--format", "--format F", "text, or csv or json records for scripts", "text");
  common("--device", "--device N", "CUDA device ordinal", "0");
  common("--cpu-runs", "--cpu-runs N", "timed runs of each CPU sum (one thread; all cores), 0 skips",
         std::to_string(d.cpu_runs));
  option_line(os, "--help", "this text", "");
  if (!spec.notes.empty()) os << "\n" << spec.notes << (spec.notes.back() == '\n' ? "" : "\n");
  os << "\nExit codes: 0 result correct, 1 wrong result or CUDA error, 2 bad usage,\n"
     << "77 no usable CUDA device (or too little device memory for --n).\n";
  return os.str();
}

std::string usage(const char* program, BlockRule block) {
  OptionSpec spec;
  spec.block = block;
  return usage(program, nullptr, spec);
}

}  // namespace reduce
