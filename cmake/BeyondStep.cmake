# add_beyond_step(<name>
#     MAIN <source>              the executable's main(): one reduce::Bench record and run_bench()
#     [KERNEL <sources>...]      -> <name>_kernel, a static library (kernels and their launchers)
#     [HOST <sources>...]        -> <name>_host, a CPU-only static library (the CPU tests link it alone)
#     [LIBS <targets>...]        what the libraries and the executable link besides reduce_common
#     [GPU_TESTS <sources>...]   one GoogleTest binary; every test skips with the reason without a GPU
#     [CPU_TESTS <sources>...]   one GoogleTest binary that runs everywhere
#     [TEST_DEFINITIONS <defs>...])
#
# Builds one step beyond the progression the way add_reduction_step() builds a progression step, and
# reads the step's runs from plain files in its folder, one run per line ("#" starts a comment):
#   smoke.args     NAME | ARGUMENTS                  CTest smoke runs (77 counts as skipped)
#   cli.args       NAME | CODE | TEXT | ARGUMENTS    the command line's contract, checked without a
#                                                    GPU: exit CODE, and TEXT in the one-line message
#                                                    (in stdout for CODE 0)
#   sanitize.args  TOOLS | ARGUMENTS                 scripts/check_gpu.sh's compute-sanitizer runs
#   measure.args   NAME | ARGUMENTS                  scripts/measure's runs for the committed tables
# In ARGUMENTS, @DIR@ stands for the step's folder. A GPU test whose name contains "Huge" (n > 2^31:
# about 9 GB of device and host memory) runs alone.

# reduce_add_usage_tests(PREFIX EXE CASE...): one test PREFIX.<name> per CASE,
# "name|expected exit code|text the message must contain|arguments separated by spaces".
function(reduce_add_usage_tests prefix exe)
  foreach(case IN LISTS ARGN)
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 code)
    list(GET parts 2 expect_text)
    list(GET parts 3 args)
    string(STRIP "${args}" args)
    string(REGEX REPLACE " +" "," args "${args}")
    add_test(NAME ${prefix}.${name}
      COMMAND ${CMAKE_COMMAND} -DEXE=${exe} -DARGS=${args} -DCODE=${code} -DTEXT=${expect_text}
              -P ${PROJECT_SOURCE_DIR}/tests/expect_exit.cmake)
    set_tests_properties(${prefix}.${name} PROPERTIES LABELS cpu)
  endforeach()
endfunction()

# reduce_read_runs(<file> <out_var>): the non-comment lines of a runs file, each as
# "field|field|...", trimmed.
function(reduce_read_runs file out_var)
  set(runs)
  if(EXISTS ${file})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(STRINGS ${file} lines)
    foreach(line IN LISTS lines)
      string(STRIP "${line}" line)
      if(line STREQUAL "" OR line MATCHES "^#")
        continue()
      endif()
      string(REGEX REPLACE " *\\| *" "|" line "${line}")
      string(REPLACE "@DIR@" "${CMAKE_CURRENT_SOURCE_DIR}" line "${line}")
      list(APPEND runs "${line}")
    endforeach()
  endif()
  set(${out_var} "${runs}" PARENT_SCOPE)
endfunction()

function(add_beyond_step name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MAIN" "KERNEL;HOST;LIBS;GPU_TESTS;CPU_TESTS;TEST_DEFINITIONS")
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  set(libs reduce_common ${arg_LIBS})
  if(arg_HOST)
    add_library(${name}_host STATIC ${arg_HOST})
    target_include_directories(${name}_host PUBLIC ${dir})
    target_link_libraries(${name}_host PUBLIC reduce_common)
    list(APPEND libs ${name}_host)
  endif()
  if(arg_KERNEL)
    add_library(${name}_kernel STATIC ${arg_KERNEL})
    target_include_directories(${name}_kernel PUBLIC ${dir})
    target_link_libraries(${name}_kernel PUBLIC ${libs})
    set(libs ${name}_kernel)
  endif()

  add_executable(${name} ${arg_MAIN})
  target_include_directories(${name} PRIVATE ${dir})
  target_link_libraries(${name} PRIVATE ${libs})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

  reduce_read_runs(${dir}/smoke.args smoke_runs)
  foreach(run IN LISTS smoke_runs)
    string(REPLACE "|" ";" parts "${run}")
    list(GET parts 0 label)
    list(GET parts 1 args)
    separate_arguments(args UNIX_COMMAND "${args}")
    reduce_add_smoke_test(smoke.${name}.${label} COMMAND ${name} ${args})
  endforeach()
  reduce_read_runs(${dir}/cli.args cli_runs)
  set(cases)
  foreach(run IN LISTS cli_runs)
    list(APPEND cases "${run}")
  endforeach()
  if(cases)
    reduce_add_usage_tests(cli.${name} $<TARGET_FILE:${name}> ${cases})
  endif()

  if(NOT REDUCE_BUILD_TESTS)
    return()
  endif()
  if(arg_CPU_TESTS)
    add_executable(${name}_cpu_tests ${arg_CPU_TESTS})
    target_include_directories(${name}_cpu_tests PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(${name}_cpu_tests PRIVATE ${libs} GTest::gtest_main)
    target_compile_definitions(${name}_cpu_tests PRIVATE STEP_DIR="${dir}" ${arg_TEST_DEFINITIONS})
    reduce_add_gtests(${name}_cpu_tests cpu)
  endif()
  if(arg_GPU_TESTS)
    add_executable(${name}_gpu_tests ${arg_GPU_TESTS})
    target_include_directories(${name}_gpu_tests PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(${name}_gpu_tests PRIVATE ${libs} GTest::gtest_main)
    target_compile_definitions(${name}_gpu_tests PRIVATE STEP_DIR="${dir}" ${arg_TEST_DEFINITIONS})
    reduce_add_gtests(${name}_gpu_tests gpu)
  endif()
endfunction()

# reduce_add_gtests(<target> cpu|gpu): registers a GoogleTest binary's tests with CTest, prefixed
# "cpu." or "gpu."; GPU tests named *Huge* run alone (they need about 9 GB of device memory).
function(reduce_add_gtests target kind)
  if(COMMAND reduce_add_gpu_tests AND kind STREQUAL "gpu")
    reduce_add_gpu_tests(${target})  # tests/ decides how GPU tests are registered (with or without a GPU)
    return()
  endif()
  if(kind STREQUAL "gpu")
    gtest_discover_tests(${target} TEST_PREFIX "gpu." TEST_FILTER "-*Huge*"
      PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60)
    gtest_discover_tests(${target} TEST_PREFIX "gpu." TEST_FILTER "*Huge*"
      PROPERTIES LABELS "gpu;huge" RUN_SERIAL TRUE TIMEOUT 900 DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${target} TEST_PREFIX "cpu." PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
