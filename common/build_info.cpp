#include "report.hpp"

#include "commit.inc"  // REDUCE_COMMIT, REDUCE_COMMIT_DIRTY: written at each build (cmake/GitCommit.cmake)

namespace reduce {

const char* build_commit() { return REDUCE_COMMIT; }
bool build_commit_dirty() { return REDUCE_COMMIT_DIRTY; }

}  // namespace reduce
