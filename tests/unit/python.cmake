# The Python package (python/ranklab): its Reporter against the real Collector; ranklab.torch
# watching real PyTorch DDP ranks through the CLI (below). Named torch.*: run once, by the release CTest (scripts/test),
# not under the sanitizers (python3 is not built with them).
add_executable(python_reporter_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/python_reporter_test.cpp)
target_link_libraries(python_reporter_tests PRIVATE ranklab_telemetry GTest::gtest_main)
target_compile_definitions(python_reporter_tests PRIVATE RANKLAB_PYTHON_DIR="${RANKLAB_PYTHON_DIR}")
add_dependencies(python_reporter_tests ranklab_python)
add_dependencies(ci-release-tests python_reporter_tests)
gtest_discover_tests(python_reporter_tests TEST_PREFIX "torch." PROPERTIES TIMEOUT 120)

# PyTorch jobs through the real CLI (ranklab watch, a job's [launch] command), DDP gloo ranks
# of resources/pytorch/train_fashion_mnist.py read back from the store.
add_executable(cli_watch_test ${CMAKE_CURRENT_SOURCE_DIR}/integration/cli_watch_test.cpp)
target_link_libraries(cli_watch_test PRIVATE ranklab_storage GTest::gtest_main)
target_compile_definitions(cli_watch_test PRIVATE RANKLAB_CLI="$<TARGET_FILE:ranklab>"
                                                  RANKLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(cli_watch_test ranklab ranklab-worker ranklab_python)
add_dependencies(ci-release-tests cli_watch_test)
# Up to 4 ranks: one at a time, never beside a GUI test's (the CLI tests' locks).
gtest_discover_tests(cli_watch_test TEST_PREFIX "torch." PROPERTIES TIMEOUT 300)
set_property(GLOBAL APPEND PROPERTY RANKLAB_CLI_RANK_TESTS cli_watch_test_TESTS)
