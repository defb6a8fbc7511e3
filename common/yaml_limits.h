// How much of a YAML text kvsweep reads: shared by the reader (common/yaml_reader.h) and its
// event pass (common/yaml_document_scan.h).
#pragma once

#include <cstdint>

namespace kvsweep {

// The most nodes a document may hold once its aliases are expanded: what a walk of it (the
// duplicate-key check, a reader, yaml-cpp's own conversions) visits. Every kvsweep input
// (scenario, EPP configuration, profile, admin body) holds a few hundred, and a file without
// aliases reaches it only with 100,000 values written out; a few hundred bytes of nested
// aliases (an "alias bomb") expand to billions and are refused before any walk.
inline constexpr std::uint64_t kMaxYamlNodes = 100'000;

}  // namespace kvsweep
