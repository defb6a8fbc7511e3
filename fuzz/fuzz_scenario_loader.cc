// libFuzzer target: scenario YAML through the loader with every target kind kvsweep knows.
// Errors are expected values; anything else (a crash, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<kvsweep::orchestrator::ScenarioError> errors;
  (void)kvsweep::orchestrator::parse_scenario(text, "fuzz.yaml", &errors,
                                              kvsweep::orchestrator::target_kinds());
  return 0;
}
