# engine tests: the replica engine alone (block pool, scheduler, tokenizer, Engine on Asio).
kvsweep_add_test(sim_engine_test
  SOURCES
    block_pool_test.cc
    scheduler_test.cc
    tokenizer_test.cc
    engine_test.cc
    profile_test.cc
  LIBS kvsweep_sim_engine)
