// A file in the temp directory holding some text, removed when the object goes away.
#pragma once

#include <string>

namespace kvsweep::orchestrator::kube {

class TempFile {
 public:
  // Creates `<tmp>/<prefix>XXXXXX<suffix>` (mode 0600) holding `text`. Throws TargetError.
  TempFile(const std::string& prefix, const std::string& suffix, const std::string& text);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kvsweep::orchestrator::kube
