# reduce_find_newest_cccl(<prefix>): looks for a CCCL of 3.5 or newer, only where the user points at
# one (-DCCCL_DIR, CMAKE_PREFIX_PATH, or those in the environment): the toolkit's own CCCL (3.0) lacks
# what the steps compare with (gpu_to_gpu sums, the fixed-size segmented sum), and a search of the
# default paths would find that one. Sets in the caller's scope:
#   <prefix>_FOUND     TRUE when one was found
#   <prefix>_INCLUDE   its include folder when it is pip's nvidia-cuda-cccl layout, else empty
#   <prefix>_VERSION   "3.<minor>"
#   <prefix>_REASON    why none is used (one line), when not found
# A target that must see it (one translation unit only: two CUB versions must never meet in a file):
#   if(<prefix>_INCLUDE) target_include_directories(<t> PRIVATE ${<prefix>_INCLUDE})
#   else() target_link_libraries(<t> PRIVATE CCCL::CUB) endif()
# The include path goes before nvcc's own, so that file sees the newer CCCL and nothing else does.
function(reduce_find_newest_cccl prefix)
  set(found FALSE)
  set(include "")
  set(version "")
  set(reason "")
  if(DEFINED CCCL_DIR OR CMAKE_PREFIX_PATH OR DEFINED ENV{CMAKE_PREFIX_PATH} OR DEFINED ENV{CCCL_DIR})
    if(NOT DEFINED CCCL_DIR AND DEFINED ENV{CCCL_DIR})
      set(CCCL_DIR $ENV{CCCL_DIR})
    endif()
    # pip's nvidia-cuda-cccl puts its headers in .../cu13/include/cccl, beside cccl/lib/cmake, where its
    # own config files do not look (they stop configure with an error even when QUIET): use them directly.
    get_filename_component(pip_include "${CCCL_DIR}/../../../../include/cccl" ABSOLUTE)
    if(DEFINED CCCL_DIR AND EXISTS "${pip_include}/cub/version.cuh"
       AND NOT EXISTS "${CCCL_DIR}/../../../include/cub/version.cuh"
       AND NOT EXISTS "${CCCL_DIR}/../../../include/cccl/cub/version.cuh")
      file(STRINGS "${pip_include}/cub/version.cuh" cub_line REGEX "^#define CUB_VERSION [0-9]+")
      string(REGEX MATCH "[0-9]+" cub_number "${cub_line}")
      if(cub_number GREATER_EQUAL 300500)
        set(found TRUE)
        set(include "${pip_include}")
        math(EXPR minor "(${cub_number} / 100) % 1000")
        set(version "3.${minor}")
      else()
        set(reason "the CCCL at ${pip_include} is older than 3.5 (CUB_VERSION ${cub_number})")
      endif()
    else()
      find_package(CCCL 3.5 CONFIG QUIET COMPONENTS CUB libcudacxx)
      if(CCCL_FOUND)
        set(found TRUE)
        set(version "${CCCL_VERSION}")
      else()
        set(reason "no CCCL 3.5 or newer at CCCL_DIR / CMAKE_PREFIX_PATH (found: ${CCCL_CONSIDERED_VERSIONS})")
      endif()
    endif()
  else()
    set(reason "no CCCL 3.5 given (pass -DCCCL_DIR=.../cccl/lib/cmake/cccl, e.g. from pip's nvidia-cuda-cccl)")
  endif()
  set(${prefix}_FOUND ${found} PARENT_SCOPE)
  set(${prefix}_INCLUDE "${include}" PARENT_SCOPE)
  set(${prefix}_VERSION "${version}" PARENT_SCOPE)
  set(${prefix}_REASON "${reason}" PARENT_SCOPE)
endfunction()

# reduce_add_newest_cub_library(<target> <source> <absent_source> <label> <what>): the static library a
# step compares through. Built from <source> against the newest CCCL (its include path on that file
# only) when reduce_find_newest_cccl finds one; else from <absent_source>, compiled with
# NEWEST_CUB_ABSENT="<the reason>" for the step to print, and configure says why in one line.
# <label> starts the configure line, <what> names what is compared with.
function(reduce_add_newest_cub_library target source absent_source label what)
  reduce_find_newest_cccl(newest)
  if(newest_FOUND)
    add_library(${target} STATIC ${source})
    if(newest_INCLUDE)
      target_include_directories(${target} PRIVATE ${newest_INCLUDE})
    else()
      target_link_libraries(${target} PRIVATE CCCL::CUB)
    endif()
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})  # cmake/newest_cub.hpp, beside this file
    message(STATUS "${label}: comparing with ${what} from CCCL ${newest_VERSION}")
  else()
    message(STATUS "${label}: no comparison with ${what}: ${newest_REASON}")
    add_library(${target} STATIC ${absent_source})
    target_compile_definitions(${target} PRIVATE "NEWEST_CUB_ABSENT=\"${what} not built: ${newest_REASON}\"")
  endif()
  target_link_libraries(${target} PUBLIC CUDA::cudart)
endfunction()
