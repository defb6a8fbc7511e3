# store_bench: request rows inserted and read per second through Store, and bytes per request
# of seed 002's shape before (schema 6, ITLs as JSON) and after the compact ITL blob.
if(TARGET kvsweep_store)
  add_executable(store_bench ${CMAKE_CURRENT_LIST_DIR}/store_bench.cc)
  target_link_libraries(store_bench PRIVATE kvsweep_store nlohmann_json::nlohmann_json)
endif()
