# Step 12's tests, included by tests/CMakeLists.txt after GoogleTest is found.
# GPU: every type x operator over the size matrix, special patterns, determinism; skipped with the
# reason where no CUDA device is present. The n > 2^31 test needs about 9 GB of device and 9 GB of
# host memory, so it runs alone.
add_executable(gpu_tests_12_types_ops ${CMAKE_CURRENT_LIST_DIR}/test_types_ops.cu)
target_include_directories(gpu_tests_12_types_ops PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(gpu_tests_12_types_ops PRIVATE 12_types_ops_kernel GTest::gtest_main)
gtest_discover_tests(gpu_tests_12_types_ops TEST_PREFIX "gpu." TEST_FILTER "-*Huge*"
  PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60)
gtest_discover_tests(gpu_tests_12_types_ops TEST_PREFIX "gpu." TEST_FILTER "*Huge*"
  PROPERTIES LABELS "gpu;huge" RUN_SERIAL TRUE TIMEOUT 900 DISCOVERY_TIMEOUT 60)

# The command line: the new options refuse bad values with exit code 2 before any device is touched.
reduce_add_usage_tests(cli.12_types_ops $<TARGET_FILE:12_types_ops>
  "type_unknown|2|--type|--type half"
  "op_unknown|2|--op|--op product"
  "pattern_unknown|2|--pattern|--pattern zeros"
  "block_other|2|--block|--block 256"
  "help|0|int64|--help")
