// main() of every step executable, compiled once per step with STEP_NO set to its number (07): the
// step's own .cu file defines the record stepNN::kStep (the one-line build in its header, or CMake).
#include "harness.cuh"

#define REDUCE_CONCAT(a, b) a##b
#define REDUCE_STEP_NAMESPACE(no) REDUCE_CONCAT(step, no)

namespace REDUCE_STEP_NAMESPACE(STEP_NO) {
  extern const reduce::Step kStep;
}

int main(int argc, char** argv) { return reduce::run_step(REDUCE_STEP_NAMESPACE(STEP_NO)::kStep, argc, argv); }
