# The tool's tests (scripts/suite over the package scripts/reduce_tools; Python unittest, no GPU
# needed), included by tests/CMakeLists.txt:
#   scripts.tools          the package's unit tests (scripts/tests): run lists, records, tables, the
#                          interval, readme's blocks and --check, all-or-nothing writes, bad input
#                          (exit 2, one line), links, FIFOs, devices and damaged records (test_io.py),
#                          a closed or full stdout, fake step executables without a GPU
#   scripts.fuzz           generated bad inputs over every subcommand and every built executable's
#                          options (scripts/tests/test_fuzz.py, quick mode; REDUCE_FUZZ_CASES=2000 for
#                          the long mode): exit code, one line, no traceback, nothing changed
#   scripts.readme_blocks  scripts/suite readme --check: every generated block matches results/
#   scripts.lesson.A.B     one per neighbouring pair of steps.txt: the kernel files' diff stays within
#                          the lesson budget (skipped, with the reason, while a folder does not exist)
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "Python 3 not found: the tool's tests are not registered")
else()
  set(scripts_dir ${PROJECT_SOURCE_DIR}/scripts)
  add_test(NAME scripts.tools COMMAND ${Python3_EXECUTABLE} -B -m unittest discover -v -s tests -t .
    WORKING_DIRECTORY ${scripts_dir})
  set_tests_properties(scripts.tools PROPERTIES ENVIRONMENT REDUCE_FUZZ_CASES=0)  # the fuzz test is its own
  add_test(NAME scripts.fuzz COMMAND ${Python3_EXECUTABLE} -B -m unittest -v tests.test_fuzz
    WORKING_DIRECTORY ${scripts_dir})
  set_tests_properties(scripts.fuzz PROPERTIES ENVIRONMENT REDUCE_BIN=${PROJECT_BINARY_DIR}/bin)
  add_test(NAME scripts.readme_blocks COMMAND ${Python3_EXECUTABLE} -B suite readme --check
    WORKING_DIRECTORY ${scripts_dir})
  # Hundreds of short processes each: on a loaded 2-core machine scripts.tools takes about 4 minutes.
  set_tests_properties(scripts.tools scripts.fuzz scripts.readme_blocks PROPERTIES LABELS cpu TIMEOUT 900)

  # The neighbouring pairs of steps.txt (REDUCE_STEPS) but the library step's, which has no budget
  # (scripts/reduce_tools/lesson.py: checked_pairs); configure runs no Python.
  list(LENGTH REDUCE_STEPS step_count)
  math(EXPR last_pair "${step_count} - 3")
  foreach(i RANGE 0 ${last_pair})
    math(EXPR j "${i} + 1")
    list(GET REDUCE_STEPS ${i} a)
    list(GET REDUCE_STEPS ${j} b)
    add_test(NAME scripts.lesson.${a}.${b} COMMAND ${Python3_EXECUTABLE} -B suite lesson ${a} ${b} --check
      WORKING_DIRECTORY ${scripts_dir})
    set_tests_properties(scripts.lesson.${a}.${b} PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
