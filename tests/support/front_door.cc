// The fake API server's public port: see front_door.h.
#include "tests/support/front_door.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <stdexcept>
#include <vector>

namespace kvsweep::testing {
namespace {

// How often a blocked thread looks at `stopping`.
constexpr int kPollMs = 100;
// A request head longer than this is no request of kubectl's.
constexpr size_t kMaxHead = 64 * 1024;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

RequestHead parse_head(const std::string& text) {
  RequestHead head;
  size_t line_end = text.find("\r\n");
  const std::string first = text.substr(0, line_end);
  const auto sp1 = first.find(' ');
  const auto sp2 = first.find(' ', sp1 == std::string::npos ? sp1 : sp1 + 1);
  if (sp1 != std::string::npos) {
    head.method = first.substr(0, sp1);
    head.target = first.substr(sp1 + 1, sp2 == std::string::npos ? sp2 : sp2 - sp1 - 1);
  }
  const auto q = head.target.find('?');
  head.path = head.target.substr(0, q);
  head.query = q == std::string::npos ? "" : head.target.substr(q + 1);
  while (line_end != std::string::npos) {
    const size_t start = line_end + 2;
    line_end = text.find("\r\n", start);
    const std::string line = text.substr(start, line_end - start);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    head.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  }
  return head;
}

int connect_backend(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string RequestHead::header(const std::string& lowercase_name) const {
  const auto it = headers.find(lowercase_name);
  return it == headers.end() ? "" : it->second;
}

bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

FrontDoor::FrontDoor(int backend_port, Taker taker)
    : backend_port_(backend_port), taker_(std::move(taker)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error("FrontDoor: cannot listen on 127.0.0.1");
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FrontDoor::~FrontDoor() {
  stopping_ = true;
  acceptor_.join();
  ::close(listen_fd_);
  std::lock_guard lock(mu_);
  for (auto& connection : connections_) connection.thread.join();
}

void FrontDoor::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mu_);
    // Threads of connections that ended are joined here, so they do not pile up.
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->done) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    Connection& connection = connections_.emplace_back();
    connection.thread = std::thread([this, fd, &connection] {
      serve(fd);
      ::close(fd);
      connection.done = true;
    });
  }
}

void FrontDoor::serve(int fd) {
  std::string data;
  size_t head_end = std::string::npos;
  char buffer[8192];
  while (head_end == std::string::npos) {
    if (stopping_ || data.size() > kMaxHead) return;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    data.append(buffer, static_cast<size_t>(n));
    head_end = data.find("\r\n\r\n");
  }
  const RequestHead head = parse_head(data.substr(0, head_end));
  if (taker_ && taker_(head, fd, data.substr(head_end + 4), stopping_)) return;
  relay(fd, data);
}

// Copies bytes both ways until both directions ended (a half-close is passed on) or one side
// fails: the HTTP server answers one request per connection and then closes it.
void FrontDoor::relay(int client, const std::string& head_bytes) {
  const int backend = connect_backend(backend_port_);
  if (backend < 0) return;
  if (!send_all(backend, head_bytes.data(), head_bytes.size())) {
    ::close(backend);
    return;
  }
  bool client_open = true;   // client -> backend still flowing
  bool backend_open = true;  // backend -> client still flowing
  char buffer[16384];
  while (!stopping_ && backend_open) {
    pollfd p[2] = {{client, static_cast<short>(client_open ? POLLIN : 0), 0}, {backend, POLLIN, 0}};
    const int ready = ::poll(p, 2, kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (client_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
      if (n > 0) {
        if (!send_all(backend, buffer, static_cast<size_t>(n))) break;
      } else {
        client_open = false;
        ::shutdown(backend, SHUT_WR);
        if (n < 0) break;
      }
    }
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = ::recv(backend, buffer, sizeof buffer, 0);
      if (n > 0) {
        if (!send_all(client, buffer, static_cast<size_t>(n))) break;  // the client is gone
      } else {
        backend_open = false;
      }
    }
  }
  ::close(backend);
}

}  // namespace kvsweep::testing
