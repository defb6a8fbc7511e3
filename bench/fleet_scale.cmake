# fleet_scale_bench: 10,000 streams from the real load driver through the simulated fleet's
# router (needs both parts; the bench is the one place they share a process).
if(TARGET kvsweep_sim AND TARGET kvsweep_driver)
  add_executable(fleet_scale_bench ${CMAKE_CURRENT_LIST_DIR}/fleet_scale_bench.cc)
  target_link_libraries(fleet_scale_bench
    PRIVATE kvsweep_sim kvsweep_driver PkgConfig::HTTPLIB Threads::Threads)
endif()
