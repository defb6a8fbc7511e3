// libFuzzer target: kvsweep audit's reader of outside results (vLLM result JSON, console
// blocks pasted in write-ups) and the analysis of what it read.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "figures/audit.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& result : kvsweep::figures::read_outside_results(text, "fuzz.txt")) {
      (void)kvsweep::figures::audit_result(result);
    }
  } catch (const std::invalid_argument&) {
    // A located error about the input: what bad input must get.
  }
  return 0;
}
