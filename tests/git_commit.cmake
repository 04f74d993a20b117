# cmake/GitCommit.cmake, the commit every record names: the full 40-hex HEAD in a git checkout, and
# "unknown" in a folder outside git. Run as cmake -DSOURCE_DIR=... -DWORK=... -P git_commit.cmake.
set(dir ${WORK}/git_commit_test)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir}/not_git)
# Git must not find a repository above the test's folder (a build folder inside the checkout).
set(ENV{GIT_CEILING_DIRECTORIES} ${dir})
function(commit_of source out)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${source} -DOUT=${dir}/commit.inc
    -P ${SOURCE_DIR}/cmake/GitCommit.cmake
    RESULT_VARIABLE rc)
  file(READ ${dir}/commit.inc text)
  file(REMOVE ${dir}/commit.inc)
  if(NOT rc EQUAL 0 OR NOT text MATCHES "#define REDUCE_COMMIT \"([^\"]*)\"")
    message(FATAL_ERROR "GitCommit.cmake wrote no commit for ${source} (exit ${rc}): ${text}")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

commit_of(${dir}/not_git outside)
if(NOT outside STREQUAL "unknown")
  message(FATAL_ERROR "outside git: '${outside}', not 'unknown'")
endif()
unset(ENV{GIT_CEILING_DIRECTORIES})
# In the source tree: what git itself says HEAD is, in full (or "unknown" where git cannot say: no git,
# not a checkout, a checkout git refuses as another user's).
find_package(Git QUIET)
set(expected unknown)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --verify HEAD
    OUTPUT_VARIABLE head RESULT_VARIABLE head_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(head_rc EQUAL 0)
    set(expected ${head})
    string(LENGTH "${head}" length)
    if(NOT length EQUAL 40)
      message(FATAL_ERROR "git rev-parse HEAD gave '${head}', not 40 hex digits")
    endif()
  endif()
endif()
commit_of(${SOURCE_DIR} inside)
if(NOT inside STREQUAL expected)
  message(FATAL_ERROR "in the source tree: '${inside}', not '${expected}'")
endif()
message(STATUS "commit ${inside}; outside git: unknown")
file(REMOVE_RECURSE ${dir})
