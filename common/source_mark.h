// Where a value was written in a file, for messages that point at it.
#pragma once

namespace kvsweep {

struct SourceMark {
  int line = 0;    // 1-based; 0 when the value was defaulted
  int column = 0;  // 1-based
};

}  // namespace kvsweep
