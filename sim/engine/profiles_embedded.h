// The profile YAML files shipped in profiles/, compiled into the binary (embed_profiles.cmake).
#pragma once

#include <span>
#include <string_view>

namespace kvsweep::sim {

struct EmbeddedProfileFile {
  std::string_view file_name;  // "demo.yaml"
  std::string_view text;
};

// Sorted by file name; the storage is static and immutable.
std::span<const EmbeddedProfileFile> embedded_profile_files();

}  // namespace kvsweep::sim
