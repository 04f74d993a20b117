// The harness's entry point: everything a step executable does besides its kernel.
#pragma once

#include "step.cuh"

namespace reduce {

// Parses the options, generates the input, computes the CPU reference and baseline, runs the step
// (warm-up runs, then timed runs with the L2 flushed before each; every run's result is checked),
// prints the report and returns the exit code: 0 correct, 1 wrong result or CUDA error, 2 bad usage,
// 77 no usable GPU.
int run_step(const Step& step, int argc, char** argv);

}  // namespace reduce
