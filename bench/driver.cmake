# Driver benchmarks: SSE parsing speed (events per second), printed, never a test.
if(TARGET kvsweep_driver)
  add_executable(sse_parse_bench ${CMAKE_CURRENT_LIST_DIR}/sse_parse_bench.cc)
  target_link_libraries(sse_parse_bench PRIVATE kvsweep_driver)
endif()
