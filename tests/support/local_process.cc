// Local processes standing in for containers: see local_process.h.
#include "tests/support/local_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace kvsweep::testing {

std::map<std::string, std::string> environment_with(
    const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  for (const auto& [key, value] : extra) env[key] = value;
  return env;
}

std::vector<std::string> map_binary(std::vector<std::string> argv,
                                    const std::map<std::string, std::string>& binaries) {
  if (!argv.empty()) {
    if (const auto it = binaries.find(argv[0]); it != binaries.end()) argv[0] = it->second;
  }
  return argv;
}

pid_t spawn_process(const ProcessSpec& spec, std::string& error) {
  if (spec.argv.empty()) {
    error = "no command given";
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!spec.output_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, spec.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  } else {
    for (const auto& [fd, target] : {std::pair{spec.stdout_fd, 1}, std::pair{spec.stderr_fd, 2}}) {
      if (fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, fd, target);
      } else {
        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0);
      }
    }
  }
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> argv;
  for (const auto& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (const auto& [key, value] : spec.env) env_text.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    error = std::string(std::strerror(rc)) + ": " + spec.argv[0];
    return -1;
  }
  return pid;
}

void signal_group(pid_t pid, int signal) {
  if (pid > 0) ::kill(-pid, signal);
}

bool wait_exited(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  info.si_pid = 0;
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG) != 0) {
    return errno != EINTR;  // not our child (already reaped): gone
  }
  return info.si_pid == pid;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace kvsweep::testing
