// The API key for the servers under test comes from the environment only: argv is visible to
// every user of the machine, and nothing derived from the key is stored or printed.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/error_kinds.h"

namespace kvsweep::orchestrator {

// "" when `variable` is ""; the variable's value otherwise. Throws std::invalid_argument,
// naming `option`, when the variable is unset or empty.
inline std::string api_key_from_env(const std::string& variable, const std::string& option) {
  if (variable.empty()) return "";
  const char* key = std::getenv(variable.c_str());
  if (key == nullptr || *key == '\0') {
    throw UsageError(option + ": environment variable " + variable + " is not set or empty");
  }
  return key;
}

}  // namespace kvsweep::orchestrator
