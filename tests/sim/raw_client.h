// Test helper: a blocking TCP client on plain sockets, for peers an HTTP library will not play
// (a client that never reads, one that trickles a header, one holding a connection idle).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace kvsweep::sim::testing {

// One connection to 127.0.0.1:port. Move-only; closes its descriptor.
class RawClient {
 public:
  // receive_buffer > 0: SO_RCVBUF set before connecting, so a client that does not read
  // fills its window after a few kilobytes.
  // source: the local loopback address to connect from ("127.0.0.2": another client address
  // to a server that counts per client); nullptr: the kernel's choice.
  explicit RawClient(std::uint16_t port, int receive_buffer = 0, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket: errno " + std::to_string(errno));
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    if (source != nullptr) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &local.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
        const int error = errno;
        ::close(fd_);
        throw std::runtime_error("bind: errno " + std::to_string(error));
      }
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      const int error = errno;
      ::close(fd_);
      throw std::runtime_error("connect: errno " + std::to_string(error));
    }
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(RawClient&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  RawClient& operator=(RawClient&&) = delete;
  RawClient(const RawClient&) = delete;

  int fd() const { return fd_; }
  // A client that starts reading in earnest: a larger window from now on.
  void set_receive_buffer(int bytes) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }

  // false when the peer has gone (no SIGPIPE: MSG_NOSIGNAL).
  bool send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Reads until `needle` has arrived (returns everything read), the peer closes, or `limit`
  // passes (a liveness bound).
  std::string read_until(const std::string& needle,
                         std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (received_.find(needle) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      if (!read_some(std::chrono::milliseconds(50))) break;
    }
    return received_;
  }

  // Reads one whole response with a Content-Length body (call clear() before a second one on
  // this connection); what has arrived when the peer closes or `limit` passes otherwise.
  std::string read_response(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    const auto complete = [this] {
      const std::size_t head_end = received_.find("\r\n\r\n");
      if (head_end == std::string::npos) return false;
      std::string head = received_.substr(0, head_end);
      for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const std::size_t field = head.find("\r\ncontent-length:");
      const std::size_t length =
          field == std::string::npos ? 0 : std::stoul(head.substr(field + 17));
      return received_.size() >= head_end + 4 + length;
    };
    while (!complete() && std::chrono::steady_clock::now() < deadline) {
      if (!read_some(std::chrono::milliseconds(50))) break;
    }
    return received_;
  }

  // Whether the peer closed the connection (EOF or reset) within `limit`; what arrives on the
  // way is kept.
  bool closed_by_peer(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!read_some(std::chrono::milliseconds(50))) return true;
    }
    return false;
  }

  // Without waiting: has the peer closed? (Reads what is there.)
  bool peer_gone() { return !read_some(std::chrono::milliseconds(0)); }

  const std::string& received() const { return received_; }
  void clear() { received_.clear(); }  // before reading the next response on this connection

 private:
  // false once the peer has closed; true when bytes arrived or nothing within `wait`.
  bool read_some(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (ready <= 0) return true;
    char buffer[65536];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    received_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string received_;
};

// Polls `condition` until true or `limit` passes: a liveness bound, never a timing assertion.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

}  // namespace kvsweep::sim::testing
