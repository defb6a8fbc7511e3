// Tests for driver/descriptor_budget.cc and EMFILE at run time: the descriptor limit is the
// client's, never reported as the server's. Limits are lowered in forked children only.
#include "driver/descriptor_budget.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <limits>

#include "driver/load_run.h"
#include "tests/driver/test_server.h"

namespace kvsweep::driver {
namespace {

Workload workload_of(int conversations) {
  Workload workload;
  for (int c = 0; c < conversations; ++c) {
    Conversation conversation;
    conversation.user.push_back("c" + std::to_string(c));
    conversation.assistant.push_back("");
    workload.conversations.push_back(std::move(conversation));
  }
  return workload;
}

LoadOptions options_for(const std::string& base_url) {
  LoadOptions options;
  options.base_url = base_url;
  options.model = "m";
  options.max_tokens = 2;
  options.connect_timeout_s = 5;
  options.request_timeout_s = 20;
  return options;
}

int open_descriptor_count() {
  DIR* dir = ::opendir("/proc/self/fd");
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) count += entry->d_name[0] != '.';
  ::closedir(dir);
  return count - 1;
}

// Runs `body` in a forked child (whose limits may be lowered for good) and returns what it
// returned. The child touches nothing the parent's other threads could have locked: tests run
// one at a time and join their servers.
std::string in_child(const std::function<std::string()>& body) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
    }
    const ssize_t written = ::write(pipe_fds[1], out.data(), out.size());
    ::_exit(written == static_cast<ssize_t>(out.size()) ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out += " [child failed]";
  return out;
}

void set_limit(rlim_t limit) {
  const rlimit both{limit, limit};  // the hard limit too: the driver raises soft to hard
  ::setrlimit(RLIMIT_NOFILE, &both);
}

// A socket listening on 127.0.0.1 that nobody accepts: a connection attempt stays in its queue.
class SilentListener {
 public:
  SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::listen(fd_, 16);
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool someone_connected() const {
    const int accepted = ::accept(fd_, nullptr, nullptr);
    if (accepted < 0) return false;
    ::close(accepted);
    return true;
  }

 private:
  int fd_;
  int port_ = 0;
};

TEST(DescriptorBudget, SizesTheRunByItsShape) {
  LoadOptions closed = options_for("http://127.0.0.1:1");
  closed.concurrency = 64;
  closed.duration_s = 10;
  DescriptorBudget budget = descriptor_budget(closed, workload_of(1));
  EXPECT_EQ(budget.connections, 64);
  EXPECT_EQ(budget.because, "concurrency 64");
  EXPECT_GT(budget.headroom, 0);
  EXPECT_GE(budget.limit, 1);

  LoadOptions open = options_for("http://127.0.0.1:1");
  open.request_rate = 10;
  open.request_timeout_s = 300;
  open.duration_s = 60;
  EXPECT_EQ(descriptor_budget(open, workload_of(1)).connections, 3000);  // rate x timeout
  open.duration_s = 0;
  open.num_requests = 100;
  open.warmup_requests = 5;
  EXPECT_EQ(descriptor_budget(open, workload_of(1)).connections, 105);  // all there is
  open.max_concurrency = 7;
  EXPECT_EQ(descriptor_budget(open, workload_of(1)).connections, 7);

  Workload trace = workload_of(5);
  trace.arrival_s = {0, 1, 1.5, 2, 10};
  LoadOptions replay = options_for("http://127.0.0.1:1");
  replay.request_timeout_s = 1.2;
  EXPECT_EQ(descriptor_budget(replay, trace).connections, 3);  // 1, 1.5 and 2 overlap
}

TEST(DescriptorBudget, TooLowALimitRefusesTheRunBeforeSendingWithTheNumbers) {
  SilentListener server;
  const std::string message = in_child([&] {
    set_limit(1024);
    LoadOptions options = options_for(server.base_url());
    options.request_rate = 100;
    options.max_concurrency = 2000;
    options.num_requests = 5000;
    try {
      run_load(options, workload_of(4));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("the run was not refused");
  });
  EXPECT_NE(message.find("may hold 2000 connections at once (max_concurrency 2000)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("may open only 1024 (RLIMIT_NOFILE; hard limit 1024)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Nothing was sent"), std::string::npos) << message;
  EXPECT_NE(message.find("`ulimit -n "), std::string::npos) << message;
  EXPECT_NE(message.find("--max-concurrency"), std::string::npos) << message;
  EXPECT_FALSE(server.someone_connected());
}

TEST(DescriptorBudget, RunOutOfDescriptorsMidRunIsClientResourcesNotConnect) {
  const std::string kinds = in_child([] {
    // Request 0 streams for 600 ms; while it does, the test takes every free descriptor,
    // so requests 1 and 2 (sent at 200 and 300 ms) cannot open a socket.
    test_support::LoopbackServer server([](httplib::Server& s, const std::atomic<bool>& closing) {
      s.Post("/v1/chat/completions", [&closing](const httplib::Request& request,
                                                httplib::Response& response) {
        const bool hold = request.body.find("c0") != std::string::npos;
        test_support::stream_steps(response,
                                   {{0, test_support::sse_role()},
                                    {hold ? 600 : 0, test_support::sse_content("x")},
                                    {0, test_support::sse_usage(3, 1, 0) + test_support::kSseDone}},
                                   closing);
      });
    });
    set_limit(static_cast<rlim_t>(open_descriptor_count() + 200));
    Workload workload = workload_of(3);
    workload.arrival_s = {0.0, 0.2, 0.3};
    LoadOptions options = options_for(server.base_url());
    options.threads = 1;
    std::vector<int> taken;
    options.on_measured_underway = [&taken] {
      for (int fd; (fd = ::dup(0)) >= 0;) taken.push_back(fd);
    };
    const LoadResult result = run_load(options, workload);
    for (int fd : taken) ::close(fd);
    std::string out = std::to_string(taken.size() > 0);
    for (const RequestRecord& record : result.records) {
      out += "|" + (record.ok ? std::string("ok") : record.error_kind + ": " + record.error);
    }
    return out;
  });
  const std::string failure =
      "|client_resources: socket(): too many open files (EMFILE): the client hit its "
      "descriptor limit (RLIMIT_NOFILE ";
  ASSERT_EQ(kinds.rfind("1|ok" + failure, 0), 0u) << kinds;
  const std::size_t second = kinds.find(failure, 4 + failure.size());
  EXPECT_NE(second, std::string::npos) << kinds;
  EXPECT_EQ(kinds.find("connect:"), std::string::npos) << kinds;
}

}  // namespace
}  // namespace kvsweep::driver
