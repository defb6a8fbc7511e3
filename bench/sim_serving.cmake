# router_bench: router decision time per strategy, and open streams one fleet holds.
if("sim" IN_LIST KVSWEEP_PARTS)
  add_executable(router_bench ${CMAKE_CURRENT_LIST_DIR}/router_bench.cc)
  target_link_libraries(router_bench PRIVATE kvsweep_sim PkgConfig::HTTPLIB Threads::Threads)
endif()
