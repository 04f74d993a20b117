// Statistics and the report of one run: human text, or one csv / json record (CPU only).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "options.hpp"

namespace reduce {

struct Summary {
  double median = 0.0, min = 0.0, max = 0.0;
  double q1 = 0.0, q3 = 0.0;    // the lower and upper quartiles: the middle half of the runs lies between
  std::vector<double> samples;  // every timed run in run order: the json record keeps them for compare's bootstrap
};
// Median (mean of the two middle values for an even count), quartiles (the medians of the lower and
// upper halves), min and max. Empty input: all zero.
Summary summarize(std::vector<double> samples);

// The median milliseconds of `runs` calls of body() on the CPU (0 when runs is 0): a CPU yardstick.
double time_cpu(int runs, const std::function<void()>& body);

// GB/s of `bytes` read in `ms` milliseconds (0 when ms is not positive): decimal, as every report.
inline double gbps_of(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; }

struct DeviceInfo {
  std::string name;
  int ordinal = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  // The clocks the device reports when the run opens it (cudaDevAttrClockRate, cudaDevAttrMemoryClockRate):
  // its rated maximum SM clock and its memory clock, MHz. The clock an SM runs at this moment needs
  // NVML, which the suite does not use.
  double sm_clock_mhz = 0.0, mem_clock_mhz = 0.0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  double peak_gbps = 0.0;  // theoretical DRAM bandwidth: 2 * memory clock * bus width / 8
  int runtime_version = 0, driver_version = 0;
};

// Theoretical DRAM bandwidth in decimal GB/s from the attributes CUDA reports:
// memory clock in kHz and bus width in bits; 2 transfers per clock (double data rate).
double theoretical_gbps(int memory_clock_khz, int bus_width_bits);

// The version of the record's fields: a reader checks it before trusting a field's meaning.
//   1  (no "schema" field) the records before issue 53
//   2  adds schema, commit, commit_dirty, sm_clock_mhz and mem_clock_mhz
constexpr int kRecordSchema = 2;

// The commit the executable was built from: git's full 40-hex HEAD at build time, "unknown" outside git;
// dirty when tracked files differed from it (build_info.cpp, cmake/GitCommit.cmake).
const char* build_commit();
bool build_commit_dirty();

// One named value of a record: the same list gives the csv and the json, so they never disagree.
struct Field {
  enum Kind { string, number, boolean } kind;
  std::string name;
  std::string value;  // as text; numbers round-trip, non-finite ones read "nan" / "inf" / "-inf"
};
Field text_field(std::string name, std::string value);
Field number_field(std::string name, double value);
Field bool_field(std::string name, bool value);

struct Report {
  std::string step, lesson;
  int element_bytes = 4;                // sizeof the element type: bytes read = n * element_bytes
  std::string element_name = "floats";  // for the text report: "n = 1000 floats"
  std::vector<Field> extra;             // a program's own fields, after the common ones
  // The timed samples of the record's comparisons (add_comparison), by name: json <name>_samples_ms.
  std::vector<std::pair<std::string, std::vector<double>>> extra_samples;
  double bytes = 0.0;  // bytes read per reduction when more than the elements (a
                       // segmented sum's offsets); 0: n * element_bytes
  DeviceInfo device;
  std::int64_t n = 0;
  Pattern pattern = Pattern::uniform;
  std::uint64_t seed = 0;
  int block = 0;           // 0 when the step chooses its own launch shape
  std::string block_rule;  // how the block is decided (BlockRule): free, fixed or chosen
  std::int64_t grid = 0;   // blocks of the step's first kernel (0: not known, e.g. chosen by a library)
  int launches = 0;        // kernels per reduction (0: not known)
  int iters = 0, warmup = 0;
  Summary ms;             // GPU time per reduction, milliseconds
  double gbps = 0.0;      // bytes read (n * element_bytes) / median time, decimal GB/s
  double pct_peak = 0.0;  // gbps / device.peak_gbps * 100
  double cpu_ms = 0.0;    // single-thread CPU sum (0: not timed)
  double speedup_vs_cpu = 0.0;
  double cpu_parallel_ms = 0.0;  // multi-core, vectorized CPU sum (0: not timed)
  int cpu_threads = 0;           // the threads it used
  double speedup_vs_cpu_parallel = 0.0;
  double result = 0.0, reference = 0.0, abs_error = 0.0, tolerance = 0.0;
  bool exact_check = false;
  bool passed = false;   // every run's result correct and the input unchanged
  int runs_correct = 0;  // of the warm-up runs plus the timed runs, every one checked
  int runs_total = 0;
  bool deterministic = false;   // the step's claim
  bool runs_identical = false;  // what this run saw: every result bitwise the same
  bool input_unchanged = false;
  bool fits_in_l2 = false;
};

// The bytes one reduction reads: r.bytes where set, else n * element_bytes.
double bytes_read(const Report& r);

// Fills gbps, pct_peak and the two CPU speedups from the other fields.
void derive_rates(Report& r);

// Elements each thread of the first kernel covers: n / (grid * block), 0 when the shape is unknown.
double elements_per_thread(const Report& r);

std::string format_text(const Report& r);
std::string csv_header();                  // the columns of every step's record
std::string csv_header(const Report& r);   // with r's extra fields
std::string format_csv(const Report& r);   // one line, columns as csv_header()
std::string format_json(const Report& r);  // one object on one line

// The JSON pieces of a record: a quoted, escaped string (control characters dropped), and a number
// with round-trip precision (null where it is not finite).
std::string json_string(const std::string& s);
std::string json_number(double v);

std::string format_count(std::int64_t n);  // "67108864 (2^26)" or "1000003"

// A value for a record's text field, exactly: integers in full, floating point to round-trip precision.
std::string exact_text(long long v);
std::string exact_text(double v);
template <typename V>
std::string exact_text(V v) {
  if constexpr (std::is_integral_v<V>)
    return exact_text(static_cast<long long>(v));
  else
    return exact_text(static_cast<double>(v));
}

}  // namespace reduce
