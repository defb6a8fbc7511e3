# Driver benchmarks: SSE parsing speed, and the load engine against a Beast SSE server
# (bench/driver_bench.sh runs them together). Printed figures, never tests.
if(TARGET kvsweep_driver)
  add_executable(sse_parse_bench ${CMAKE_CURRENT_LIST_DIR}/sse_parse_bench.cc)
  target_link_libraries(sse_parse_bench PRIVATE kvsweep_driver)

  add_executable(sse_bench_server ${CMAKE_CURRENT_LIST_DIR}/sse_bench_server.cc)
  target_link_libraries(sse_bench_server PRIVATE Boost::headers Threads::Threads)

  add_executable(driver_bench ${CMAKE_CURRENT_LIST_DIR}/driver_bench.cc)
  target_link_libraries(driver_bench PRIVATE kvsweep_driver)
endif()
