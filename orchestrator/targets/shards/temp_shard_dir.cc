// A private directory for local shards, removed unless the run ended by an exception; the
// directories of coordinators that were killed are removed by the next.
#include "orchestrator/targets/shards/temp_shard_dir.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/input_file.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "kvsweep-shards-";

std::string temp_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// The start time of process `pid` in clock ticks since boot (/proc/<pid>/stat, field 22),
// nullopt when there is no such process.
std::optional<unsigned long long> start_time_of(pid_t pid) {
  std::string stat;
  try {
    stat = read_input_file("/proc/" + std::to_string(pid) + "/stat", 64 * 1024);
  } catch (const InputFileError&) {
    return std::nullopt;
  }
  // After the command's name, which is in parentheses and may hold spaces and parentheses.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int k = 3; k <= 22 && fields >> field; ++k) {
    if (k == 22) return std::stoull(field);
  }
  return std::nullopt;
}

// Whether the owner file `text` names a process that is still the one that wrote it.
bool owner_alive(const std::string& text) {
  std::istringstream in(text);
  long long pid = 0;
  unsigned long long started = 0;
  if (!(in >> pid >> started) || pid <= 0) return true;  // not ours to judge: leave it
  if (const auto now = start_time_of(static_cast<pid_t>(pid))) return *now == started;
  if (fs::exists("/proc/self/stat")) return false;  // /proc answers: no such process
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

std::vector<std::string> remove_stale_shard_dirs(const std::string& parent) {
  std::vector<std::string> removed;
  std::error_code error;
  fs::directory_iterator it(parent, error);
  if (error) return removed;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || name.size() != std::strlen(kPrefix) + 6) continue;
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != ::geteuid()) {
      continue;
    }
    if (fs::exists(fs::symlink_status(entry.path() / kShardDirKeptFile))) continue;
    std::string owner;
    try {
      owner = read_input_file((entry.path() / kShardDirOwnerFile).string(), 4096);
    } catch (const InputFileError&) {
      continue;  // no owner file (yet): not known to be stale
    }
    if (owner_alive(owner)) continue;
    fs::remove_all(entry.path(), error);  // removes links inside, never what they point to
    if (!error) removed.push_back(entry.path().string());
  }
  return removed;
}

TempShardDir::TempShardDir() : exceptions_at_start_(std::uncaught_exceptions()) {
  const std::string parent = temp_parent();
  remove_stale_shard_dirs(parent);
  std::string pattern = parent + "/" + kPrefix + "XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    throw std::runtime_error("cannot make a directory for the shards (" + pattern +
                             "): " + std::strerror(errno));
  }
  path_ = name.data();
  const auto started = start_time_of(::getpid());
  write_file_atomically(
      (fs::path(path_) / kShardDirOwnerFile).string(),
      std::to_string(::getpid()) + " " + std::to_string(started ? *started : 0) + "\n");
}

TempShardDir::~TempShardDir() {
  std::error_code ignored;
  if (std::uncaught_exceptions() > exceptions_at_start_) {  // kept for its logs
    try {
      write_file_atomically((fs::path(path_) / kShardDirKeptFile).string(),
                            "kept for the shards' logs\n");
    } catch (...) {  // a destructor must not throw; at worst the next run removes it
    }
    return;
  }
  fs::remove_all(path_, ignored);
}

}  // namespace kvsweep::orchestrator
