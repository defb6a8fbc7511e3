// Event-driven HTTP/1.1 server (Boost.Beast): one listener, keep-alive connections, streaming.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/http/http_exchange.h"
#include "sim/http/http_server_options.h"
#include "sim/http/http_server_stats.h"

namespace kvsweep::sim {

// Thread contract: listen() and close() are called on the io thread of the io_context given to
// the constructor (or before it runs); open_connections() and stats() from any thread. Each
// connection lives on one io_context (options.connection_contexts) and calls the handler there;
// there is no thread per connection, so open streams cost memory only. A client that disconnects
// mid-response aborts its exchange. When accept() fails for want of descriptors (EMFILE, ENFILE)
// or memory, accepting pauses (10 ms, doubling to 1 s) instead of spinning, while the open
// connections are served; it resumes by itself.
class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpHandler handler, HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host on `port` (0: an ephemeral one), starts accepting, returns the port. Throws
  // std::runtime_error naming host on failure. May be called again after close() (a replica
  // that comes back on its old port).
  std::uint16_t listen(const std::string& host, std::uint16_t port = 0);
  // Stops accepting, aborts every open exchange and closes every connection (on their threads).
  void close();
  std::size_t open_connections() const;
  // Shared so /metrics can hold it; it outlives the server while connections still count.
  std::shared_ptr<const HttpServerStats> stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with pending accept handlers
};

}  // namespace kvsweep::sim
