// Step 16's one way of timing, for every mode and both launchers.
//
// A contender is one thing timed: the ordinary team, a mode's team, a team's collective alone (NCCL's
// bare all-gather or all-reduce of the same size: the yardstick), or a step alone on the first GPU.
// Each of its runs (run_once):
//   1. gives the host a head start: a kernel on every GPU that waits a fixed time on the GPU's own
//      clock (it waits for nothing else, so it always ends), long enough for the host to enqueue the
//      whole run behind it; so no GPU waits for the host once the run has started;
//   2. flushes the L2 of every GPU (once per GPU, however many lanes share it);
//   3. starts every lane on one line: ranks on several GPUs leave a one-int ncclAllReduce together (in
//      one process or across processes alike), lanes on one GPU wait for its first lane's start event;
//   4. records a start event, enqueues the work, records a stop event on every lane;
//   5. waits for every lane, so that no run overlaps the next one.
// Its time is the slowest lane's stop minus its GPU's start (under MPI the caller takes the maximum
// over the processes too). run_rounds runs the contenders in interleaved rounds, the order rotated each
// round (round_order), so that the ratios of two contenders' medians compare samples taken side by
// side. No kernel waits for a flag, the host or another GPU outside NCCL: nothing here can hang.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "multi_gpu.hpp"
#include "ranks.cuh"
#include "team.cuh"

namespace step16 {

struct Contender {
  std::vector<RankGpu*> lanes;           // its streams in this process; empty where it has no part here
  bool nccl = false;                     // start line: an all-reduce over the lanes' communicators
  std::function<void(int run)> enqueue;  // one run on every lane, its totals into slot `run`
  std::vector<double> ms;                // per timed run: the slowest lane's time (0 where it has no lanes)
  std::vector<double> enqueue_ms;        // per timed run: the host's time to enqueue steps 1-4
  double head_start_ms = 0.2;            // step 1's wait, doubled past the host's enqueue time as it is seen
  int late = 0;                          // timed runs the host took longer to enqueue than the head start
  int runs = 0;                          // runs so far, warm-up and timed
};

// One run of c (steps 1-5 above); returns the slowest lane's milliseconds when timed, else 0.
double run_once(Contender& c, bool timed);

// `warmup` untimed runs of each contender, then `iters` rounds, each contender timed once a round in
// round_order's order; their times go to each contender's ms (cleared first).
void run_rounds(const std::vector<Contender*>& contenders, int warmup, int iters);

// One step alone on one GPU over an array already there (the speedups' baseline): 10_loads_in_flight,
// 14_reproducible or 15_exact, launched once a run on its GPU's stream.
class Solo {
 public:
  Solo(const reduce::Step& step, RankGpu& gpu, int block);
  void load(const float* in, std::int64_t n);  // the array's n floats on this GPU (not copied)
  void prepare(int runs);                      // one NaN-filled slot a run
  void enqueue(int run);
  Totals totals() const;
  const reduce::Step& step() const { return step_; }
  RankGpu& gpu() { return gpu_; }

 private:
  const reduce::Step& step_;
  RankGpu& gpu_;
  reduce::LaunchConfig cfg_;
  const float* in_ = nullptr;
  std::int64_t n_ = 0;
  int runs_ = 0;
  reduce::DeviceBuffer<unsigned char> scratch_;
  reduce::DeviceBuffer<float> out_;
};

// Everything one invocation times at each n, in the same rounds. Without a mode: the ordinary team, its
// collective alone, and (with --single-gpu or one GPU) step 10 alone on the first GPU. With --reproducible
// or --exact: the ordinary team, the mode's team, its collective alone and its step alone on the first
// GPU. The step alone runs on rank 0's process only. Not movable: the contenders point into it.
class Lineup {
 public:
  // root: this process holds rank 0 (one process: always). mode: the mode's team, where one is asked for.
  Lineup(Team team, std::optional<ReproducibleTeam> mode, bool single_gpu, bool root);
  Lineup(const Lineup&) = delete;
  Lineup& operator=(const Lineup&) = delete;

  // Puts n floats of pattern p on every team's GPUs (the mode's from host[0..n), the whole array) and
  // returns the ordinary team's shard references (this process's, in rank order).
  std::vector<reduce::Reference> load(std::int64_t n, reduce::Pattern p, std::uint64_t seed, const float* host);
  void time(int warmup, int iters);      // every contender: run_rounds
  std::vector<Contender*> contenders();  // every one, in one order on every process (the MPI maxima)

  Team& team() { return team_; }
  ReproducibleTeam* mode() { return mode_ ? &*mode_ : nullptr; }
  const Contender& ordinary() const { return ordinary_; }
  const Contender& timed() const { return mode_ ? mode_runs_ : ordinary_; }  // the record's own runs
  const Contender& collective() const { return collective_; }                // of the mode's team, else the ordinary's
  const Contender& alone() const { return alone_; }                          // no samples where it did not run
  const Solo* solo() const { return solo_.get(); }                           // null where it does not run
  bool input_unchanged(const float* host) const;

 private:
  Team team_;
  std::optional<ReproducibleTeam> mode_;
  Contender ordinary_, mode_runs_, collective_, alone_;
  bool with_alone_ = false;  // a step alone is one of the contenders (on rank 0's process: solo_)
  std::unique_ptr<Solo> solo_;
};

}  // namespace step16
