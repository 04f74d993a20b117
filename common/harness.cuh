// The harness's entry point: everything a step executable does besides its kernel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <functional>
#include <vector>

#include "device.cuh"
#include "options.hpp"
#include "report.hpp"
#include "step.cuh"

namespace reduce {

// Parses the options, generates the input, computes the CPU reference and baseline, runs the step
// (warm-up runs, then timed runs with the L2 flushed before each; every run's result is checked),
// prints the report and returns the exit code: 0 correct, 1 wrong result or CUDA error, 2 bad usage,
// 77 no usable GPU.
int run_step(const Step& step, int argc, char** argv);

// The pieces run_step is made of, for programs with their own main (the steps beyond a float sum).

// Calls launch(r) for r = 0 .. warmup-1 untimed, then for r = warmup .. warmup+iters-1 each after an
// L2 flush and between two events on stream; returns the timed runs' milliseconds, in order.
std::vector<double> time_runs(int warmup, int iters, L2Flusher& flusher, cudaStream_t stream,
                              const std::function<void(int)>& launch);

// Throws NoUsableDevice (exit 77) when the device has fewer than `needed` bytes free.
void ensure_device_memory(std::size_t needed);

// The report in the chosen format on stdout (csv: header line, then the record).
void print_report(const Report& r, Format format);

// Runs body and returns its exit code, or maps what it throws to the suite's exit codes with a
// one-line message on stderr: UsageError 2, NoUsableDevice 77, CudaError 1 (77 when the GPU cannot run
// this build), std::bad_alloc 77 (n names the --n that asked too much host memory).
int guarded_main(const char* program, const std::int64_t& n, const std::function<int()>& body);

}  // namespace reduce
