# store_bench: request rows inserted per second through Store::add_requests.
if(TARGET kvsweep_store)
  add_executable(store_bench ${CMAKE_CURRENT_LIST_DIR}/store_bench.cc)
  target_link_libraries(store_bench PRIVATE kvsweep_store)
endif()
