// A private directory for local shards' files: removed when the run ends well, kept (and its
// path in the error) when it ends by an exception, for the shards' logs.
#pragma once

#include <string>

namespace kvsweep::orchestrator {

class TempShardDir {
 public:
  TempShardDir();  // $TMPDIR (else /tmp)/kvsweep-shards-XXXXXX, mode 0700
  ~TempShardDir();
  TempShardDir(const TempShardDir&) = delete;
  TempShardDir& operator=(const TempShardDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int exceptions_at_start_ = 0;
};

}  // namespace kvsweep::orchestrator
