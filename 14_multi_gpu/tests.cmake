# Step 14's tests, included by tests/CMakeLists.txt once GoogleTest is found. Nothing here when step
# 14 was not built (no NCCL).
if(NOT TARGET 14_multi_gpu)
  return()
endif()
set(step14_dir ${PROJECT_SOURCE_DIR}/14_multi_gpu)

# CPU: shard arithmetic for every n and team size, options, the record.
add_executable(multi_gpu_cpu_tests ${step14_dir}/test_plan.cpp)
target_link_libraries(multi_gpu_cpu_tests PRIVATE 14_multi_gpu_plan GTest::gtest_main)
gtest_discover_tests(multi_gpu_cpu_tests TEST_PREFIX "cpu." PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)

# GPU: N = 1, 2, 4 over awkward sizes, exact int checks, determinism; skipped with the reason when
# the machine has fewer GPUs than a test needs (or none).
add_executable(multi_gpu_tests ${step14_dir}/test_team.cpp)
target_link_libraries(multi_gpu_tests PRIVATE 14_multi_gpu_team GTest::gtest_main)
gtest_discover_tests(multi_gpu_tests TEST_PREFIX "gpu." PROPERTIES LABELS "gpu;multi_gpu" RUN_SERIAL TRUE ENVIRONMENT NCCL_NVLS_ENABLE=0
  DISCOVERY_TIMEOUT 60)

# The command line: bad usage is one line and exit 2 before any GPU is touched; --help exits 0.
reduce_add_usage_tests(cli.14_multi_gpu $<TARGET_FILE:14_multi_gpu>
  "gpus_zero|2|--gpus|--gpus 0"
  "gpus_not_a_number|2|--gpus|--gpus two"
  "sweep_malformed|2|--sweep|--sweep 16"
  "sweep_and_n|2|--sweep|--sweep 16:20 --n 1000"
  "format_csv|2|--format|--format csv"
  "device_not_for_this_step|2|--device|--device 1"
  "unknown_option|2|--frobnicate|--frobnicate"
  "help|0|--gpus|--help")

# Smoke runs of the executable: one GPU, then every GPU at sizes that do not divide evenly.
foreach(n IN ITEMS 1 1000 1000003)
  add_test(NAME smoke.14_multi_gpu.gpus1.n${n}
    COMMAND 14_multi_gpu --gpus 1 --n ${n} --iters 3 --warmup 1 --pattern int)
  add_test(NAME smoke.14_multi_gpu.all.n${n}
    COMMAND 14_multi_gpu --n ${n} --iters 3 --warmup 1 --pattern int --single-gpu)
  set_tests_properties(smoke.14_multi_gpu.gpus1.n${n} smoke.14_multi_gpu.all.n${n}
    PROPERTIES SKIP_RETURN_CODE 77 LABELS "smoke;gpu;multi_gpu" RUN_SERIAL TRUE
    ENVIRONMENT NCCL_NVLS_ENABLE=0)
endforeach()

# One process per GPU under mpirun, where MPI was found: 2 ranks (77, skipped, with fewer GPUs).
if(TARGET 14_multi_gpu_mpi)
  foreach(n IN ITEMS 1 1000003)
    add_test(NAME mpi.14_multi_gpu.np2.n${n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:14_multi_gpu_mpi>
              ${MPIEXEC_POSTFLAGS} --n ${n} --iters 3 --warmup 1 --pattern int --single-gpu)
    # Open MPI refuses to start as root (containers) unless told; NVLink multicast stays off.
    set_tests_properties(mpi.14_multi_gpu.np2.n${n} PROPERTIES SKIP_RETURN_CODE 77 LABELS "gpu;multi_gpu;mpi"
      RUN_SERIAL TRUE TIMEOUT 300
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;NCCL_NVLS_ENABLE=0")
  endforeach()
endif()

# tables.py on made-up records: the tables, the crossover rule, the README block.
if(Python3_Interpreter_FOUND)
  add_test(NAME scripts.14_multi_gpu.tables COMMAND ${Python3_EXECUTABLE} -B -m unittest -v test_tables
    WORKING_DIRECTORY ${step14_dir})
  set_tests_properties(scripts.14_multi_gpu.tables PROPERTIES LABELS cpu TIMEOUT 120)
endif()
