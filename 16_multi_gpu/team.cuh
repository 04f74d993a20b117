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
#include <utility>
#include <vector>

#include "device.cuh"
#include "harness.cuh"
#include "input.hpp"
#include "options.hpp"

namespace step16 {

// A failed NCCL call. A CudaError (of no particular CUDA code), so that the harness's one exit-code
// mapping (reduce::guarded_main) reports it in one line and exits 1, as it does a CUDA error.
class NcclError : public reduce::CudaError {
 public:
  explicit NcclError(const std::string& what) : reduce::CudaError(cudaErrorUnknown, what) {}
};

[[noreturn]] void throw_nccl_error(ncclResult_t code, const char* call, const char* file, int line);

#define NCCL_CHECK(call)                                                                                              \
  do {                                                                                                                \
    const ncclResult_t nccl_check_status_ = (call);                                                                   \
    if (nccl_check_status_ != ncclSuccess) ::step16::throw_nccl_error(nccl_check_status_, #call, __FILE__, __LINE__); \
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
  reduce::DeviceBuffer<int> barrier;  // the one int of the start line's all-reduce (rounds.cuh)
  reduce::Event start, stop;          // a timed run's on this lane (rounds.cuh)
};

// Every run's total as one process saw them.
struct Totals {
  std::vector<float> results;  // per run, warm-up runs first: the first local GPU's (rank's) total
  bool agree = true;           // every local GPU (rank) held the first one's bits, every run
  bool identical = true;       // every run had run 0's bits
};
// The totals of `runs` runs from each GPU's slots (a device buffer of `runs` floats on that GPU), the
// first one's shown.
Totals read_totals(const std::vector<std::pair<const RankGpu*, const float*>>& slots, int runs);

// One communicator per GPU 0 .. gpus-1 of this process (ncclCommInitAll), NVLink multicast off unless
// the environment chose (Team says why); used by Team and ReproducibleTeam (reproducible.cuh).
std::vector<ncclComm_t> local_communicators(int gpus);
// Finalizes (grouped) and destroys the communicators that are set, or aborts them during unwinding
// (peers may never join a finalize), and clears them. For the teams' destructors.
void end_communicators(const std::vector<ncclComm_t*>& comms);

// The kernel every shard runs (step 10's record), and its block rule's size (when --block is not given).
const reduce::Step& shard_step();
int shard_step_default_block();

// What one call of Team::run saw on this process's GPUs.
struct Timings {
  std::vector<double> ms;             // per timed run (rounds.cuh's timing)
  std::vector<double> collective_ms;  // per timed run of the all-gather alone, in the same rounds
  std::vector<float> results;         // per run, warm-up runs first: the first local GPU's total
  bool gpus_agree = true;             // every local GPU's totals bitwise equal to the first one's
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

  RankGpu& first();               // this process's first GPU (rank 0's in one process)
  std::vector<RankGpu*> lanes();  // this process's GPUs, in rank order: the streams its runs use

  // Fills this process's shards of the n-element array (pattern p, seed) on their GPUs, and returns
  // the reference sum of each, in rank order. Throws reduce::NoUsableDevice when a GPU lacks the memory.
  // With whole_too, also puts the whole array on the first local GPU (whole()).
  std::vector<reduce::Reference> load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, bool whole_too = false);
  // The whole array on the first local GPU: its shard where there is one rank, else load(whole_too)'s copy.
  const float* whole() const;

  void prepare(int runs);  // one NaN-filled slot per run on every local GPU
  // One run, enqueued on every local GPU's stream, nothing timed (rounds.cuh times it): step 10 on the
  // shard, the all-gather of the partials, the add in rank order into slot `run`.
  void enqueue(int run);
  void enqueue_collective();  // the all-gather of one float per rank alone: NCCL's bare collective
  Totals totals() const;      // the prepared runs' totals

  // prepare, then warmup + iters runs and as many of the collective alone, in interleaved rounds (for
  // the tests; the program times through rounds.cuh's Lineup).
  Timings run(int warmup, int iters);

  // A run's launch shape, for the record: every GPU's blocks (so that per_thread reads right), step 10's
  // kernels and the add in rank order (NCCL's not counted). Step 10's launch on the first local shard
  // is read by prepare from a capture of one call.
  reduce::LaunchShape run_shape() const;
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
  int runs_ = 0;
  reduce::LaunchShape shard_shape_;               // step 10's launch on the first local shard (prepare)
  std::vector<std::unique_ptr<Member>> members_;  // this process's GPUs, in rank order
};

}  // namespace step16
