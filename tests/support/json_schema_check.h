// Checks JSON documents against a JSON Schema with a real validator: Debian's
// python3-jsonschema, run as /usr/bin/python3 tests/support/validate_json.py (no partial
// validator of our own, so a schema keyword we got wrong cannot pass unnoticed).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace kvsweep::testing {

// The interpreter with Debian's packages (scripts/install-deps.sh installs python3-jsonschema),
// never the first python3 on PATH.
inline constexpr const char* kSystemPython = "/usr/bin/python3";

// Every violation of `doc` against the schema file, as "$.path: message", in document order;
// empty when the document is valid. Throws std::runtime_error when the validator cannot run
// (no python3-jsonschema, an unreadable or invalid schema), so a broken setup fails the test
// instead of passing it.
inline std::vector<std::string> schema_errors(const std::string& schema_path,
                                              const std::string& validator_script,
                                              const nlohmann::json& doc) {
  TempDir dir;
  const std::string doc_path = dir.file("doc.json");
  const std::string out_path = dir.file("out.txt");
  const std::string err_path = dir.file("err.txt");
  std::ofstream(doc_path, std::ios::binary) << doc.dump(2);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  std::vector<std::string> args = {kSystemPython, validator_script, schema_path, doc_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawn(&pid, kSystemPython, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) throw std::runtime_error(std::string("cannot run ") + kSystemPython);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string out = read(out_path);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) return {};
  if (code != 1 || out.empty()) {
    throw std::runtime_error(validator_script + " exited " + std::to_string(code) + ": " + out +
                             read(err_path));
  }
  std::vector<std::string> errors;
  const std::string prefix = doc_path + ": ";
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    errors.push_back(line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : line);
  }
  return errors;
}

}  // namespace kvsweep::testing
