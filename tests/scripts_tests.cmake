# The scripts' tests (Python unittest, no GPU needed), included by tests/CMakeLists.txt:
#   scripts.suite       the shared module scripts/suite.py: steps.txt, counts, records, tables, CSV, markers
#   scripts.bad_input   every script on bad input: exit 2, 1 or 77 with one line, never a traceback,
#                       nothing written over data (fake step executables replay committed records);
#                       run_all's copy of the steps' option grammar against a built step; update_readme's
#                       --check failures and all-or-nothing writes, each block labelled from its own data
#                       file's provenance; compare's verdicts; merge_sweep; check_gpu.sh's parallel sanitizer
#   scripts.readme_blocks  update_readme --check: every generated block of every README matches results/
#   scripts.lesson.A.B  one per neighbouring pair of steps.txt: the kernel files' diff stays within the
#                       budget of changed code lines (scripts/suite.py LESSON_BUDGET); skipped, with the
#                       reason, while a folder does not exist yet
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "Python 3 not found: the scripts' tests are not registered")
else()
  set(scripts_dir ${PROJECT_SOURCE_DIR}/scripts)
  add_test(NAME scripts.suite COMMAND ${Python3_EXECUTABLE} -B -m unittest -v test_suite
    WORKING_DIRECTORY ${scripts_dir})
  add_test(NAME scripts.bad_input COMMAND ${Python3_EXECUTABLE} -B -m unittest -v test_scripts
    WORKING_DIRECTORY ${scripts_dir})
  add_test(NAME scripts.readme_blocks COMMAND ${Python3_EXECUTABLE} -B update_readme --check
    WORKING_DIRECTORY ${scripts_dir})
  set_tests_properties(scripts.suite scripts.bad_input scripts.readme_blocks PROPERTIES LABELS cpu TIMEOUT 300)
  # The figures' data (gains and spread, shares of the ceiling, current records); drawing skips without matplotlib.
  add_test(NAME scripts.figures COMMAND ${Python3_EXECUTABLE} -B -m unittest -v test_figures
    WORKING_DIRECTORY ${scripts_dir})
  set_tests_properties(scripts.figures PROPERTIES LABELS cpu TIMEOUT 300)
  # run_all checks the options after -- with a copy of the executables' grammar (suite.STEP_OPTIONS);
  # test_scripts.StepOptions compares that copy with a built step (its --help and its exit codes).
  list(GET REDUCE_STEPS 0 first_step)
  set_tests_properties(scripts.bad_input PROPERTIES ENVIRONMENT "REDUCE_STEP_EXE=$<TARGET_FILE:${first_step}>")

  # The pairs come from steps.txt through the scripts' own reader (all but the library step's pair,
  # which has no budget); configure again when steps.txt changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/steps.txt)
  execute_process(COMMAND ${Python3_EXECUTABLE} -B test_lessons.py --pairs
    WORKING_DIRECTORY ${scripts_dir}
    OUTPUT_VARIABLE lesson_pairs ERROR_VARIABLE lesson_error RESULT_VARIABLE lesson_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT lesson_rc EQUAL 0)
    message(FATAL_ERROR "scripts/test_lessons.py --pairs: ${lesson_error}")
  endif()
  string(REPLACE "\n" ";" lesson_pairs "${lesson_pairs}")
  foreach(pair IN LISTS lesson_pairs)
    string(REPLACE " " ";" pair "${pair}")
    list(GET pair 0 a)
    list(GET pair 1 b)
    add_test(NAME scripts.lesson.${a}.${b} COMMAND ${Python3_EXECUTABLE} -B test_lessons.py ${a} ${b}
      WORKING_DIRECTORY ${scripts_dir})
    set_tests_properties(scripts.lesson.${a}.${b} PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
