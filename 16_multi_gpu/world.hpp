// The world of processes of one run of step 16: one process that drives every GPU, or, built with
// REDUCE_WITH_MPI (16_multi_gpu_mpi), every rank of MPI_COMM_WORLD, one GPU each. main.cpp includes it
// in both builds; without MPI every operation is the identity.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#ifdef REDUCE_WITH_MPI
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>
#endif

#include "harness.cuh"
#include "multi_gpu.hpp"

namespace step16 {

#ifdef REDUCE_WITH_MPI
constexpr bool kMpi = true;
constexpr const char* kProgram = "16_multi_gpu_mpi";
#else
constexpr bool kMpi = false;
constexpr const char* kProgram = "16_multi_gpu";
#endif

// What the processes of one run share. One process: it is the whole world, and every operation is
// the identity. Under MPI: every rank of MPI_COMM_WORLD.
struct World {
  int rank = 0, size = 1;
  int local_rank = 0;           // among the ranks of this machine: the GPU this rank uses
  std::string name = kProgram;  // how this process signs its messages
  bool root() const { return rank == 0; }
  const char* mode() const { return kMpi ? "mpi" : "single_process"; }

#ifdef REDUCE_WITH_MPI
  int saved_stderr = -1;

  void join() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;  // the ranks of this machine: a rank's GPU is its place among them
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    if (root()) return;
    name += " rank " + std::to_string(rank);
    // Rank 0 prints --help and the records. Every rank parses the same command line and would refuse
    // it with the same words, so the others keep quiet until it is accepted (speak()).
    if (!std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);
    std::fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (saved_stderr >= 0 && null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    if (null_fd >= 0) close(null_fd);
  }
  void speak() {
    if (saved_stderr < 0) return;
    std::fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
  }
#else
  void speak() {}
#endif

  // The largest code any process has: 0 only when every process can go on.
  int agree(int code) const {
#ifdef REDUCE_WITH_MPI
    MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
    return code;
  }
  bool all(bool ok) const { return agree(ok ? 0 : 1) == 0; }
  // Rank 0's value, on every rank.
  int from_root(int v) const {
#ifdef REDUCE_WITH_MPI
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    return v;
  }

  // Per timed run, the slowest process's time.
  void max_each(std::vector<double>& v) const {
#ifdef REDUCE_WITH_MPI
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#else
    (void)v;
#endif
  }

  // The reference of the whole array: every rank's shard references, added in rank order.
  reduce::Reference total(const std::vector<reduce::Reference>& local) const {
    std::vector<double> mine;
    for (const auto& r : local) mine.insert(mine.end(), {r.sum, r.abs_sum});
    std::vector<double> all = mine;
#ifdef REDUCE_WITH_MPI
    all.resize(mine.size() * size);  // one shard per rank under MPI
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
                  MPI_DOUBLE, MPI_COMM_WORLD);
#endif
    reduce::Reference ref;
    for (std::size_t i = 0; i < all.size(); i += 2) {
      ref.sum += all[i];
      ref.abs_sum += all[i + 1];
    }
    return ref;
  }

  // Every process's results are bitwise the same as every other's.
  bool same_everywhere(const std::vector<float>& results) const {
#ifdef REDUCE_WITH_MPI
    std::vector<unsigned> lo(results.size()), hi;
    std::memcpy(lo.data(), results.data(), results.size() * sizeof(float));
    hi = lo;
    MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
#else
    (void)results;
    return true;
#endif
  }

  // Runs body. Under MPI with several ranks, a failure here may leave the other ranks waiting inside a
  // collective for this one: this rank says why (the harness's one mapping, guarded_main, gives the
  // words and the code), then every rank ends with that code (mpirun passes it on).
  template <typename Body>
  void ends_all_on_failure(std::int64_t n, Body&& body) const {
#ifdef REDUCE_WITH_MPI
    if (size > 1) {
      try {
        body();
      } catch (...) {
        const int code = reduce::guarded_main(name.c_str(), n, []() -> int { throw; });
        MPI_Abort(MPI_COMM_WORLD, code);
      }
      return;
    }
#else
    (void)n;
#endif
    body();
  }
};

inline World world;  // set up by main() before the harness runs

// How many GPUs this machine shows; throws NoUsableDevice, in the harness's words, when none. Opens no
// device where there are some (under MPI every rank would make a context on GPU 0).
inline int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) reduce::open_device(0);  // throws, with the reason
  return count;
}

// How many GPUs the run uses, once every process knows it can run. One process: --gpus, or every
// visible GPU. Under MPI: one per rank, each rank's the local_rank-th of its machine; the ranks agree
// first, so that all leave with the same code and none waits for the others forever. The reason is
// printed once: rank 0's, or, where rank 0 could go on, each failing rank's own.
inline int team_size(const Plan& plan) {
  if (!kMpi) {
    const int visible = visible_gpus();
    const int gpus = plan.gpus ? plan.gpus : visible;
    if (gpus > visible)
      throw reduce::NoUsableDevice("needs " + std::to_string(gpus) + " GPUs, this machine shows " +
                                   std::to_string(visible));
    return gpus;
  }
  std::string why;
  try {
    const int visible = visible_gpus();
    if (world.local_rank >= visible)
      why = "needs " + std::to_string(world.local_rank + 1) +
            " GPUs (one per rank on this machine), this machine shows " + std::to_string(visible);
  } catch (const reduce::NoUsableDevice& e) {
    why = e.what();
  }
  const int code = why.empty() ? 0 : 77;
  const int agreed = world.agree(code);
  const int root_code = world.from_root(code);
  if (agreed != 0) {
    if (code != 0 && (world.root() || root_code == 0)) world.speak();
    throw reduce::NoUsableDevice(why.empty() ? "another rank has no usable GPU" : why);
  }
  return world.size;
}

}  // namespace step16
