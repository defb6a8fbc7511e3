// libFuzzer target: a timing profile's YAML through the profile loader.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/engine/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  (void)kvsweep::sim::parse_profile(text, "fuzz.yaml", &error);
  return 0;
}
