# verdict_bench: the cell verdict's confusion table per workload shape, predicted at fractions
# of each shape's closed-loop capacity (docs/metrics.md, "The verdict's false-alarm rate").
if(TARGET kvsweep_calibrate)
  add_executable(verdict_bench ${CMAKE_CURRENT_LIST_DIR}/verdict_bench.cc)
  target_link_libraries(verdict_bench PRIVATE kvsweep_calibrate)
endif()
