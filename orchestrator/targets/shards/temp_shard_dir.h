// A private directory for local shards' files: removed when the run ends well, kept (and its
// path in the error) when it ends by an exception, for the shards' logs. One a killed
// coordinator left behind is removed by the next one made.
#pragma once

#include <string>
#include <vector>

namespace kvsweep::orchestrator {

// The file in each directory naming the process that made it: "<pid> <start time>\n", its
// start time as /proc/<pid>/stat gives it (clock ticks since boot), so a reused pid is no owner.
inline constexpr const char* kShardDirOwnerFile = "kvsweep-owner";
// Written when a directory is kept for its logs on purpose: never removed as stale.
inline constexpr const char* kShardDirKeptFile = "kvsweep-kept";

class TempShardDir {
 public:
  // $TMPDIR (else /tmp)/kvsweep-shards-XXXXXX, mode 0700, after removing the stale ones there
  // (remove_stale_shard_dirs).
  TempShardDir();
  ~TempShardDir();
  TempShardDir(const TempShardDir&) = delete;
  TempShardDir& operator=(const TempShardDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int exceptions_at_start_ = 0;
};

// Removes from `parent` every kvsweep-shards-* directory of this user that a process now gone
// made and did not keep: a real directory (not a link), owned by this user, holding an owner
// file whose process has ended (no such pid, or a pid started at another time) and no kept
// file. Anything else, a directory of a coordinator still running or one without an owner file
// (its maker may be writing it), is left alone. Returns the paths removed.
std::vector<std::string> remove_stale_shard_dirs(const std::string& parent);

}  // namespace kvsweep::orchestrator
