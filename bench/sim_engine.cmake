# sim engine bench: scheduler speed against the simulated time it models.
if(TARGET kvsweep_sim_engine)
  add_executable(sim_engine_bench ${CMAKE_CURRENT_LIST_DIR}/sim_engine_bench.cc)
  target_link_libraries(sim_engine_bench PRIVATE kvsweep_sim_engine)
endif()
