// What kind of failure an error is, as its type. The CLI's exit status (orchestrator/cli/main.cc)
// and serve's HTTP status (serve_context.cc) follow from the kind, never from a message's text:
// a corrupt row met after a sweep ran is not the user's mistake, whatever its message says.
#pragma once

#include <stdexcept>

namespace kvsweep {

// Input the user gave that kvsweep cannot use: a flag, a value, a file or scenario they named, a
// query parameter. Thrown before anything was run or measured: exit status 2, HTTP 400.
// (An std::invalid_argument, so code that checks a value by trying it still catches it.)
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Data that does not read as kvsweep wrote it: a damaged stored summary, blob or comparison, a
// shard's records file. Not the user's input: exit status 1, HTTP 500.
class CorruptData : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kvsweep
