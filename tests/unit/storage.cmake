# Run store (storage/): real SQLite files in a temporary folder.
add_executable(storage_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_file_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_rows_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_bins_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_lifecycle_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_trace_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_export_target_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_full_disk_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/storage_private_files_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/trace_import_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/bounded_read_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/trace_import_hostile_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/step_measure_test.cpp
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit/run_analysis_test.cpp)
target_link_libraries(storage_tests PRIVATE ranklab_storage GTest::gtest_main)
gtest_discover_tests(storage_tests TEST_PREFIX "storage.")
