#include "report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace reduce {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string general(double v) {  // round-trip precision for machine-readable output
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::vector<Field> fields(const Report& r) {
  const auto str = text_field;
  const auto num = number_field;
  const auto boolean = bool_field;
  // What the record is first: its schema and the build's commit, then the device it ran on.
  std::vector<Field> all = {
      num("schema", kRecordSchema),
      str("commit", build_commit()),
      boolean("commit_dirty", build_commit_dirty()),
      str("step", r.step),
      str("lesson", r.lesson),
      str("device", r.device.name),
      str("compute_capability", std::to_string(r.device.cc_major) + "." + std::to_string(r.device.cc_minor)),
      num("sm_count", r.device.sm_count),
      num("sm_clock_mhz", r.device.sm_clock_mhz),
      num("mem_clock_mhz", r.device.mem_clock_mhz),
      num("l2_bytes", static_cast<double>(r.device.l2_bytes)),
      num("memory_bytes", static_cast<double>(r.device.memory_bytes)),
      num("peak_gbps", r.device.peak_gbps),
      str("cuda_runtime", cuda_version(r.device.runtime_version)),
      str("cuda_driver", cuda_version(r.device.driver_version)),
      num("n", static_cast<double>(r.n)),
      num("bytes", bytes_read(r)),
      str("pattern", to_string(r.pattern)),
      num("seed", static_cast<double>(r.seed)),
      num("block", r.block),
      str("block_rule", r.block_rule),
      num("grid", static_cast<double>(r.grid)),
      num("launches", r.launches),
      num("per_thread", elements_per_thread(r)),
      num("iters", r.iters),
      num("warmup", r.warmup),
      num("median_ms", r.ms.median),
      num("min_ms", r.ms.min),
      num("max_ms", r.ms.max),
      num("q1_ms", r.ms.q1),
      num("q3_ms", r.ms.q3),
      num("gbps", r.gbps),
      num("pct_peak", r.pct_peak),
      num("cpu_ms", r.cpu_ms),
      num("speedup_vs_cpu", r.speedup_vs_cpu),
      num("cpu_parallel_ms", r.cpu_parallel_ms),
      num("cpu_threads", r.cpu_threads),
      num("speedup_vs_cpu_parallel", r.speedup_vs_cpu_parallel),
      num("result", r.result),
      num("reference", r.reference),
      num("abs_error", r.abs_error),
      num("tolerance", r.tolerance),
      boolean("exact_check", r.exact_check),
      num("runs_correct", r.runs_correct),
      num("runs_total", r.runs_total),
      boolean("deterministic", r.deterministic),
      boolean("runs_identical", r.runs_identical),
      boolean("input_unchanged", r.input_unchanged),
      boolean("fits_in_l2", r.fits_in_l2),
      boolean("passed", r.passed),
  };
  all.insert(all.end(), r.extra.begin(), r.extra.end());
  return all;
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string json_number(double v) {
  return std::isfinite(v) ? general(v) : "null";  // JSON has no NaN or infinity
}

std::string exact_text(long long v) { return std::to_string(v); }
std::string exact_text(double v) { return general(v); }

Field text_field(std::string name, std::string value) {
  return Field{Field::string, std::move(name), std::move(value)};
}
Field number_field(std::string name, double value) { return Field{Field::number, std::move(name), general(value)}; }
Field bool_field(std::string name, bool value) {
  return Field{Field::boolean, std::move(name), value ? "true" : "false"};
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  s.samples = samples;
  std::sort(samples.begin(), samples.end());
  const std::size_t k = samples.size();
  auto median_of = [&](std::size_t first, std::size_t count) {
    return count % 2 ? samples[first + count / 2] : 0.5 * (samples[first + count / 2 - 1] + samples[first + count / 2]);
  };
  s.median = median_of(0, k);
  s.q1 = k > 1 ? median_of(0, k / 2) : s.median;
  s.q3 = k > 1 ? median_of(k - k / 2, k / 2) : s.median;
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

double time_cpu(int runs, const std::function<void()>& body) {
  std::vector<double> ms;
  for (int k = 0; k < runs; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return summarize(ms).median;
}

double theoretical_gbps(int memory_clock_khz, int bus_width_bits) {
  return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

double bytes_read(const Report& r) { return r.bytes > 0 ? r.bytes : static_cast<double>(r.n) * r.element_bytes; }

void derive_rates(Report& r) {
  const double bytes = bytes_read(r);
  r.gbps = gbps_of(bytes, r.ms.median);
  r.pct_peak = r.device.peak_gbps > 0 ? 100.0 * r.gbps / r.device.peak_gbps : 0.0;
  r.speedup_vs_cpu = (r.cpu_ms > 0 && r.ms.median > 0) ? r.cpu_ms / r.ms.median : 0.0;
  r.speedup_vs_cpu_parallel = (r.cpu_parallel_ms > 0 && r.ms.median > 0) ? r.cpu_parallel_ms / r.ms.median : 0.0;
}

double elements_per_thread(const Report& r) {
  const double threads = static_cast<double>(r.grid) * r.block;
  return threads > 0 ? static_cast<double>(r.n) / threads : 0.0;
}

std::string format_count(std::int64_t n) {
  const std::string power = count_text(n);  // "2^k" for a power of two, else the number again
  return power == std::to_string(n) ? power : std::to_string(n) + " (" + power + ")";
}

std::string format_text(const Report& r) {
  const DeviceInfo& d = r.device;
  std::ostringstream os;
  os << r.step << ": " << r.lesson << "\n"
     << "  device     " << d.name << " (sm_" << d.cc_major << d.cc_minor << ", " << d.sm_count << " SMs, "
     << fixed(d.l2_bytes / 1e6, 1) << " MB L2, " << fixed(d.memory_bytes / 1e9, 1) << " GB, theoretical DRAM "
     << fixed(d.peak_gbps, 0) << " GB/s; CUDA runtime " << cuda_version(d.runtime_version) << ", driver "
     << cuda_version(d.driver_version) << ")\n"
     << "  input      n = " << format_count(r.n) << " " << r.element_name << ", " << fixed(bytes_read(r) / 1e6, 1)
     << " MB read, pattern " << to_string(r.pattern) << ", seed " << r.seed << "\n"
     << "  launch     ";
  if (r.launches > 0)
    os << "grid " << r.grid << " x block " << r.block << " (" << fixed(elements_per_thread(r), 1)
       << " elements per thread), " << r.launches << (r.launches == 1 ? " kernel" : " kernels") << " per reduction";
  else
    os << (r.block_rule == "chosen" ? "shape chosen at run time (a library, or per segment length)"
                                    : "block " + std::to_string(r.block));
  os << "; " << r.iters << " timed runs after " << r.warmup << " warm-up, L2 flushed before each\n";
  os << "  result     " << general(r.result) << " vs reference " << fixed(r.reference, 4) << ": |error| " << r.abs_error
     << (r.exact_check ? " (exact check)" : " <= tolerance " + std::to_string(r.tolerance)) << "; " << r.runs_correct
     << "/" << r.runs_total << " runs correct; "
     << (r.runs_identical ? "all runs bitwise identical" : "results vary between runs")
     << (r.deterministic ? "" : " (not deterministic by design)") << "; input "
     << (r.input_unchanged ? "unchanged" : "MODIFIED") << "\n";
  if (r.n > 0) {
    os << "  time       median " << fixed(r.ms.median, 4) << " ms (min " << fixed(r.ms.min, 4) << ", max "
       << fixed(r.ms.max, 4) << ")\n"
       << "  bandwidth  " << fixed(r.gbps, 1) << " GB/s read, " << fixed(r.pct_peak, 1) << "% of theoretical peak\n";
  }
  if (r.cpu_ms > 0)
    os << "  cpu        plain single-thread float loop: " << fixed(r.cpu_ms, 3) << " ms; GPU speedup "
       << fixed(r.speedup_vs_cpu, 1) << "x\n";
  if (r.cpu_parallel_ms > 0)
    os << "  cpu        all " << r.cpu_threads << " CPU threads, vectorized (OpenMP): " << fixed(r.cpu_parallel_ms, 3)
       << " ms; GPU speedup " << fixed(r.speedup_vs_cpu_parallel, 1) << "x\n";
  if (r.fits_in_l2)
    os << "  note       the input fits in L2: the flush still makes every run read DRAM, but launch\n"
       << "             latency dominates at this size; use --n 2^26 or more for bandwidth figures\n";
  for (const Field& f : r.extra)
    os << "  " << f.name << std::string(f.name.size() < 10 ? 11 - f.name.size() : 1, ' ') << f.value << "\n";
  os << (r.passed ? "PASS" : "FAIL") << "\n";
  return os.str();
}

std::string csv_header() { return csv_header(Report{}); }

std::string csv_header(const Report& r) {
  std::string out;
  for (const Field& f : fields(r)) out += (out.empty() ? "" : ",") + f.name;
  return out;
}

std::string format_csv(const Report& r) {
  std::string out;
  bool first = true;
  for (const Field& f : fields(r)) {
    out += (first ? "" : ",") + (f.kind == Field::string ? csv_field(f.value) : f.value);
    first = false;
  }
  return out;
}

std::string format_json(const Report& r) {
  std::string out = "{";
  bool first = true;
  for (const Field& f : fields(r)) {
    out += (first ? "" : ", ") + json_string(f.name) + ": ";
    if (f.kind == Field::string)
      out += json_string(f.value);
    else if (f.kind == Field::number && (f.value == "nan" || f.value == "inf" || f.value == "-inf"))
      out += "null";  // JSON has no NaN or infinity
    else
      out += f.value;
    first = false;
  }
  // Every timed sample (ms), the step's and each comparison's, so that compare can bootstrap the ratio
  // of medians.
  auto samples = [&](const std::string& name, const std::vector<double>& ms) {
    if (ms.empty()) return;
    out += std::string(first ? "" : ", ") + json_string(name) + ": [";
    for (std::size_t i = 0; i < ms.size(); ++i) out += (i ? ", " : "") + json_number(ms[i]);
    out += "]";
    first = false;
  };
  samples("samples_ms", r.ms.samples);
  for (const auto& [name, ms] : r.extra_samples) samples(name + "_samples_ms", ms);
  return out + "}";
}

}  // namespace reduce
