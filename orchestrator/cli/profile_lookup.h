// A timing profile named on the command line: a file, or a name the profile search finds.
#pragma once

#include <string>

#include "sim/engine/profile.h"

namespace kvsweep::orchestrator {

// `which` is a file when it exists or ends in .yaml/.yml (parse_profile), else a name
// (sim::find_profile: the shipped profiles and KVSWEEP_PROFILE_PATH). Throws
// std::invalid_argument "<option> <which>: <why>" (the file's located errors, or no such
// profile or file).
sim::TimingProfile profile_named_or_file(const std::string& option, const std::string& which);

}  // namespace kvsweep::orchestrator
