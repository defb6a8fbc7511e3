# The replica engine (no HTTP): profiles, tokenizer, block hashing, block pool + prefix cache,
# the pure scheduler, and the real-time Engine on Asio.
add_library(kvsweep_sim_engine STATIC
  profile.cc
  tokenizer.cc
  block_hash.cc
  block_pool.cc
  scheduler.cc
  engine.cc
)
target_link_libraries(kvsweep_sim_engine PUBLIC kvsweep_common Boost::headers PkgConfig::XXHASH)
