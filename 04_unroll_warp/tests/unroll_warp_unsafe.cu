// The racecheck demo (04's README, "The trap, and the safe form"): step 04's kernel file with each
// __syncwarp() replaced by __threadfence_block(), a fence that keeps each thread's own stores and
// loads in the order written (what `volatile` gave the classic code, Harris 2007) but makes no lane
// wait for another: the data race of the warp-synchronous tail on Volta and later. It usually gives
// the right sum; compute-sanitizer's racecheck reports the race on every run.
// Never use it: it is built as 04_unroll_warp_unsafe only to be shown wrong.
#include "step.cuh"  // the CUDA headers first: the macro below reaches only the kernel file's own calls

#define __syncwarp(...) __threadfence_block()
#include "04_unroll_warp/unroll_warp.cu"
