// Minimal SSE server for driver benches: Beast on one Asio thread, stamps server send times.
//
// Loopback only, bounded: it exits after --max-seconds and refuses connections past
// --max-connections. Paths pick the behaviour, so one server serves every bench and wrk:
//   POST|GET /fast/...                 one token, usage and [DONE] in one write (request rate)
//   POST|GET /s/<tokens>/<ms>/...      a chunked stream: first token at once, then one token
//                                      every <ms> (0 = back to back), then usage and [DONE]
//   POST /mix/...                      the body picks: "@fast" or "@s/<tokens>/<ms>" anywhere
//                                      in it (e.g. in the prompt) behaves as the paths above,
//                                      so one run can mix held streams and quick requests
// Each content event carries "t_server_ns" (CLOCK_MONOTONIC just before the write) and the
// same number as its text, so a client can compute its own TTFT overhead.
#include <sys/resource.h>

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility> (C++20 mode).
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct ServerLimits {
  int max_connections = 20000;
  int open_connections = 0;
};

std::int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

void append_chunk(std::string& out, const std::string& data) {
  char size[24];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  out += size;
  out += data;
  out += "\r\n";
}

std::string token_event() {
  const std::string ns = std::to_string(monotonic_ns());
  return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + ns +
         " \"}}],\"t_server_ns\":" + ns + "}\n\n";
}

std::string usage_event(int tokens) {
  return "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":" +
         std::to_string(tokens) + "}}\n\ndata: [DONE]\n\n";
}

// One keep-alive connection: read a request, answer it, read the next.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ServerLimits& limits)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), limits_(limits) {
    ++limits_.open_connections;
  }
  ~Session() { --limits_.open_connections; }

  void read() {
    request_ = {};
    http::async_read(socket_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code error, std::size_t) {
                       if (!error) self->respond();
                     });
  }

 private:
  void respond() {
    std::string target(request_.target());
    if (target.rfind("/mix", 0) == 0) {
      const std::string& body = request_.body();
      const std::size_t at = body.find('@');
      target = at == std::string::npos ? "/fast" : "/" + body.substr(at + 1, 32);
    }
    if (target.rfind("/fast", 0) == 0) {
      const std::string body = token_event() + usage_event(1);
      out_ = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body;
      write([](Session& self) { self.read(); });
      return;
    }
    tokens_ = 16;
    interval_ms_ = 100;
    std::sscanf(target.c_str(), "/s/%d/%d", &tokens_, &interval_ms_);
    sent_ = 0;
    out_ =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    append_chunk(out_, token_event());
    ++sent_;
    write([](Session& self) { self.next_token(); });
  }

  void next_token() {
    if (sent_ >= tokens_) {
      out_.clear();
      append_chunk(out_, usage_event(tokens_));
      out_ += "0\r\n\r\n";
      write([](Session& self) { self.read(); });
      return;
    }
    const auto send_token = [](Session& self) {
      self.out_.clear();
      append_chunk(self.out_, token_event());
      ++self.sent_;
      self.write([](Session& s) { s.next_token(); });
    };
    if (interval_ms_ <= 0) {
      send_token(*this);
      return;
    }
    timer_.expires_after(std::chrono::milliseconds(interval_ms_));
    timer_.async_wait([self = shared_from_this(), send_token](beast::error_code error) {
      if (!error) send_token(*self);
    });
  }

  template <typename Then>
  void write(Then then) {
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this(), then](beast::error_code error, std::size_t) {
                        if (!error) then(*self);
                      });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  ServerLimits& limits_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  std::string out_;
  int tokens_ = 0;
  int interval_ms_ = 0;
  int sent_ = 0;
};

void accept(tcp::acceptor& acceptor, ServerLimits& limits) {
  acceptor.async_accept([&acceptor, &limits](beast::error_code error, tcp::socket socket) {
    if (!error) {
      socket.set_option(tcp::no_delay(true));
      if (limits.open_connections < limits.max_connections) {
        std::make_shared<Session>(std::move(socket), limits)->read();
      }
    }
    accept(acceptor, limits);
  });
}

}  // namespace

int main(int argc, char** argv) {
  double max_seconds = 120;
  ServerLimits limits;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-seconds") max_seconds = std::atof(argv[i + 1]);
    if (flag == "--max-connections") limits.max_connections = std::atoi(argv[i + 1]);
  }
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);

  asio::io_context io(1);
  tcp::acceptor acceptor(io);
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(8192);
  std::printf("port %d\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  accept(acceptor, limits);

  asio::steady_timer deadline(io, std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::duration<double>(max_seconds)));
  deadline.async_wait([&io](beast::error_code) { io.stop(); });
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&io](beast::error_code, int) { io.stop(); });
  io.run();
  return 0;
}
