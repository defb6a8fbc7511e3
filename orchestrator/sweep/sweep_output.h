// Where the runner says what it is doing: permanent lines and one transient progress line.
// The command line's Console prints them; tests record them.
#pragma once

#include <string>

namespace kvsweep::orchestrator {

// Thread contract: called from the runner's thread only.
class SweepOutput {
 public:
  virtual ~SweepOutput() = default;
  virtual void line(const std::string& text) = 0;      // a permanent line
  virtual void progress(const std::string& text) = 0;  // replaces the previous progress
  virtual void end_progress() = 0;                     // clears any progress
};

}  // namespace kvsweep::orchestrator
