// A pipe only the coordinator writes to, and the processes that hold its read end.
#include "orchestrator/targets/shards/lifeline.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/unique_fd.h"

extern char** environ;

namespace kvsweep::orchestrator {

Lifeline::Lifeline() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("cannot make a lifeline pipe: ") + std::strerror(errno));
  }
  write_end_.reset(ends[1]);
  UniqueFd low_read_end(ends[0]);
  read_end_.reset(::fcntl(low_read_end.get(), F_DUPFD_CLOEXEC, kCoordinatorFd + 1));
  if (!read_end_) {  // both ends close themselves
    throw std::runtime_error(std::string("cannot make a lifeline pipe: ") + std::strerror(errno));
  }
}

Lifeline::~Lifeline() { cut(); }

pid_t Lifeline::spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> c_args;
  for (const std::string& a : argv) c_args.push_back(const_cast<char*>(a.c_str()));
  c_args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, read_end_.get(), kCoordinatorFd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, c_args[0], &actions, &attr, c_args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  return pid;
}

void Lifeline::finish() {
  if (!write_end_) return;
  const char done = 'd';
  while (::write(write_end_.get(), &done, 1) < 0 && errno == EINTR) {
  }
  cut();
}

void Lifeline::cut() { write_end_.reset(); }

}  // namespace kvsweep::orchestrator
