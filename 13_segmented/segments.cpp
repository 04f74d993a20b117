#include "segments.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include "files.hpp"

namespace step13 {
namespace {

// splitmix64 of (seed, i): the i-th random 64-bit word of a stream, computed without state.
std::uint64_t hash(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + (i + 1) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double unit(std::uint64_t seed, std::uint64_t i) { return (hash(seed, i) >> 11) * 0x1.0p-53; }  // [0, 1)

// Draws lengths len(i) for i = 0, 1, ... until they cover n; the last segment takes what is left.
template <typename Length>
Offsets cover(std::int64_t n, Length len) {
  Offsets o{0};
  for (std::int64_t i = 0; o.back() < n; ++i) o.push_back(std::min(n, o.back() + len(i)));
  return o;
}

// Rows r = 0 .. rows-1 of offsets[r] = r * n / rows: equal rows when rows divides n, else differing by 1.
Offsets equal_rows(std::int64_t n, std::int64_t rows) {
  Offsets o(rows + 1);
  for (std::int64_t r = 0; r <= rows; ++r) o[r] = static_cast<std::int64_t>((static_cast<__int128>(n) * r) / rows);
  return o;
}

}  // namespace

const std::vector<Distribution>& distributions() {
  static const std::vector<Distribution> list = {
      {"uniform32", "lengths uniform in 1..32"},
      {"fixed1000", "every segment 1000 long"},
      {"hundred", "100 segments of about n/100 (+-20%; ~2.7M each at 2^28)"},
      {"whole", "one segment of the whole array"},
      {"powerlaw", "lengths 10^(7u) - 1 for u uniform in [0,1): 0 .. 10^7, density ~ 1/(len+1); every 8th empty"},
      {"matrix-wide", "1024 equal rows (1024 x 2^18 at 2^28)"},
      {"matrix-tall", "rows of 1024 (2^18 x 1024 at 2^28)"},
  };
  return list;
}

const Distribution* find_distribution(std::string_view name) {
  for (const Distribution& d : distributions())
    if (name == d.name) return &d;
  return nullptr;
}

Offsets make_offsets(std::string_view name, std::int64_t n, std::uint64_t seed) {
  if (name == "uniform32")
    return cover(n, [&](std::int64_t i) { return 1 + static_cast<std::int64_t>(hash(seed, i) % 32); });
  if (name == "fixed1000") return cover(n, [](std::int64_t) { return std::int64_t{1000}; });
  if (name == "whole") return n > 0 ? Offsets{0, n} : Offsets{0};
  if (name == "matrix-wide") return equal_rows(n, 1024);
  if (name == "matrix-tall") return cover(n, [](std::int64_t) { return std::int64_t{1024}; });
  if (name == "hundred") {
    Offsets o = equal_rows(n, 100);  // then each inner cut moves by up to +-10% of a segment
    const double base = static_cast<double>(n) / 100;
    for (std::size_t i = 1; i + 1 < o.size(); ++i) {  // rounded toward zero: no move while a segment is short
      const auto move = static_cast<std::int64_t>((unit(seed, i) - 0.5) * 0.2 * base);
      o[i] = std::clamp(o[i] + move, o[i - 1], o[i + 1]);
    }
    return o;
  }
  if (name == "powerlaw")
    return cover(n, [&](std::int64_t i) {
      if (i % 8 == 7) return std::int64_t{0};
      return static_cast<std::int64_t>(std::floor(std::pow(10.0, 7.0 * unit(seed, i)))) - 1;
    });
  std::string names;
  for (const Distribution& d : distributions()) names += std::string(names.empty() ? "" : ", ") + d.name;
  throw reduce::UsageError("invalid value '" + std::string(name) + "' for --segments: expected one of " + names);
}

Offsets fixed_offsets(std::int64_t n, std::int64_t length) {
  const std::int64_t segments = length > 0 ? n / length : 0;
  Offsets o(segments + 1);
  for (std::int64_t s = 0; s <= segments; ++s) o[s] = s * length;
  return o;
}

std::int64_t equal_length(const Offsets& o) {
  if (o.size() < 2) return 0;
  const std::int64_t len = o[1] - o[0];
  if (len == 0) return 0;
  for (std::size_t s = 1; s + 1 < o.size(); ++s)
    if (o[s + 1] - o[s] != len) return 0;
  return len;
}

namespace {

// Refuses offsets[s] (reduce::UsageError, one line) when it breaks a rule given the entries before it.
void check_entry(const Offsets& o, std::size_t s, std::int64_t n) {
  auto fail = [](const std::string& what) { throw reduce::UsageError("bad offsets: " + what); };
  if (s == 0 && o[0] < 0) fail("offsets[0] = " + std::to_string(o[0]) + " is negative");
  if (s > 0 && o[s] < o[s - 1])
    fail("not monotone: offsets[" + std::to_string(s) + "] = " + std::to_string(o[s]) + " < offsets[" +
         std::to_string(s - 1) + "] = " + std::to_string(o[s - 1]));
  if (o[s] > n)
    fail("offsets[" + std::to_string(s) + "] = " + std::to_string(o[s]) + " is beyond n = " + std::to_string(n));
}

}  // namespace

void validate_offsets(const Offsets& o, std::int64_t n) {
  if (o.empty()) throw reduce::UsageError("bad offsets: no entries (S segments need S + 1 offsets; S = 0 needs one)");
  for (std::size_t s = 0; s < o.size(); ++s) check_entry(o, s, n);
}

Offsets read_offsets(const std::string& path, std::int64_t n) {
  Offsets o;
  // Each entry is checked as it is read: the first bad one is refused at once, however long the file.
  reduce::for_each_word(path, "--offsets", kMaxOffsetsFileBytes, kMaxOffsetChars, [&](const reduce::Word& w) {
    const std::string_view t = w.text;
    const char* first = t.data() + (t[0] == '+');  // "+5" as "5"; from_chars takes only '-'
    const char* const end = t.data() + t.size();
    std::int64_t v = 0;
    const auto [stop, ec] = std::from_chars(first, end, v);
    if (w.cut || ec != std::errc{} || stop != end || first == end || (t[0] == '+' && *first == '-'))
      throw reduce::UsageError(
          "--offsets: " +
          (w.cut ? reduce::quote(t.substr(0, 16)) + "... (over " + std::to_string(kMaxOffsetChars) + " bytes)"
                 : reduce::quote(t)) +
          " in " + reduce::quote(path) + " (entry " + std::to_string(w.index) + ") is not an integer of 64 bits");
    if (w.index >= kMaxOffsets)
      throw reduce::UsageError("--offsets: " + reduce::quote(path) + " holds more than " + std::to_string(kMaxOffsets) +
                               " offsets, the most --offsets reads");
    o.push_back(v);
    check_entry(o, o.size() - 1, n);
  });
  return o;
}

reduce::Reference segment_reference(const float* x, std::int64_t a, std::int64_t b) {
  if (b - a >= (std::int64_t{1} << 20)) return reduce::reference_sum(x + a, b - a);  // on every core
  reduce::Reference r;
  for (std::int64_t i = a; i < b; ++i) {
    r.sum += x[i];
    r.abs_sum += std::fabs(static_cast<double>(x[i]));
  }
  return r;
}

SegmentsCheck check_segments(const float* x, const Offsets& o, const float* gpu, reduce::Pattern p) {
  SegmentsCheck c;
  for (std::size_t s = 0; s + 1 < o.size(); ++s) {
    const reduce::Reference ref = segment_reference(x, o[s], o[s + 1]);
    const reduce::Check k = reduce::check_result(gpu[s], ref, o[s + 1] - o[s], p);
    c.exact = c.exact && k.exact;
    if (k.passed) continue;
    if (c.wrong++ == 0) {
      c.first_wrong = static_cast<std::int64_t>(s);
      c.first_gpu = gpu[s];
      c.first_check = k;
      c.first_reference = ref.sum;
    }
  }
  return c;
}

std::vector<reduce::ExtraOption> options() {
  std::vector<std::string> names;
  std::string described = "the distribution of segment lengths over n floats:";
  for (const Distribution& d : distributions()) {
    names.push_back(d.name);
    described +=
        "\n                     " + std::string(d.name) + std::string(12 - std::strlen(d.name), ' ') + d.description;
  }
  // powerlaw first: the default, a mix of every tier.
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == "powerlaw") std::swap(names[i], names[0]);
  reduce::ExtraOption size{"--segment-size",
                           {},
                           "segments of L floats each (n / L of them), no offsets read: the "
                           "fixed-size mode",
                           "L"};
  size.check = [](const std::string& v) -> std::string {
    const auto len = reduce::parse_count(v);
    return len && *len >= 1 ? "" : "a segment length from 1 to n: 16, 1000, 4K or 2^10";
  };
  size.set = [](const std::string& v) { args().segment_size = *reduce::parse_count(v); };
  return {
      reduce::choice_option("--segments", args().segments, names, described),
      reduce::text_option("--offsets", args().offsets,
                          "a file of S + 1 integers (white space between) instead of --segments", "FILE"),
      size,
      reduce::choice_option("--search", args().search, {"auto", "kernel", "block"},
                            "where each tile's first segment is found in the offsets: auto (a kernel of its own where\n"
                            "                     the segments outnumber the tiles of 32768 floats, else each block),\n"
                            "                     kernel, or block (the record's \"search\" says which ran)")};
}

Args& args() {
  static Args a;
  return a;
}

reduce::OptionSpec spec() {
  reduce::OptionSpec s;
  s.summary = "Sums S segments of n floats, given by 64-bit offsets, into S outputs on the GPU";
  s.extra = options();
  s.block = reduce::BlockRule::inside("13_segmented chooses its own launch shape per segment length");
  s.notes =
      "Besides the step, the run times cub::DeviceSegmentedReduce::Sum on the same input (cub_median_ms,\n"
      "cub_gbps, vs_cub in the record), and, when built with a CCCL 3.5 or newer (-DCCCL_DIR), that CUB's\n"
      "offsets overload (cub35_*) and, where every segment has one length, its fixed-size overload\n"
      "(cub35_fixed_*). Bytes counted: 4 per float inside a segment and 8 per offset (none with\n"
      "--segment-size).\n"
      "--cpu-runs times the plain loop over the floats the segments cover (one core; all cores).";
  return s;
}

void check_options(const reduce::Options& opt) {
  if (opt.has("--segment-size")) {
    if (opt.has("--segments") || opt.has("--offsets"))
      throw reduce::UsageError("--segment-size replaces --segments and --offsets: give one of them");
    if (opt.has("--search"))
      throw reduce::UsageError("--search applies to offsets; with --segment-size every block computes its own");
    const std::int64_t len = args().segment_size;
    if (len > opt.n)
      throw reduce::UsageError("--segment-size " + std::to_string(len) +
                               " is longer than n = " + std::to_string(opt.n) + ": no whole segment");
    return;
  }
  if (!opt.has("--offsets")) return;
  if (opt.has("--segments")) throw reduce::UsageError("--offsets replaces --segments: give one of them");
  validate_offsets(read_offsets(args().offsets, opt.n), opt.n);
}

Layout layout_of(const reduce::Options& opt) {
  Layout l;
  const std::string file = args().offsets;
  l.fixed = opt.has("--segment-size") ? args().segment_size : 0;
  l.offsets = l.fixed > 0    ? fixed_offsets(opt.n, l.fixed)
              : file.empty() ? make_offsets(args().segments, opt.n, opt.seed)
                             : read_offsets(file, opt.n);
  validate_offsets(l.offsets, opt.n);
  l.distribution = l.fixed > 0 ? "fixed:" + std::to_string(l.fixed) : file.empty() ? args().segments : "file:" + file;
  return l;
}

reduce::Verdict verdict_of(const SegmentsCheck& c, const Offsets& offsets) {
  reduce::Verdict v;
  v.check = c.first_check;
  v.check.exact = c.exact;
  v.passed = c.wrong == 0;
  if (c.wrong > 0) {
    const std::int64_t s = c.first_wrong;
    v.result = c.first_gpu;
    v.reference = c.first_reference;
    v.what = "segment " + std::to_string(s) + " [" + std::to_string(offsets[s]) + ", " +
             std::to_string(offsets[s + 1]) + ")";
    v.note = std::to_string(c.wrong) + " of " + std::to_string(offsets.size() - 1) + " segments wrong";
  }
  return v;
}

}  // namespace step13
