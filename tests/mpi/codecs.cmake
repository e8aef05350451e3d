# Compressed all-reduces over real MPI ranks (ranklab_add_mpi_test is in collectives.cmake).
add_executable(mpi_compressed_test mpi/compressed_test.cpp)
target_link_libraries(mpi_compressed_test PRIVATE ranklab_engine ranklab_comm_mpi ranklab_mpi_test_main)
ranklab_add_mpi_test(mpi_compressed mpi_compressed_test 4)
