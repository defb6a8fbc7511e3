// Writing an output file whole or not at all: a temporary file beside it, renamed over it.
#pragma once

#include <string>
#include <string_view>

namespace kvsweep {

// Writes `text` to a new temporary file in the directory of `path` (which must exist), flushes
// it to disk and renames it to `path`. Readers see the old file or the new one, never a part,
// and a full disk or a crash leaves no half-written or empty file behind: on failure the
// temporary file is removed and `path` is as it was. The file gets mode 0666 less the umask.
// Throws std::runtime_error "cannot write <path>: <reason>".
void write_file_atomically(const std::string& path, std::string_view text);

}  // namespace kvsweep
