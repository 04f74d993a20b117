// main() of every step executable. CMake compiles this file once per step with
// REDUCE_STEP_NAMESPACE set to that step's namespace (step01, step02, ...), whose kStep record the
// step's own .cu file defines.
#include "harness.cuh"

namespace REDUCE_STEP_NAMESPACE {
extern const reduce::Step kStep;
}

int main(int argc, char** argv) { return reduce::run_step(REDUCE_STEP_NAMESPACE::kStep, argc, argv); }
