# The replica engine (no HTTP): profiles (YAML, shipped ones embedded), tokenizer, block hashing,
# block pool + prefix cache, the pure scheduler, and the real-time Engine on Asio.
file(GLOB kvsweep_profile_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/profiles/*.yaml)
set(profiles_embedded_cc ${CMAKE_CURRENT_BINARY_DIR}/profiles_embedded.cc)
add_custom_command(
  OUTPUT ${profiles_embedded_cc}
  COMMAND ${CMAKE_COMMAND} -DDIR=${PROJECT_SOURCE_DIR}/profiles -DOUT=${profiles_embedded_cc}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/embed_profiles.cmake
  DEPENDS ${kvsweep_profile_files} ${CMAKE_CURRENT_SOURCE_DIR}/embed_profiles.cmake
          ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
  COMMENT "embedding profiles/*.yaml")
add_library(kvsweep_sim_engine STATIC
  profile.cc
  ${profiles_embedded_cc}
  tokenizer.cc
  block_hash.cc
  block_pool.cc
  scheduler.cc
  engine.cc
)
target_link_libraries(kvsweep_sim_engine PUBLIC kvsweep_common Boost::headers PkgConfig::XXHASH
                      yaml-cpp)
