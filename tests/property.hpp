// Property-based tests, small: cases generated from seeds, each checked against an exact oracle; the
// first failing case is shrunk (greedily, to the smallest candidate that still fails) and reported with
// its seed, so it can be replayed. Every step beyond the progression uses this for its GPU properties.
//
//   prop::check<Layout>("segments", 200,
//       [](prop::Rng& rng) { return random_layout(rng); },        // generate a case from a seeded rng
//       [&](const Layout& c) { return run_and_compare(c); },      // "" when the case passes, else why not
//       [](const Layout& c) { return smaller_layouts(c); },       // candidates strictly smaller than c
//       [](const Layout& c) { return describe(c); });             // one line that replays the case
//
// The number of cases: the default given, or REDUCE_PROPERTY_CASES=N; REDUCE_PROPERTY_LONG=1 runs 20x
// the default (the long mode: REDUCE_PROPERTY_LONG=1 ctest -L gpu). REDUCE_PROPERTY_SEED=S starts at seed S
// (the default seed is fixed, so a run is reproducible). The counts tried go to stdout and into the
// test's XML record (RecordProperty), so a run shows what it covered.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace prop {

using Rng = std::mt19937_64;

// The value of an environment setting, `fallback` where it is unset; a value that is not an integer
// of at least `least` fails the test (a typo must not quietly run the default).
inline std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t least) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || x < least) {
    ADD_FAILURE() << name << "='" << v << "': expected an integer of at least " << least;
    return fallback;
  }
  return x;
}

// How many cases a property runs, and from which seed.
inline std::int64_t cases(std::int64_t default_cases) {
  const std::int64_t n = env_int("REDUCE_PROPERTY_CASES", -1, 1);
  if (n >= 0) return n;
  return env_int("REDUCE_PROPERTY_LONG", 0, 0) != 0 ? 20 * default_cases : default_cases;
}
inline std::uint64_t first_seed() { return static_cast<std::uint64_t>(env_int("REDUCE_PROPERTY_SEED", 1, 0)); }

// A uniform integer in [lo, hi].
inline std::int64_t uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
// One of the choices, each with the same chance.
template <typename T>
const T& pick(Rng& rng, const std::vector<T>& choices) {
  return choices[static_cast<std::size_t>(uniform(rng, 0, static_cast<std::int64_t>(choices.size()) - 1))];
}

// Shrinks a failing case: repeatedly takes the first candidate that still fails, until none does (or
// `budget` checks are spent). Returns the smallest failing case found and its reason.
template <typename Case>
std::pair<Case, std::string> shrink(Case c, std::string why, const std::function<std::string(const Case&)>& check,
                                    const std::function<std::vector<Case>(const Case&)>& smaller, int budget = 400) {
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    for (const Case& candidate : smaller(c)) {
      if (--budget < 0) break;
      std::string w = check(candidate);
      if (!w.empty()) {
        c = candidate;
        why = std::move(w);
        progress = true;
        break;
      }
    }
  }
  return {c, why};
}

// Runs the property over cases(default_cases) seeds; on the first failure shrinks it, reports the seed,
// the case as generated and the shrunk case with its reason as one test failure, and stops. Returns the
// number of cases that passed.
template <typename Case>
std::int64_t check(const std::string& name, std::int64_t default_cases, const std::function<Case(Rng&)>& generate,
                   const std::function<std::string(const Case&)>& verify,
                   const std::function<std::vector<Case>(const Case&)>& smaller,
                   const std::function<std::string(const Case&)>& show) {
  const std::int64_t total = cases(default_cases);
  const std::uint64_t seed0 = first_seed();
  std::int64_t passed = 0;
  for (std::int64_t k = 0; k < total; ++k) {
    const std::uint64_t seed = seed0 + static_cast<std::uint64_t>(k);
    Rng rng(seed);
    const Case c = generate(rng);
    std::string why = verify(c);
    if (!why.empty()) {
      auto [small, small_why] = shrink<Case>(c, why, verify, smaller);
      ADD_FAILURE() << "property " << name << " failed at seed " << seed << " (REDUCE_PROPERTY_SEED=" << seed
                    << " REDUCE_PROPERTY_CASES=1 replays it) after " << passed << " passing cases\n"
                    << "  case:   " << show(c) << "\n  why:    " << why << "\n  shrunk: " << show(small)
                    << "\n  why:    " << small_why;
      break;
    }
    ++passed;
  }
  std::printf("[ property ] %s: %lld of %lld cases passed (seeds %llu..%llu)\n", name.c_str(),
              static_cast<long long>(passed), static_cast<long long>(total), static_cast<unsigned long long>(seed0),
              static_cast<unsigned long long>(seed0 + (total > 0 ? total - 1 : 0)));
  ::testing::Test::RecordProperty(name + "_cases", std::to_string(total));
  ::testing::Test::RecordProperty(name + "_passed", std::to_string(passed));
  return passed;
}

// Smaller candidates of a vector, for shrink functions: the first half, the second half, then the
// vector without element i (for up to `singles` positions, spread over it).
template <typename T>
std::vector<std::vector<T>> smaller_vectors(const std::vector<T>& v, std::size_t singles = 16) {
  std::vector<std::vector<T>> out;
  if (v.size() <= 1) return out;
  const std::size_t h = v.size() / 2;
  out.emplace_back(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h));
  out.emplace_back(v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  const std::size_t step = std::max<std::size_t>(1, v.size() / singles);
  for (std::size_t i = 0; i < v.size(); i += step) {
    std::vector<T> w(v);
    w.erase(w.begin() + static_cast<std::ptrdiff_t>(i));
    out.push_back(std::move(w));
  }
  return out;
}

// Smaller sizes than n, for shrink functions over a size: n / 2, then n less a quarter, an eighth, ...
// down to n - 1. A failure that needs a size above some bound then shrinks to that bound in about
// log2(n)^2 / 2 checks rather than n (a cut is taken only where the case still fails).
inline std::vector<std::int64_t> smaller_sizes(std::int64_t n) {
  std::vector<std::int64_t> out;
  if (n <= 0) return out;
  out.push_back(n / 2);
  for (std::int64_t cut = n / 4; cut > 1; cut /= 2) out.push_back(n - cut);
  if (n > 2) out.push_back(n - 1);
  return out;
}

// Smaller windows of a generated input (elements first .. first + n - 1 of a counter-based pattern,
// which fill_input_at regenerates for any window): the shorter prefixes of smaller_sizes(n), the
// second half, and the window without its first element.
struct Window {
  std::int64_t first, n;
};
inline std::vector<Window> smaller_windows(std::int64_t first, std::int64_t n) {
  std::vector<Window> out;
  for (std::int64_t m : smaller_sizes(n)) out.push_back({first, m});
  if (n > 1) out.push_back({first + n / 2, n - n / 2});
  if (n > 0) out.push_back({first + 1, n - 1});
  return out;
}

// A shrink function's candidates: add(change) appends a copy of the case that change(Case&) modifies.
template <typename Case>
class Candidates {
 public:
  explicit Candidates(const Case& c) : c_(c) {}
  template <typename F>
  void add(F&& change) {
    Case d = c_;
    change(d);
    out_.push_back(std::move(d));
  }
  std::vector<Case> take() { return std::move(out_); }

 private:
  const Case& c_;
  std::vector<Case> out_;
};

}  // namespace prop
