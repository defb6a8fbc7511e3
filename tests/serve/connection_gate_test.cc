// Tests for serve's connection gate on real sockets (socketpairs): at its connection bound, the
// connection admitted first among those still waiting for their request is the one closed.
// Admission order is the accept loop's order; descriptor numbers are not (a descriptor freed by
// any other thread is the next one the kernel hands out), which is why each trial below admits
// its sockets highest number first.
#include "serve/connection_gate.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"

namespace kvsweep::serve {
namespace {

using namespace std::chrono_literals;

// A socketpair: the gate takes `server`, the test keeps `client`.
struct Pair {
  UniqueFd client;
  int server = -1;
};

Pair make_pair() {
  std::array<int, 2> fds{};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()) != 0) return {};
  return {UniqueFd(fds[0]), fds[1]};
}

// Has the gate closed its end within `limit`? (EOF on ours.)
bool closed_within(int fd, std::chrono::milliseconds limit) {
  pollfd polled{fd, POLLIN, 0};
  if (::poll(&polled, 1, static_cast<int>(limit.count())) <= 0) return false;
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
}

GateLimits four_connections() {
  GateLimits limits;
  limits.max_connections = 4;
  limits.threads = 1;
  limits.request_deadline_s = 60;  // only the bound closes anything here
  return limits;
}

// Four silent connections fill the bound, then a fifth arrives: the first admitted is closed,
// the other three stay. Admitted in one burst, the gate often takes all five in one pass (the
// same clock reading for each); the choice must still follow admission, whatever the numbers.
TEST(ConnectionGate, AtItsBoundTheFirstAdmittedOfTheWaitingMakesRoom) {
  for (int trial = 0; trial < 40; ++trial) {
    ConnectionGate gate(four_connections(), [](int fd, std::string) { close_descriptor(fd); });
    std::vector<Pair> pairs;
    for (int i = 0; i < 5; ++i) {
      pairs.push_back(make_pair());
      ASSERT_TRUE(pairs.back().client) << "socketpair failed";
    }
    std::sort(pairs.begin(), pairs.end(),
              [](const Pair& a, const Pair& b) { return a.server > b.server; });
    for (const Pair& pair : pairs) gate.admit(pair.server);
    EXPECT_TRUE(closed_within(pairs[0].client.get(), 5000ms))
        << "trial " << trial << ": the first admitted (descriptor " << pairs[0].server
        << ") stays open";
    for (int i = 1; i < 5; ++i) {
      EXPECT_FALSE(closed_within(pairs[static_cast<std::size_t>(i)].client.get(), 0ms))
          << "trial " << trial << ": connection " << i << " was closed";
    }
    if (HasFailure()) return;
  }
}

// A request that arrives whole is served; the gate's count goes back down when it is done.
TEST(ConnectionGate, AWholeRequestIsServedAndLeavesTheCount) {
  ConnectionGate gate(four_connections(), [](int fd, std::string bytes) {
    const std::string answer = "got " + std::to_string(bytes.size());
    [[maybe_unused]] const ssize_t sent = ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    close_descriptor(fd);
  });
  Pair pair = make_pair();
  ASSERT_TRUE(pair.client);
  gate.admit(pair.server);
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(pair.client.get(), request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string answer;
  char buffer[64];
  for (ssize_t n = 0; (n = ::recv(pair.client.get(), buffer, sizeof buffer, 0)) > 0;) {
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(answer, "got " + std::to_string(request.size()));
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (gate.open_connections() != 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(gate.open_connections(), 0u);
}

}  // namespace
}  // namespace kvsweep::serve
