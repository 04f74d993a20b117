// Step 16's one way of timing, for every mode and both launchers.
//
// A contender is one thing timed: the ordinary team, the reproducible or exact team, a step alone on
// one GPU, or NCCL's bare all-gather. Each of its runs goes through run_once, which
//   1. holds every GPU of the contender (a one-thread kernel that waits for the host, nvbench's
//      "blocking kernel") while the host enqueues all that follows, so that how fast one host thread
//      enqueues work for several GPUs (NCCL's group calls in particular) is not timed;
//   2. flushes the L2 of every GPU (each once, however many lanes share it);
//   3. joins the lanes at one start line: real ranks leave a one-int ncclAllReduce together (in one
//      process or across processes alike); virtual ranks on one GPU wait for each other's events;
//   4. records a start event on every lane, enqueues the work, records a stop event on every lane;
//   5. releases the hold and waits for every lane: a run never overlaps the next contender's.
// The run's time is the slowest lane's stop minus its start (under MPI, the caller takes the maximum
// over the processes too). run_rounds runs the contenders in interleaved rounds, the order rotated each
// round, so that each one's median is a median of samples taken side by side with the others'.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "multi_gpu.hpp"
#include "ranks.cuh"
#include "team.cuh"

namespace multigpu {

// The host side of the hold: a word in mapped host memory that the held kernels poll.
class Hold {
 public:
  Hold();
  ~Hold();
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  void enqueue(cudaStream_t stream);  // a kernel that waits for the next release()
  void release();
  // A held kernel gave up waiting (after a few seconds: something the host did while the GPUs were held
  // waited for them). Its run's time is not to be trusted.
  bool timed_out() const;

 private:
  volatile unsigned* gate_ = nullptr;  // [0]: the last release's number, [1]: set by a kernel that gave up
  unsigned next_ = 1;
};

// A held GPU gave up waiting for the host (Hold::timed_out): the run's time is not the device's alone.
class HoldTimedOut : public reduce::CudaError {
 public:
  using reduce::CudaError::CudaError;
};

struct Contender {
  std::vector<RankGpu*> lanes;   // the streams it runs on; empty where it has no part in this process
  bool nccl = false;             // join through NCCL (real ranks); else through events (lanes of one process)
  std::function<void(int run)> enqueue;  // one run on every lane, its total into slot `run`
  std::vector<double> ms;        // per timed run: the slowest lane's time
  int runs = 0;                  // runs so far (warm-up and timed)
};

// One run of c (steps 1-5 above; hold null: no hold, and no hold either on c's first run, so that
// NCCL's lazy set-up on a collective's first call never happens while the GPUs are held). Returns the
// slowest lane's milliseconds when timed, else 0. Throws HoldTimedOut when the hold timed out.
double run_once(Contender& c, Hold* hold, bool timed);

// `warmup` untimed runs of each contender, then `iters` rounds: in round r contender round_order(...)
// (multi_gpu.hpp) at each position, each timed once; their times go to each contender's ms.
void run_rounds(const std::vector<Contender*>& contenders, Hold* hold, int warmup, int iters);

// Everything one invocation times at each n, in the same rounds: the ordinary team; NCCL's bare
// all-gather on its communicators (the yardstick); where the plan asks, step 10 alone on the first GPU
// (under MPI, rank 0's); and the reproducible and exact modes (one process only), each with its step
// alone on the first GPU. Not movable: the contenders point into it.
class Lineup {
 public:
  // One mode with the same bits for any number of ranks, and its step alone on one GPU.
  struct Mode {
    Mode(ReproducibleTeam team_, RankGpu& first);
    ReproducibleTeam team;
    Solo solo;
    Contender runs, alone;
  };

  // root: the process whose first GPU runs the steps alone (one process: this one; MPI: rank 0).
  Lineup(Team team, const Plan& plan, bool root);
  Lineup(const Lineup&) = delete;
  Lineup& operator=(const Lineup&) = delete;

  bool needs_host() const { return !modes_.empty(); }  // the modes load from the whole array in host memory
  // Puts n elements of pattern p on every team's GPUs (from host[0..n) when given: the whole array) and
  // returns the ordinary team's shard references (this process's, in rank order).
  std::vector<reduce::Reference> load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, const float* host);
  // `warmup` untimed runs of every contender, then `iters` interleaved rounds (run_rounds). Where a
  // hold times out and this process drives every rank, this size is timed again without the hold, and
  // so is every later one (the records say held: false); under MPI the run ends there.
  void time(int warmup, int iters);
  std::vector<Contender*> contenders();  // every one, in one order on every process (for the MPI maxima)

  Team& team() { return team_; }
  const Contender& ordinary() const { return ordinary_; }
  const Contender& floor() const { return floor_; }
  const Contender& step10_runs() const { return alone_; }  // step 10 alone's (no samples where it does not run)
  const Solo* step10_alone() const { return step10_.get(); }  // null where it does not run
  std::vector<std::unique_ptr<Mode>>& modes() { return modes_; }
  // The timing fields of the ordinary mode's record (mode null) or of a mode's.
  Timing timing(const Mode* mode = nullptr) const;
  // Every team's input unchanged (host: as load() had it).
  bool input_unchanged(const float* host) const;

 private:
  void rounds(int warmup, int iters);
  Team team_;
  Plan plan_;
  Hold hold_;
  Contender ordinary_, floor_, alone_;
  std::unique_ptr<Solo> step10_;
  std::vector<std::unique_ptr<Mode>> modes_;
};

}  // namespace multigpu
