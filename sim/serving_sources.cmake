add_library(kvsweep_sim STATIC
  fleet.cc
  chwbl.cc
  routing_strategy.cc
  openai_api.cc
  metrics_exposition.cc
  http_exchange.cc
  http_server.cc
  replica_server.cc
  router.cc
)
target_link_libraries(kvsweep_sim PUBLIC kvsweep_sim_engine nlohmann_json::nlohmann_json spdlog::spdlog)
