# serving tests: router strategies, OpenAI wire format, metrics text, and the whole fleet and
# the proxy on loopback (cpp-httplib as the client).
kvsweep_add_test(sim_serving_test
  SOURCES
    chwbl_test.cc
    routing_strategy_test.cc
    replica_health_test.cc
    kv_routing_test.cc
    openai_api_test.cc
    http_server_test.cc
    metrics_exposition_test.cc
    fleet_test.cc
    replica_api_test.cc
    hit_rate_test.cc
    proxy_test.cc
  LIBS kvsweep_sim PkgConfig::HTTPLIB)
