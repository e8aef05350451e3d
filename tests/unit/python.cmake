# The Python package (python/ranklab): its Reporter against the real Collector, and ranklab.torch
# watching real PyTorch DDP ranks. Named torch.*: run once, by the release CTest (scripts/test),
# not under the sanitizers (python3 is not built with them).
foreach(name python_reporter python_watch)
  add_executable(${name}_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/${name}_test.cpp)
  target_link_libraries(${name}_tests PRIVATE ranklab_telemetry GTest::gtest_main)
  target_compile_definitions(${name}_tests PRIVATE RANKLAB_PYTHON_DIR="${RANKLAB_PYTHON_DIR}"
                                                   RANKLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(${name}_tests ranklab_python)
  add_dependencies(ci-release-tests ${name}_tests)
  gtest_discover_tests(${name}_tests TEST_PREFIX "torch." PROPERTIES TIMEOUT 120)
endforeach()
