# add_beyond_step(<name>
#     MAIN <source>              the executable's main(): one reduce::Bench record and run_bench()
#     [KERNEL <sources>...]      -> <name>_kernel, a static library (kernels and their launchers)
#     [HOST <sources>...]        -> <name>_host, a CPU-only static library (the CPU tests link it alone)
#     [LIBS <targets>...]        its own other libraries to link (the steps it uses: beyond.txt)
#     [GPU_TESTS <sources>...]   one GoogleTest binary; every test skips with the reason without a GPU
#     [CPU_TESTS <sources>...]   one GoogleTest binary that runs everywhere
#     [PY_TESTS <files>...]      Python unittest files of the step's scripts (cpu.<name>.<file stem>)
#     [TEST_DEFINITIONS <defs>...]
#     [NEEDS NCCL]               build the step only where NCCL is found (else a configure message)
#     [MPI_PROGRAM])             also <name>_mpi: MAIN compiled with REDUCE_WITH_MPI, one process per
#                                GPU under mpirun, where MPI is found (else a configure message)
#
# Builds one step beyond the progression the way add_reduction_step() builds a progression step, and
# registers the runs its run list <step>/runs.txt names (scripts/reduce_tools/runlist.py describes the
# format; cmake/RunList.cmake reads it here, without Python):
#   smoke NAME | ARGUMENTS              CTest smoke runs (77 counts as skipped);
#   smoke NAME | mpi NP | ARGUMENTS     <name>_mpi under mpirun -np NP, registered only where it is
#                                       built and configure sees NP GPUs
#   cli NAME | CODE | TEXT | ARGUMENTS  the command line's contract, checked without a GPU: exit CODE,
#                                       and TEXT in the one-line message (in stdout for CODE 0)
# Its sanitize, measure and profile lines are scripts/suite's. A GPU test whose name contains "Huge"
# (n > 2^31: about 9 GB of device and host memory) runs alone.
include(${CMAKE_CURRENT_LIST_DIR}/RunList.cmake)

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

# reduce_read_runs(<step> <out_var>): the smoke and cli lines of <step>/runs.txt (cmake/RunList.cmake),
# each as "kind|field|...|arguments"; none without the file.
function(reduce_read_runs step out_var)
  set(${out_var} "" PARENT_SCOPE)
  set(file ${PROJECT_SOURCE_DIR}/${step}/runs.txt)
  if(EXISTS ${file})
    reduce_read_run_list(${file} ${PROJECT_SOURCE_DIR}/${step} runs)
    set(${out_var} "${runs}" PARENT_SCOPE)
  endif()
endfunction()

# reduce_find_nccl(<out_var>): TRUE and an imported target reduce::nccl where NCCL (nccl.h and libnccl)
# is found: the CUDA toolkit's folders first, then the system's; -DNCCL_ROOT=... or NCCL_INCLUDE_DIR /
# NCCL_LIBRARY override.
function(reduce_find_nccl out_var)
  if(TARGET reduce::nccl)
    set(${out_var} TRUE PARENT_SCOPE)
    return()
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
  if(NCCL_INCLUDE_DIR)
    get_filename_component(nccl_prefix ${NCCL_INCLUDE_DIR} DIRECTORY)
    # The library beside the header first, so that the two come from the same installation.
    find_library(NCCL_LIBRARY nccl HINTS ${nccl_prefix} ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
      PATH_SUFFIXES lib64 lib lib/${CMAKE_LIBRARY_ARCHITECTURE})
  endif()
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    set(${out_var} FALSE PARENT_SCOPE)
    return()
  endif()
  add_library(reduce::nccl UNKNOWN IMPORTED GLOBAL)
  set_target_properties(reduce::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                                                INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR}
                                                INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
  message(STATUS "NCCL: ${NCCL_LIBRARY} (header in ${NCCL_INCLUDE_DIR})")
  set(${out_var} TRUE PARENT_SCOPE)
endfunction()

# reduce_find_mpi(<out_var>): the MPI target to link (MPI::MPI_CXX, else MPI::MPI_C: the steps call only
# MPI's C API), or empty.
function(reduce_find_mpi out_var)
  set(${out_var} "" PARENT_SCOPE)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(${out_var} MPI::MPI_CXX PARENT_SCOPE)
    return()
  endif()
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(${out_var} MPI::MPI_C PARENT_SCOPE)
  endif()
endfunction()

function(add_beyond_step name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "MPI_PROGRAM" "MAIN"
    "KERNEL;HOST;LIBS;GPU_TESTS;CPU_TESTS;PY_TESTS;TEST_DEFINITIONS;NEEDS")
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  # The steps it uses (beyond.txt's `uses`): each one's top library, which brings that step's others.
  set(libs reduce_common ${arg_LIBS})
  foreach(used IN LISTS REDUCE_USES_${name})
    list(APPEND libs ${used}_kernel)
  endforeach()
  if("NCCL" IN_LIST arg_NEEDS)
    reduce_find_nccl(nccl_found)
    if(NOT nccl_found)
      message(STATUS "${name}: NCCL not found (nccl.h and libnccl), so it is not built; set NCCL_ROOT to build it")
      return()
    endif()
    list(APPEND libs reduce::nccl)
  endif()
  if(arg_HOST)
    add_library(${name}_host STATIC ${arg_HOST})
    target_link_libraries(${name}_host PUBLIC reduce_common)
    list(APPEND libs ${name}_host)
  endif()
  if(arg_KERNEL)
    add_library(${name}_kernel STATIC ${arg_KERNEL})
    target_link_libraries(${name}_kernel PUBLIC ${libs})
    set(libs ${name}_kernel)
  endif()

  add_executable(${name} ${arg_MAIN})
  target_link_libraries(${name} PRIVATE ${libs})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

  # One process per GPU under mpirun, where MPI is found; its smoke runs only where configure sees as
  # many GPUs as they start ranks (with fewer, mpirun's own failure to place a rank, not the step's
  # exit 77, would decide the result).
  set(mpi_target "")
  if(arg_MPI_PROGRAM)
    reduce_find_mpi(mpi_target)
    if(mpi_target)
      message(STATUS "${name}: MPI found (${mpi_target}), building ${name}_mpi (one process per GPU)")
      add_executable(${name}_mpi ${arg_MAIN})
      target_compile_definitions(${name}_mpi PRIVATE REDUCE_WITH_MPI)
      target_link_libraries(${name}_mpi PRIVATE ${libs} ${mpi_target})
      set_target_properties(${name}_mpi PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
      execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE smi_rc OUTPUT_VARIABLE smi_out ERROR_QUIET)
      string(REGEX MATCHALL "GPU [0-9]+:" smi_gpus "${smi_out}")
      list(LENGTH smi_gpus visible_gpus)
    else()
      message(STATUS "${name}: MPI not found, so ${name}_mpi (one process per GPU) is not built")
    endif()
  endif()

  reduce_read_runs(${name} runs)
  set(cases)
  foreach(run IN LISTS runs)
    if(run MATCHES "^cli[|](.*)$")
      list(APPEND cases "${CMAKE_MATCH_1}")
      continue()
    endif()
    string(REGEX REPLACE "^smoke[|]" "" run "${run}")
    string(REPLACE "|" ";" parts "${run}")
    list(LENGTH parts fields)
    list(GET parts 0 label)
    list(GET parts -1 args)
    separate_arguments(args UNIX_COMMAND "${args}")
    if(fields EQUAL 2)
      reduce_add_smoke_test(smoke.${name}.${label} COMMAND ${name} ${args})
      continue()
    endif()
    list(GET parts 1 launcher)
    if(NOT launcher MATCHES "^mpi ([0-9]+)$")
      message(FATAL_ERROR "${dir}/runs.txt: '${run}': expected smoke NAME | mpi NP | ARGUMENTS")
    endif()
    set(np ${CMAKE_MATCH_1})
    if(NOT mpi_target OR visible_gpus LESS np)
      continue()
    endif()
    # Open MPI refuses to start as root (containers) unless told. One argument per variable: a quoted
    # "A=1;B=1" reaches the test as A = "1;B=1" (cmake_parse_arguments(PARSE_ARGV) keeps it one item).
    reduce_add_smoke_test(smoke.${name}_mpi.${label}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}_mpi>
              ${MPIEXEC_POSTFLAGS} ${args}
      LABELS multi_gpu mpi
      ENVIRONMENT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
      PROPERTIES RUN_SERIAL TRUE TIMEOUT 300)
  endforeach()
  if(cases)
    reduce_add_usage_tests(cli.${name} $<TARGET_FILE:${name}> ${cases})
  endif()

  if(arg_PY_TESTS)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    foreach(file IN LISTS arg_PY_TESTS)
      get_filename_component(stem ${file} NAME_WE)
      get_filename_component(folder ${dir}/${file} DIRECTORY)
      if(Python3_Interpreter_FOUND)
        # From the test's folder (<step>/tests), importing the step's scripts from the step's folder.
        add_test(NAME cpu.${name}.${stem} COMMAND ${Python3_EXECUTABLE} -B -m unittest -v ${stem}
          WORKING_DIRECTORY ${folder})
        set_tests_properties(cpu.${name}.${stem} PROPERTIES LABELS cpu TIMEOUT 120 ENVIRONMENT PYTHONPATH=${dir})
      endif()
    endforeach()
  endif()

  if(NOT REDUCE_BUILD_TESTS)
    return()
  endif()
  if(arg_CPU_TESTS)
    add_executable(${name}_cpu_tests ${arg_CPU_TESTS})
    target_link_libraries(${name}_cpu_tests PRIVATE ${libs} GTest::gtest_main)
    target_compile_definitions(${name}_cpu_tests PRIVATE STEP_DIR="${dir}" ${arg_TEST_DEFINITIONS})
    reduce_add_gtests(${name}_cpu_tests cpu)
  endif()
  if(arg_GPU_TESTS)
    add_executable(${name}_gpu_tests ${arg_GPU_TESTS})
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
