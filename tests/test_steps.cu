// Every step over sizes x input patterns, block sizes, misaligned inputs, repeated runs and one
// input of more than 2^31 elements, compared with the CPU reference. Skipped, with the reason,
// where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "device.cuh"
#include "gpu_test_util.hpp"
#include "input.hpp"
#include "steps.hpp"  // every step's record; REDUCE_PROGRESSION: those of steps.txt

namespace reduce {
// Test names and failure messages show a step by its name, not its address.
void PrintTo(const Step* step, std::ostream* os) { *os << step->name; }
}  // namespace reduce

namespace {

using reduce::Pattern;
using reduce::Step;

const std::vector<const Step*>& all_steps() {
#define REDUCE_STEP(ns) &ns::kStep,
  static const std::vector<const Step*> steps = {REDUCE_PROGRESSION(REDUCE_STEP)};
#undef REDUCE_STEP
  return steps;
}

const Pattern kPatterns[] = {Pattern::constant, Pattern::integers, Pattern::uniform, Pattern::mixed};

reduce::LaunchConfig config(int block) {
  int sms = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return reduce::LaunchConfig{block, 0, sms};
}

// The launch the executable makes when --block is not given.
reduce::LaunchConfig config(const Step& step) { return config(step.block.size); }  // 0 where chosen inside (CUB)

// Host and device copies of one input, plus its reference.
struct Input {
  std::int64_t n;
  Pattern pattern;
  std::unique_ptr<float[]> host;
  reduce::DeviceBuffer<float> device;
  reduce::Reference ref;

  Input(std::int64_t count, Pattern p, std::int64_t device_padding = 0)
      : n(count), pattern(p), host(new float[std::max<std::int64_t>(count, 1)]), device(count + device_padding) {
    reduce::fill_input(host.get(), n, p, /*seed=*/12345);
    ref = reduce::reference_sum(host.get(), n);
  }
  void upload(std::int64_t offset = 0) {
    CUDA_CHECK(cudaMemcpy(device.get() + offset, host.get(), n * sizeof(float), cudaMemcpyHostToDevice));
    // From pageable memory, cudaMemcpy may return before the data has landed, and the steps run on a
    // non-blocking stream that does not wait for the legacy stream: wait here.
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  bool unchanged_on_device(std::int64_t offset = 0) const {
    std::vector<float> back(n);
    CUDA_CHECK(cudaMemcpy(back.data(), device.get() + offset, n * sizeof(float), cudaMemcpyDeviceToHost));
    return n == 0 || std::memcmp(back.data(), host.get(), n * sizeof(float)) == 0;
  }
};

// Runs step on input (at element offset) and expects a correct result and an untouched input.
// Without a scratch argument, the run gets fresh zero-filled scratch.
void expect_correct(const Step& step, Input& input, const reduce::LaunchConfig& cfg, std::int64_t offset = 0,
                    reduce::Scratch scratch = {}) {
  reduce::Stream stream;
  const float got = reduce::reduce_once(step, input.device.get() + offset, input.n, cfg, stream.get(), scratch);
  const reduce::Check c = reduce::check_result(got, input.ref, input.n, input.pattern);
  EXPECT_TRUE(c.passed) << step.name << " n=" << input.n << " pattern=" << reduce::to_string(input.pattern)
                        << " block=" << cfg.block << " offset=" << offset << ": got " << got << ", reference "
                        << input.ref.sum << ", |error| " << c.abs_error << (c.exact ? " (exact check)" : "")
                        << ", tolerance " << c.tolerance;
  EXPECT_TRUE(input.unchanged_on_device(offset)) << step.name << " modified its input";
}

std::string step_label(const Step& s) { return std::string("s") + s.name; }

// ---------------------------------------------------------------------------------------------
// Sizes: the identity, tiny, around warp and block sizes, primes, 2^k +- 1, beyond L2 (50 MB on an
// H100, 60 MB on an H200: 2^24 + 1 floats is 64 MB, 2^25 - 1 floats 128 MB).
const std::int64_t kSizes[] = {
    0,    1,    2,     31,    32,    33,      255,     256,     257,     1023,          1024,
    1025, 4093, 65521, 65535, 65537, 1000003, 1048575, 1048577, 9999991, (1 << 24) + 1, (1 << 25) - 1};

class StepBySize : public ::testing::TestWithParam<std::tuple<const Step*, std::int64_t>> {};

TEST_P(StepBySize, MatchesReferenceForEveryPattern) {
  SKIP_WITHOUT_GPU();
  const auto [step, n] = GetParam();
  for (Pattern p : kPatterns) {
    Input input(n, p);
    input.upload();
    expect_correct(*step, input, config(*step));
  }
}

INSTANTIATE_TEST_SUITE_P(Steps, StepBySize,
                         ::testing::Combine(::testing::ValuesIn(all_steps()), ::testing::ValuesIn(kSizes)),
                         [](const auto& info) {
                           return step_label(*std::get<0>(info.param)) + "_n" + std::to_string(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------------------------
// Every block size the options accept, on sizes that leave partial blocks and several passes.
class StepByBlock : public ::testing::TestWithParam<std::tuple<const Step*, int>> {};

TEST_P(StepByBlock, MatchesReferenceAtEveryBlockSize) {
  SKIP_WITHOUT_GPU();
  const auto [step, block] = GetParam();
  for (std::int64_t n : {1, 33, 1025, 100003, 3000017}) {
    Input input(n, Pattern::integers);
    input.upload();
    expect_correct(*step, input, config(block));
  }
}

INSTANTIATE_TEST_SUITE_P(Steps, StepByBlock,
                         ::testing::Combine(::testing::ValuesIn(all_steps()),
                                            ::testing::Values(32, 64, 128, 256, 512, 1024)),
                         [](const auto& info) {
                           return step_label(*std::get<0>(info.param)) + "_block" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------------------------
class EachStep : public ::testing::TestWithParam<const Step*> {};

// A step's block rule: where --block is free, the step's default is a value --block accepts (so the
// tests exercise it too); elsewhere --block is refused with the rule's reason.
TEST_P(EachStep, BlockRuleIsOneTheOptionsKeep) {
  const Step& step = *GetParam();
  reduce::OptionSpec spec;
  spec.block = step.block;
  if (step.block.takes_option()) {
    const std::string b = std::to_string(step.block.size);
    EXPECT_NO_THROW(reduce::parse_options(std::vector<std::string>{"--block", b}, spec)) << step.name << ": " << b;
    return;
  }
  ASSERT_STRNE(step.block.reason, "") << step.name << " refuses --block without a reason";
  try {
    reduce::parse_options(std::vector<std::string>{"--block", "256"}, spec);
    ADD_FAILURE() << step.name << " accepted --block";
  } catch (const reduce::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(step.block.reason), std::string::npos) << e.what();
  }
}

// Inputs that do not start on a 16-byte boundary (a sub-array of a larger buffer, say).
TEST_P(EachStep, HandlesMisalignedInput) {
  SKIP_WITHOUT_GPU();
  for (std::int64_t offset : {1, 2, 3}) {
    for (std::int64_t n : {1, 3, 5, 1000, 1000003}) {
      Input input(n, Pattern::integers, /*device_padding=*/offset);
      input.upload(offset);
      expect_correct(*GetParam(), input, config(*GetParam()), offset);
    }
  }
}

// 30 runs on an input large enough for every multi-block path, and the launcher's own first-call
// paths: a step that calls itself deterministic gives the same bits every time; one that does not
// (00_atomic) must still be within the tolerance every time.
TEST_P(EachStep, RepeatedRunsAreBitwiseIdenticalOrWithinTolerance) {
  SKIP_WITHOUT_GPU();
  const Step& step = *GetParam();
  Input input((1 << 23) + 5, Pattern::mixed);
  input.upload();
  reduce::Stream stream;
  const float first = reduce::reduce_once(step, input.device.get(), input.n, config(step), stream.get());
  for (int run = 1; run < 30; ++run) {
    const float again = reduce::reduce_once(step, input.device.get(), input.n, config(step), stream.get());
    if (step.deterministic) {
      ASSERT_EQ(std::memcmp(&first, &again, sizeof(float)), 0)
          << step.name << " run " << run << ": " << again << " differs from " << first;
    } else {
      const reduce::Check c = reduce::check_result(again, input.ref, input.n, input.pattern);
      ASSERT_TRUE(c.passed) << step.name << " run " << run << ": " << again << ", reference " << input.ref.sum;
    }
  }
}

// The reported scratch size is enough: it is allocated exactly, with nothing around it, so
// memcheck (in the GPU check script) would see an overrun; here the result must stay right.
TEST_P(EachStep, ScratchSizeIsEnoughAtEverySize) {
  SKIP_WITHOUT_GPU();
  const Step& step = *GetParam();
  for (int block : {32, 1024})
    for (std::int64_t n : {0, 1, 2, 32 * 32 + 1, 1 << 20, (1 << 20) * 3 + 7}) {
      Input input(n, Pattern::integers);
      input.upload();
      expect_correct(step, input, config(block));
    }
}

// The harness hands the same scratch to every launch. Here runs on different inputs and sizes share
// one scratch buffer, each result checked (steps 08-10 would read a previous run's partial sums if they left
// their slots full); a step that relies on zero-filled scratch must hand it back zero-filled.
TEST_P(EachStep, ReusesItsScratchAcrossRuns) {
  SKIP_WITHOUT_GPU();
  const Step& step = *GetParam();
  const reduce::LaunchConfig cfg = config(step);
  const std::tuple<std::int64_t, Pattern> runs[] = {
      {(1 << 22) + 3, Pattern::mixed}, {(1 << 22) + 3, Pattern::integers}, {1000, Pattern::uniform},
      {300007, Pattern::mixed},        {(1 << 22) + 3, Pattern::uniform},  {0, Pattern::integers}};
  std::size_t bytes = 0;
  for (const auto& [n, p] : runs) bytes = std::max(bytes, step.scratch_bytes(n, cfg));
  reduce::DeviceBuffer<unsigned char> scratch(bytes);
  CUDA_CHECK(cudaMemset(scratch.get(), 0, scratch.bytes()));
  for (const auto& [n, p] : runs) {
    Input input(n, p);
    input.upload();
    expect_correct(step, input, cfg, 0, reduce::Scratch{scratch.get(), scratch.bytes()});
    if (step.needs_zeroed_scratch && bytes > 0) {
      std::vector<unsigned char> back(bytes);
      CUDA_CHECK(cudaMemcpy(back.data(), scratch.get(), bytes, cudaMemcpyDeviceToHost));
      EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0; }))
          << step.name << " left its scratch non-zero after n=" << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Steps, EachStep, ::testing::ValuesIn(all_steps()),
                         [](const auto& info) { return step_label(*info.param); });

// ---------------------------------------------------------------------------------------------
// More than 2^31 elements (8.6 GB): any 32-bit index wraps and drops or repeats elements, which the
// exact check of the int pattern catches. One input, shared by all steps.
TEST(HugeInput, EveryStepSumsMoreThan2To31Elements) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + 1025;
  SKIP_WITHOUT_DEVICE_MEMORY(n * 4.0 + (1 << 30));
  Input input(n, Pattern::integers);
  ASSERT_TRUE(reduce::uses_exact_check(Pattern::integers, input.ref));
  input.upload();
  for (const Step* step : all_steps()) {
    SCOPED_TRACE(step->name);
    reduce::Stream stream;
    const float got = reduce::reduce_once(*step, input.device.get(), n, config(*step), stream.get());
    EXPECT_EQ(static_cast<double>(got), input.ref.sum) << step->name;
  }
  EXPECT_TRUE(input.unchanged_on_device());
}

}  // namespace
