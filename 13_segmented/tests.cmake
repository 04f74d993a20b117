# 13_segmented's tests, included by tests/CMakeLists.txt once GoogleTest is found.
set(seg_dir ${PROJECT_SOURCE_DIR}/13_segmented)

add_executable(13_segmented_cpu_tests ${seg_dir}/tests/test_segments.cpp)
target_link_libraries(13_segmented_cpu_tests PRIVATE 13_segmented_host GTest::gtest_main)
target_compile_definitions(13_segmented_cpu_tests PRIVATE SEG_README="${seg_dir}/README.md")
gtest_discover_tests(13_segmented_cpu_tests TEST_PREFIX "cpu." PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)

# GPU tests skip, with the reason, without a CUDA device. The segment over 2^31 floats needs about
# 9 GB of device and host memory and runs alone.
add_executable(13_segmented_gpu_tests ${seg_dir}/tests/test_segmented.cu)
target_link_libraries(13_segmented_gpu_tests PRIVATE 13_segmented_kernel 13_segmented_host GTest::gtest_main)
target_include_directories(13_segmented_gpu_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # gpu_test_util.hpp
gtest_discover_tests(13_segmented_gpu_tests TEST_PREFIX "gpu." TEST_FILTER "-*Huge*"
  PROPERTIES LABELS gpu DISCOVERY_TIMEOUT 60)
gtest_discover_tests(13_segmented_gpu_tests TEST_PREFIX "gpu." TEST_FILTER "*Huge*"
  PROPERTIES LABELS "gpu;huge" RUN_SERIAL TRUE TIMEOUT 900 DISCOVERY_TIMEOUT 60)

# The command lines: bad offsets and bad usage are refused with one line and exit 2 before any device
# is touched (so these run everywhere); --help exits 0. measure.sh refuses bad usage the same way.
# A case: name|expected exit code|text the message must contain|arguments (tests/CMakeLists.txt).
reduce_add_usage_tests(cli.13_segmented $<TARGET_FILE:13_segmented>
  "offsets_not_monotone|2|not monotone|--n,100,--offsets,${seg_dir}/tests/not_monotone.txt"
  "offsets_beyond_n|2|beyond n|--n,100,--offsets,${seg_dir}/tests/beyond_n.txt"
  "offsets_negative|2|negative|--n,100,--offsets,${seg_dir}/tests/negative.txt"
  "offsets_empty_file|2|no entries|--n,100,--offsets,${seg_dir}/tests/empty.txt"
  "offsets_not_integer|2|not an integer|--n,100,--offsets,${seg_dir}/tests/not_integer.txt"
  "offsets_missing_file|2|cannot read|--offsets,${seg_dir}/tests/no_such_file.txt"
  "segments_unknown|2|--segments|--segments,zipf"
  "segments_missing_value|2|--segments|--segments"
  "block_refused|2|--block|--block,256"
  "help|0|matrix-tall|--help")
reduce_add_usage_tests(cli.13_segmented ${seg_dir}/measure.sh
  "measure_no_arguments|2|expected BUILD|"
  "measure_not_built|2|not built|${CMAKE_CURRENT_BINARY_DIR}/no_such_build,${CMAKE_CURRENT_BINARY_DIR}/out"
  "measure_bad_option|2|--frobnicate|${PROJECT_BINARY_DIR},${CMAKE_CURRENT_BINARY_DIR}/out,--frobnicate")
