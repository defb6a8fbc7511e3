// httplib behind the connection gate: an inline task queue, and a stream over the gate's bytes.
#include "serve/gated_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace kvsweep::serve {
namespace {

// httplib's accept loop calls enqueue() for each accepted socket; the job only hands the
// socket to the gate, so it runs at once on that thread.
class InlineTaskQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> job) override { job(); }
  void shutdown() override {}
};

int timeout_ms(time_t sec, time_t usec) {
  return static_cast<int>(
      std::min<long long>(static_cast<long long>(sec) * 1000 + usec / 1000, 24LL * 3600 * 1000));
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// The connection as httplib reads and writes it: first the bytes the gate read, then the
// socket (non-blocking, each wait bounded by the read or write timeout).
class GatedStream : public httplib::Stream {
 public:
  GatedStream(int fd, std::string already_read, int read_timeout_ms, int write_timeout_ms)
      : fd_(fd),
        read_(std::move(already_read)),
        read_timeout_ms_(read_timeout_ms),
        write_timeout_ms_(write_timeout_ms) {}

  bool is_readable() const override { return at_ < read_.size() || wait(POLLIN, read_timeout_ms_); }

  // Writable, and the client still there: a live stream whose page was closed ends at its
  // next check instead of holding its worker until a write fails.
  bool is_writable() const override {
    pollfd p{fd_, static_cast<short>(POLLOUT | POLLRDHUP), 0};
    if (::poll(&p, 1, write_timeout_ms_) <= 0) return false;
    if ((p.revents & (POLLERR | POLLHUP | POLLRDHUP)) != 0) return false;
    return (p.revents & POLLOUT) != 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (at_ < read_.size()) {
      const std::size_t n = std::min(size, read_.size() - at_);
      std::memcpy(ptr, read_.data() + at_, n);
      at_ += n;
      return static_cast<ssize_t>(n);
    }
    if (!wait(POLLIN, read_timeout_ms_)) return -1;
    return ::recv(fd_, ptr, size, MSG_DONTWAIT);
  }

  // All of it, or -1 once the client has taken nothing for the write timeout.
  ssize_t write(const char* ptr, size_t size) override {
    std::size_t sent = 0;
    while (sent < size) {
      const ssize_t n = ::send(fd_, ptr + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (!wait(POLLOUT, write_timeout_ms_)) return -1;
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, false, ip, port);
  }
  int socket() const override { return fd_; }

 private:
  bool wait(short events, int ms) const {
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, ms) > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }

  const int fd_;
  const std::string read_;
  std::size_t at_ = 0;
  const int read_timeout_ms_;
  const int write_timeout_ms_;
};

}  // namespace

GatedHttpServer::GatedHttpServer() {
  new_task_queue = [] { return new InlineTaskQueue; };
}

GatedHttpServer::~GatedHttpServer() { stop_gate(); }

void GatedHttpServer::start_gate(const GateLimits& limits) {
  gate_ = std::make_unique<ConnectionGate>(
      limits, [this](int fd, std::string bytes) { serve(fd, std::move(bytes)); });
}

void GatedHttpServer::stop_gate() {
  if (gate_) gate_->stop();
}

std::size_t GatedHttpServer::open_connections() const {
  return gate_ ? gate_->open_connections() : 0;
}

void GatedHttpServer::widen_backlog(int backlog) {
  // listen() on a listening socket sets its backlog anew (Linux).
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
}

bool GatedHttpServer::process_and_close_socket(int sock) {
  if (!gate_) {
    close_descriptor(sock);  // cpp-httplib hands each accepted socket over to be closed
    return false;
  }
  gate_->admit(sock);
  return true;
}

void GatedHttpServer::serve(int fd, std::string already_read) {
  {
    GatedStream stream(fd, std::move(already_read),
                       timeout_ms(read_timeout_sec_, read_timeout_usec_),
                       timeout_ms(write_timeout_sec_, write_timeout_usec_));
    bool connection_closed = false;
    // One request per connection: a worker never waits for a client's next request.
    process_request(stream, /*close_connection=*/true, connection_closed, nullptr);
  }
  ::shutdown(fd, SHUT_RDWR);
  close_descriptor(fd);
}

}  // namespace kvsweep::serve
