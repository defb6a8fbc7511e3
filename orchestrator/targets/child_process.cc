// Runs a program as an argv (never through a shell), with a timeout, capturing its output.
#include "orchestrator/targets/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/unique_fd.h"

namespace kvsweep::orchestrator {
namespace {

using Clock = std::chrono::steady_clock;

using Fd = UniqueFd;

struct Pipe {
  Fd read;
  Fd write;
};

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read = Fd(fds[0]);
  p.write = Fd(fds[1]);
  return true;
}

// The environment the child gets: ours, with `overrides` replacing or adding entries. Built
// before fork, because the child of a multithreaded process may not allocate.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (overrides.count(name) == 0) entries.push_back(entry);
  }
  for (const auto& [name, value] : overrides) entries.push_back(name + "=" + value);
  return entries;
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The child side, after fork: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* args, char* const* envp, int out_fd, int err_fd,
                             int status_fd) {
  ::setpgid(0, 0);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  ::execvpe(args[0], args, envp);
  const int error = errno;  // tell the parent why exec failed through the CLOEXEC pipe
  [[maybe_unused]] auto written = ::write(status_fd, &error, sizeof error);
  ::_exit(127);
}

void drain(int fd, std::string& into, bool& open) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0) {
    into.append(buffer, static_cast<std::size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    open = false;
  }
}

bool needs_quotes(const std::string& word) {
  if (word.empty()) return true;
  for (char c : word) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,@%+", c);
    if (!plain) return true;
  }
  return false;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s,
                          const std::map<std::string, std::string>& env) {
  ProcessResult result;
  if (argv.empty()) {
    result.started = false;
    result.err = "empty argv";
    return result;
  }
  Pipe out, err, status;
  if (!make_pipe(out) || !make_pipe(err) || !make_pipe(status)) {
    result.started = false;
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  const std::vector<std::string> environment = child_environment(env);
  const std::vector<char*> args = pointers(argv);
  const std::vector<char*> envp = pointers(environment);
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.started = false;
    result.err = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0)
    exec_child(args.data(), envp.data(), out.write.get(), err.write.get(), status.write.get());
  ::setpgid(pid, pid);  // also done in the child: whichever runs first wins the race
  out.write.reset();
  err.write.reset();
  status.write.reset();

  int exec_error = 0;
  if (::read(status.read.get(), &exec_error, sizeof exec_error) == sizeof exec_error) {
    ::waitpid(pid, nullptr, 0);
    result.started = false;
    result.err = argv[0] + ": cannot execute: " + std::strerror(exec_error);
    return result;
  }

  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  bool out_open = true, err_open = true;
  bool term_sent = false;
  Clock::time_point kill_at{};
  while (out_open || err_open) {
    pollfd fds[2] = {{out_open ? out.read.get() : -1, POLLIN, 0},
                     {err_open ? err.read.get() : -1, POLLIN, 0}};
    const auto now = Clock::now();
    if (!term_sent && now >= deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGTERM);
      term_sent = true;
      kill_at = now + std::chrono::seconds(1);
    } else if (term_sent && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
    const auto next = term_sent ? kill_at : deadline;
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
    const int ready = ::poll(fds, 2, static_cast<int>(std::clamp<long long>(wait_ms, 0, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) drain(out.read.get(), result.out, out_open);
    if (fds[1].revents != 0) drain(err.read.get(), result.err, err_open);
  }
  int status_code = 0;
  while (::waitpid(pid, &status_code, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);  // grandchildren left in the group go too; ESRCH when none is left
  if (WIFEXITED(status_code)) result.exit_code = WEXITSTATUS(status_code);
  if (WIFSIGNALED(status_code)) result.signal = WTERMSIG(status_code);
  return result;
}

std::string describe_argv(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& word : argv) {
    if (!text.empty()) text += ' ';
    if (!needs_quotes(word)) {
      text += word;
      continue;
    }
    text += '\'';
    for (char c : word) {
      if (c == '\'') {
        text += "'\\''";
      } else {
        text += c;
      }
    }
    text += '\'';
  }
  return text;
}

}  // namespace kvsweep::orchestrator
