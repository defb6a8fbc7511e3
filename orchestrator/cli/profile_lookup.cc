#include "orchestrator/cli/profile_lookup.h"

#include <filesystem>
#include <stdexcept>

#include "common/error_kinds.h"
#include "common/input_file.h"

namespace kvsweep::orchestrator {

sim::TimingProfile profile_named_or_file(const std::string& option, const std::string& which) {
  std::string error;
  const std::filesystem::path path(which);
  const bool file =
      std::filesystem::exists(path) || path.extension() == ".yaml" || path.extension() == ".yml";
  if (file) {
    std::string text;
    try {
      text = read_input_file(which, 1 << 20);
    } catch (const InputFileError& e) {
      throw UsageError(option + " " + e.what());
    }
    if (auto p = sim::parse_profile(text, which, &error)) return *p;
    throw UsageError(option + " " + which + ":\n" + error);
  }
  if (auto p = sim::find_profile(which, {}, &error)) return *p;
  throw UsageError(option + " " + which + ": " +
                   (error.empty() ? "no such profile or file" : error));
}

}  // namespace kvsweep::orchestrator
