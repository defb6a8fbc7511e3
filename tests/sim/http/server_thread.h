// Test helper: an HttpServer on 127.0.0.1 with its own io thread; the test thread is the client.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

#include "sim/http/http_server.h"

namespace kvsweep::sim::testing {

class ServerThread {
 public:
  explicit ServerThread(HttpHandler handler, HttpServerOptions options = {})
      : server_(io_, std::move(handler), std::move(options)),
        port_(server_.listen("127.0.0.1")),
        thread_([this] { io_.run(); }) {}
  ~ServerThread() {
    std::promise<void> closed;
    boost::asio::post(io_, [this, &closed] {
      server_.close();
      closed.set_value();
    });
    closed.get_future().wait();
    work_.reset();
    io_.stop();
    thread_.join();
  }
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  std::uint16_t port() const { return port_; }
  boost::asio::io_context& io() { return io_; }
  const HttpServerStats& stats() const { return *server_.stats(); }
  std::thread::native_handle_type native_handle() { return thread_.native_handle(); }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  HttpServer server_;
  std::uint16_t port_;
  std::thread thread_;
};

}  // namespace kvsweep::sim::testing
