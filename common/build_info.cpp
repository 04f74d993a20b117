#include "report.hpp"

// REDUCE_COMMIT, REDUCE_COMMIT_DIRTY: written at each build (cmake/GitCommit.cmake); a step built alone
// with nvcc (the command in its kernel file's header) has none and names no commit.
#if __has_include("commit.inc")
#include "commit.inc"
#else
#define REDUCE_COMMIT "unknown"
#define REDUCE_COMMIT_DIRTY false
#endif

namespace reduce {

const char* build_commit() { return REDUCE_COMMIT; }
bool build_commit_dirty() { return REDUCE_COMMIT_DIRTY; }

}  // namespace reduce
