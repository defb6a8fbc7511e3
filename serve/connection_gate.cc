// serve's connection gate: one poll() thread reads each request whole before a worker sees it.
#include "serve/connection_gate.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace kvsweep::serve {
namespace {

// A refused request is read and dropped for at least this long, so its client reads the answer
// before the connection closes (closing with unread bytes would reset it).
constexpr double kDrainS = 2;

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

// A small answer on a connection that has room for it (a fresh socket buffer); best effort.
void send_answer(int fd, int status, const char* reason, const std::string& message) {
  const std::string body =
      "{\"error\": \"" + message + "\", \"status\": " + std::to_string(status) + "}\n";
  const std::string answer = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                             "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             "Content-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body;
  [[maybe_unused]] const ssize_t sent =
      ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The value of header `name` in a header block ("Name: value\r\n" lines), or nullopt.
std::optional<std::string_view> header_value(std::string_view block, std::string_view name) {
  std::size_t at = block.find("\r\n");  // past the request line
  while (at != std::string_view::npos && at + 2 < block.size()) {
    at += 2;
    const std::size_t end = block.find("\r\n", at);
    const std::string_view line = block.substr(at, end == std::string_view::npos ? end : end - at);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), name)) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
        value.remove_suffix(1);
      }
      return value;
    }
    at = end;
  }
  return std::nullopt;
}

}  // namespace

ConnectionGate::ConnectionGate(GateLimits limits, ServeConnection serve)
    : limits_(limits), serve_(std::move(serve)) {
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_) throw std::runtime_error("eventfd failed");
  gate_thread_ = std::thread([this] { run(); });
  for (std::size_t i = 0; i < std::max<std::size_t>(limits_.threads, 1); ++i) {
    workers_.emplace_back([this] { work(); });
  }
}

ConnectionGate::~ConnectionGate() { stop(); }

void ConnectionGate::admit(int fd) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      close_descriptor(fd);
      return;
    }
    arrivals_.push_back(fd);
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
}

void ConnectionGate::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
  job_ready_.notify_all();
  if (gate_thread_.joinable()) gate_thread_.join();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  std::lock_guard lock(mutex_);
  for (auto& [fd, bytes] : jobs_) close_descriptor(fd);
  jobs_.clear();
}

std::size_t ConnectionGate::open_connections() const {
  std::lock_guard lock(mutex_);
  return waiting_.size() + jobs_.size() + serving_;
}

void ConnectionGate::run() {
  std::vector<pollfd> polled;
  for (;;) {
    const double now = steady_now_s();
    take_arrivals(now);
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
    }
    // Past their deadline: a request still coming is closed unanswered, a drain ends.
    double next_deadline = now + 60;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->second.deadline <= now) {
        const int fd = it->first;
        ++it;
        close_waiting(fd);
      } else {
        next_deadline = std::min(next_deadline, it->second.deadline);
        ++it;
      }
    }
    polled.clear();
    polled.push_back({wake_fd_.get(), POLLIN, 0});
    for (const auto& [fd, waiting] : waiting_) polled.push_back({fd, POLLIN, 0});
    const int timeout_ms = static_cast<int>(std::ceil((next_deadline - now) * 1000));
    if (::poll(polled.data(), polled.size(), std::max(timeout_ms, 1)) < 0) continue;
    if (polled[0].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake_fd_.get(), &count, sizeof count);
    }
    const double after = steady_now_s();
    for (std::size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      const auto it = waiting_.find(polled[i].fd);
      if (it != waiting_.end()) on_readable(it->first, it->second, after);
    }
  }
  std::vector<int> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(arrivals_);
    for (const auto& [fd, waiting] : waiting_) left.push_back(fd);
    waiting_.clear();
  }
  for (int fd : left) close_descriptor(fd);
}

void ConnectionGate::take_arrivals(double now) {
  std::vector<int> arrived;
  {
    std::lock_guard lock(mutex_);
    arrived.swap(arrivals_);
  }
  for (int fd : arrived) {
    std::size_t open = 0;
    {
      std::lock_guard lock(mutex_);
      open = waiting_.size() + jobs_.size() + serving_;
    }
    if (open >= limits_.max_connections) {
      if (waiting_.empty()) {
        // Every connection is a request being served: say so rather than queue.
        send_answer(fd, 503, "Service Unavailable",
                    "kvsweep serve has " + std::to_string(limits_.max_connections) +
                        " connections open (--max-connections); try again shortly");
        close_descriptor(fd);
        continue;
      }
      // The connection that has waited longest for its request makes room: a client that
      // holds connections open without sending cannot keep out one that sends at once. By
      // admission turn, not deadline: arrivals taken in one pass share a clock reading, and
      // among equal deadlines the map's order is the descriptors', which any other thread's
      // closed file reorders (in CI the first of four silent connections stayed open).
      const auto oldest = std::min_element(
          waiting_.begin(), waiting_.end(),
          [](const auto& a, const auto& b) { return a.second.turn < b.second.turn; });
      close_waiting(oldest->first);
    }
    set_nonblocking(fd);
    std::lock_guard lock(mutex_);
    waiting_[fd] = Waiting{{}, now + limits_.request_deadline_s, false, next_turn_++};
  }
}

void ConnectionGate::on_readable(int fd, Waiting& waiting, double now) {
  char buffer[16384];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) return close_waiting(fd);  // the client went (or reset)
  if (waiting.draining) return;
  waiting.bytes.append(buffer, static_cast<std::size_t>(n));
  if (!complete(fd, waiting)) {
    if (waiting.draining) waiting.deadline = std::max(waiting.deadline, now + kDrainS);
    return;
  }
  std::string bytes = std::move(waiting.bytes);
  {
    std::lock_guard lock(mutex_);
    waiting_.erase(fd);
  }
  dispatch(fd, std::move(bytes));
}

bool ConnectionGate::complete(int fd, Waiting& waiting) {
  const std::string_view bytes = waiting.bytes;
  const std::size_t line_end = bytes.find("\r\n");
  if (std::min(line_end, bytes.size()) > limits_.max_request_line) {
    refuse(fd, waiting, 414, "URI Too Long");
    return false;
  }
  const std::size_t header_end = bytes.find("\r\n\r\n");
  if (header_end == std::string_view::npos) {
    if (bytes.size() > limits_.max_header_bytes) refuse(fd, waiting, 431, "Header Too Large");
    return false;
  }
  if (header_end + 4 > limits_.max_header_bytes) {
    refuse(fd, waiting, 431, "Header Too Large");
    return false;
  }
  const std::string_view header = bytes.substr(0, header_end + 2);
  if (header_value(header, "Transfer-Encoding")) {
    refuse(fd, waiting, 411, "Length Required");
    return false;
  }
  std::size_t body = 0;
  if (const auto length = header_value(header, "Content-Length")) {
    if (length->empty() || length->size() > 12 ||
        length->find_first_not_of("0123456789") != std::string_view::npos) {
      refuse(fd, waiting, 400, "Bad Request");
      return false;
    }
    body = std::stoull(std::string(*length));
    if (body > limits_.max_body_bytes) {
      refuse(fd, waiting, 413, "Payload Too Large");
      return false;
    }
  }
  return bytes.size() >= header_end + 4 + body;
}

void ConnectionGate::refuse(int fd, Waiting& waiting, int status, const char* reason) {
  send_answer(fd, status, reason,
              std::string("request refused before it was read whole: ") + reason);
  ::shutdown(fd, SHUT_WR);
  waiting.draining = true;
  waiting.bytes.clear();
  waiting.bytes.shrink_to_fit();
}

void ConnectionGate::dispatch(int fd, std::string bytes) {
  {
    std::lock_guard lock(mutex_);
    if (jobs_.size() < std::max<std::size_t>(limits_.max_queued, 1) && !stopping_) {
      jobs_.emplace_back(fd, std::move(bytes));
      job_ready_.notify_one();
      return;
    }
  }
  send_answer(fd, 503, "Service Unavailable",
              "every worker of kvsweep serve is busy and " + std::to_string(limits_.max_queued) +
                  " requests wait (--max-queued); try again shortly");
  close_descriptor(fd);
}

void ConnectionGate::close_waiting(int fd) {
  {
    std::lock_guard lock(mutex_);
    waiting_.erase(fd);
  }
  close_descriptor(fd);
}

void ConnectionGate::work() {
  for (;;) {
    std::pair<int, std::string> job;
    {
      std::unique_lock lock(mutex_);
      job_ready_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++serving_;
    }
    try {
      serve_(job.first, std::move(job.second));
    } catch (...) {
      // serve_ closes the socket on every path; an exception here is a bug in a handler that
      // httplib did not catch: the connection is dropped, the server goes on.
    }
    std::lock_guard lock(mutex_);
    --serving_;
  }
}

}  // namespace kvsweep::serve
