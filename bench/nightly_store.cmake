# nightly_store_bench: N nightly runs of seed 002's matrix written straight into a store, and how
# long history, serve's front page, an experiment page and compare take on it.
if(TARGET kvsweep_serve)
  add_executable(nightly_store_bench ${CMAKE_CURRENT_LIST_DIR}/nightly_store_bench.cc)
  target_link_libraries(nightly_store_bench PRIVATE kvsweep_serve kvsweep_reports kvsweep_store)
endif()
