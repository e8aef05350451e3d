# The job file: parsing, validation, --set overrides, round trip.
add_executable(job_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_spec_test.cpp
                         ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_engine_keys_test.cpp
                         ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_faults_test.cpp
                         ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_launch_test.cpp
                         ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_slurm_test.cpp)
target_link_libraries(job_tests PRIVATE ranklab_job GTest::gmock GTest::gtest_main)
target_compile_definitions(job_tests PRIVATE
  RANKLAB_QUICKSTART_JOB="${PROJECT_SOURCE_DIR}/resources/jobs/quickstart.toml")
gtest_discover_tests(job_tests TEST_PREFIX "job.")

# What the workbench's job form is built from.
add_executable(job_keys_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_keys_test.cpp
                              ${CMAKE_CURRENT_SOURCE_DIR}/unit/job_key_relevance_test.cpp)
target_link_libraries(job_keys_tests PRIVATE ranklab_job GTest::gmock GTest::gtest_main)
gtest_discover_tests(job_keys_tests TEST_PREFIX "job_keys.")
