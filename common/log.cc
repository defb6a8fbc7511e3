// The logger a part is handed for its debug lines.
#include "common/log.h"

namespace kvsweep {

Log silent_log() { return std::make_shared<spdlog::logger>("kvsweep"); }

}  // namespace kvsweep
