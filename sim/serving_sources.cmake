add_library(kvsweep_sim STATIC
  fleet.cc
  chwbl.cc
  routing_strategy.cc
  kv_index.cc
  latency_histogram.cc
  faults.cc
  openai_api.cc
  openai_format.cc
  metrics_exposition.cc
  http_exchange.cc
  http_server.cc
  generation.cc
  replica_server.cc
  router.cc
  replica_health.cc
  collect_response.cc
  router_admin.cc
  http_upstream.cc
  proxy.cc
)
target_link_libraries(kvsweep_sim PUBLIC kvsweep_sim_engine nlohmann_json::nlohmann_json spdlog::spdlog)
