// The GPU side of step 16: a team of GPUs, one NCCL rank each, that reduces one array together.
//
// A process holds one member of the team (one process per GPU, under MPI) or every member (one
// process drives all GPUs). Either way each member: reduces its shard with step 10's launcher into
// slot `rank` of an N-float array on its own GPU; takes part in one ncclAllGather that fills that
// array with every rank's partial; adds the N partials in rank order with one thread. Every GPU then
// holds the same total, bit for bit, and the same one on every run: an all-gather only copies, and
// the order of the final additions is fixed. ncclAllReduce would also leave the total on every GPU,
// but the order in which it adds is NCCL's choice (ring or tree, channels, protocol, which can change
// with N, the machine and the version), so its bits are not promised to stay the same.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "device.cuh"
#include "harness.cuh"
#include "input.hpp"
#include "options.hpp"

namespace multigpu {

// A failed NCCL call. A CudaError (of no particular CUDA code), so that the harness's one exit-code
// mapping (reduce::guarded_main) reports it in one line and exits 1, as it does a CUDA error.
class NcclError : public reduce::CudaError {
 public:
  explicit NcclError(const std::string& what) : reduce::CudaError(cudaErrorUnknown, what) {}
};

[[noreturn]] void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line);

#define NCCL_CHECK(call)                                                           \
  do {                                                                             \
    const ncclResult_t nccl_check_status_ = (call);                                \
    if (nccl_check_status_ != ncclSuccess)                                         \
      ::multigpu::throw_nccl_error(nccl_check_status_, #call, __FILE__, __LINE__); \
  } while (0)

// What every member of a team (Team, ReproducibleTeam) holds for its GPU. Constructed with its device
// current (open_device makes it so), so the stream and the flusher live there.
struct RankGpu {
  RankGpu(int rank_, int ordinal, int block);
  void use() const;  // makes its device current
  int rank;
  reduce::DeviceInfo device;
  reduce::Stream stream;
  reduce::L2Flusher flusher;
  reduce::LaunchConfig cfg;  // block, device and SM count for its launches
  ncclComm_t comm = nullptr;
};

// One communicator per GPU 0 .. gpus-1 of this process (ncclCommInitAll), NVLink multicast off unless
// the environment chose (Team says why); used by Team and ReproducibleTeam (reproducible.cuh).
std::vector<ncclComm_t> local_communicators(int gpus);
// Finalizes (grouped) and destroys the communicators that are set, or aborts them during unwinding
// (peers may never join a finalize), and clears them. For the teams' destructors.
void end_communicators(const std::vector<ncclComm_t*>& comms);

// Threads per block of the kernel every shard runs (step 10's block rule's size), when --block is not given.
int shard_step_default_block();

// What one call of Team::run saw on this process's GPUs.
struct Timings {
  std::vector<double> ms;          // per timed run: the slowest local GPU, from the start to its total
  std::vector<double> collective_ms;  // per timed collective-only run (run only), the same way
  std::vector<float> results;      // per run, warm-up runs first: the first local GPU's total
  bool gpus_agree = true;          // every local GPU's totals bitwise equal to the first one's
};

class Team {
 public:
  // Both factories turn NVLink multicast (NVLS) off unless the environment already says otherwise
  // (NCCL_NVLS_ENABLE): these collectives move N floats, which multicast does not speed up, and NCCL
  // would reserve memory on every GPU for it; on shared machines it is also known to put GPUs out of
  // service. So every run and test of this step has it off, however it was started.
  // One process, every GPU: ranks 0 .. gpus-1 on devices 0 .. gpus-1 (ncclCommInitAll).
  static Team all_local(int gpus, int block);
  // One rank of a team of `ranks` processes, on `device` (ncclCommInitRank with the id rank 0 made).
  static Team one_rank(int device, int ranks, int rank, const ncclUniqueId& id, int block);

  Team(Team&&) noexcept;
  Team& operator=(Team&&) noexcept;
  ~Team();

  int ranks() const { return ranks_; }
  const reduce::DeviceInfo& first_device() const;

  // Fills this process's shards of the n-element array (pattern p, seed) on their GPUs, and returns
  // the reference sum of each, in rank order. Throws reduce::NoUsableDevice when a GPU lacks the memory.
  // With single_gpu, also keeps room on the first local GPU for the whole array (single_gpu()).
  std::vector<reduce::Reference> load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, bool single_gpu = false);

  // warmup + iters reductions of the loaded array, the iters timed ones after an L2 flush on every
  // GPU; then iters collective-only runs (all-gather and add of the partials already there).
  Timings run(int warmup, int iters);

  // Step 10 alone on the first local GPU over the whole loaded array (the baseline the speedup is
  // measured against), timed by the harness's own loop (reduce::run_slots: cold L2, events around each
  // run, every run's result kept). With one rank the shard is the whole array; otherwise the array is
  // uploaded to that GPU first (load() with single_gpu = true kept room for it).
  reduce::Runs<float> single_gpu(int warmup, int iters);

  // Step 10's launch on the first local GPU's shard in the last run(): its grid, block and kernels.
  const reduce::LaunchShape& shard_shape() const;
  int block() const { return block_; }

  // Every local shard still holds the values load() put there.
  bool input_unchanged() const;

  struct Member;

 private:
  Team(int ranks, int block);
  int ranks_ = 0;
  int block_ = 0;
  std::int64_t n_ = 0;
  reduce::Pattern pattern_{};
  std::uint64_t seed_ = 0;
  std::vector<std::unique_ptr<Member>> members_;  // this process's GPUs, in rank order
};

}  // namespace multigpu
