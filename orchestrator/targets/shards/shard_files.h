// What the coordinator and a shard's pod pass through `kubectl exec` argv: file names kept to
// one safe word, and bytes as base64 (an argv carries no NUL, and an exec's command travels in
// a URL).
#pragma once

#include <string>

namespace kvsweep::orchestrator {

// `kvsweep shard get NAME`'s exit status when the file is not there (yet): an answer, not an
// error, which the Job launcher tells apart from a failed exec.
inline constexpr int kShardFileAbsentExit = 3;
// Its exit status when the file is there but refused (not a regular file, larger than
// --max-bytes): the coordinator fails the shard with the reason it printed.
inline constexpr int kShardFileRefusedExit = 4;

// Throws std::invalid_argument unless `name` is a plain file name: letters, digits, '.', '_',
// '-', not starting with '.'. A protocol file never leaves the shard's directory.
void check_shard_file_name(const std::string& name);

std::string encode_base64(const std::string& bytes);
// Throws std::invalid_argument on a character outside the alphabet or a bad length.
std::string decode_base64(const std::string& text);

}  // namespace kvsweep::orchestrator
