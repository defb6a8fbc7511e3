// A private directory for local shards, removed unless the run ended by an exception.
#include "orchestrator/targets/shards/temp_shard_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace kvsweep::orchestrator {

TempShardDir::TempShardDir() : exceptions_at_start_(std::uncaught_exceptions()) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kvsweep-shards-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    throw std::runtime_error("cannot make a directory for the shards (" + pattern +
                             "): " + std::strerror(errno));
  }
  path_ = name.data();
}

TempShardDir::~TempShardDir() {
  if (std::uncaught_exceptions() > exceptions_at_start_) return;  // kept for its logs
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace kvsweep::orchestrator
