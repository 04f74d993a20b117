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

// One GPU's part in a team (Team, ReproducibleTeam): a lane of the timing (rounds.cuh). Constructed with
// its device current (open_device makes it so), so the stream, the flusher and the buffers live there.
struct RankGpu {
  RankGpu(int rank_, int ordinal, int block);
  void use() const;  // makes its device current
  int rank;
  reduce::DeviceInfo device;
  reduce::Stream stream;
  reduce::L2Flusher flusher;
  reduce::LaunchConfig cfg;  // block, device and SM count for its launches
  ncclComm_t comm = nullptr;
  reduce::DeviceBuffer<int> barrier;  // what the start line's one-int all-reduce runs on
  reduce::Event start, stop, ready;   // a timed run's two ends on this lane; ready: its GPU held and flushed
};

// One communicator per GPU 0 .. gpus-1 of this process (ncclCommInitAll), NVLink multicast off unless
// the environment chose (Team says why); used by Team and ReproducibleTeam (ranks.cuh).
std::vector<ncclComm_t> local_communicators(int gpus);
// Finalizes (grouped) and destroys the communicators that are set, or aborts them during unwinding
// (peers may never join a finalize), and clears them. For the teams' destructors.
void end_communicators(const std::vector<ncclComm_t*>& comms);

// Threads per block of the kernel every shard runs (step 10's block rule's size), when --block is not given.
int shard_step_default_block();
const reduce::Step& shard_step();  // step 10

// Every run's total on this process's GPUs, read back after the runs.
struct Totals {
  std::vector<float> results;  // per run, warm-up runs first: the first local GPU's total
  bool agree = true;           // every local GPU (rank) held the first one's bits, every run
  bool identical = true;       // every run had run 0's bits
};
// `runs` totals from each (lane, device slots) pair, the first pair's kept, the others compared with it.
Totals read_totals(const std::vector<std::pair<const RankGpu*, const float*>>& slots, int runs);

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

  // Puts this process's shards of the n-element array on their GPUs: copied from host[0..n) when given
  // (the whole array), else generated here from pattern p and seed (under MPI a rank holds only its
  // shard). Returns the reference sum of each shard, in rank order. With whole, also keeps the whole
  // array on the first local GPU (with one rank, its shard) for the single-GPU baselines (whole()).
  // Throws reduce::NoUsableDevice when a GPU lacks the memory.
  std::vector<reduce::Reference> load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, bool whole,
                                      const float* host = nullptr);
  const float* whole() const;

  // Result slots for `runs` runs, NaN until written (a total never written fails its check).
  void prepare(int runs);
  // One reduction of the loaded array, enqueued on every local GPU's stream: step 10 on the shard, the
  // all-gather of the partials, the add in rank order into slot `run`. No synchronization, no allocation.
  void enqueue(int run);
  // NCCL's bare collective of the same size, the yardstick: the in-place all-gather of one float per rank.
  void enqueue_floor();
  Totals totals() const;

  std::vector<RankGpu*> lanes() const;  // this process's GPUs, in rank order
  RankGpu& first() const;
  // One reduction's launches, for the record: step 10's on the first local GPU's shard in run 0, its
  // grid counted on every GPU (so that per_thread reads right), one kernel more for the add (NCCL's
  // not counted).
  reduce::LaunchShape shape() const;
  int block() const { return block_; }

  // Every local shard (and the whole array, where kept) still holds the values load() put there.
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
  std::vector<std::unique_ptr<Member>> members_;  // this process's GPUs, in rank order
};

// One step alone on one GPU over the whole array: the single-GPU baselines (step 10, 14, 15), timed in
// the same rounds as the teams, on the first GPU's lane.
class Solo {
 public:
  Solo(const reduce::Step& step, RankGpu& gpu, int block);
  void load(const float* in, std::int64_t n);  // in: the whole array on gpu's device (Team::whole())
  void prepare(int runs);                      // result slots for `runs` runs, NaN until written
  void enqueue(int run);
  Totals totals() const;
  const reduce::Step& step() const { return step_; }
  RankGpu& gpu() const { return gpu_; }

 private:
  const reduce::Step& step_;
  RankGpu& gpu_;
  reduce::LaunchConfig cfg_;
  const float* in_ = nullptr;
  std::int64_t n_ = 0;
  int runs_ = 0;
  reduce::DeviceBuffer<unsigned char> scratch_;
  reduce::DeviceBuffer<float> results_;
};

}  // namespace multigpu
