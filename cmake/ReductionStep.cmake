# add_reduction_step(<name> <source>)
#
# Builds one step of the suite from its single kernel file:
#   <name>_kernel  a static library holding the kernel, its launcher and its reduce::Step record
#                  (the tests and benchmarks link every step's library);
#   <name>         the standalone executable: that library plus the harness's main().
# and registers the executable's CTest smoke runs at a few small sizes (1, then non-powers of two),
# through reduce_add_smoke_test() (GpuTests.cmake: one test each, or one group where no GPU is seen).
# Exit code 77 ("no usable CUDA device") counts as skipped.
include(${CMAKE_CURRENT_LIST_DIR}/GpuTests.cmake)
set(REDUCE_SMOKE_SIZES 1 1000 65537 1000003)

function(add_reduction_step name source)
  string(REGEX MATCH "^[0-9][0-9]" number "${name}")

  add_library(${name}_kernel STATIC ${source})
  target_link_libraries(${name}_kernel PUBLIC reduce_common)

  add_executable(${name} ${PROJECT_SOURCE_DIR}/common/step_main.cu)
  target_compile_definitions(${name} PRIVATE STEP_NO=${number})  # main() runs step<number>::kStep
  target_link_libraries(${name} PRIVATE ${name}_kernel)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

  foreach(n IN LISTS REDUCE_SMOKE_SIZES)
    reduce_add_smoke_test(smoke.${name}.n${n}
      COMMAND ${name} --n ${n} --iters 3 --warmup 1 --cpu-runs 1 --pattern int)
  endforeach()
endfunction()
