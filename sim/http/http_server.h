// Event-driven HTTP/1.1 server (Boost.Beast): one listener, keep-alive connections, streaming.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sim/http/http_exchange.h"

namespace kvsweep::sim {

// Called on the io thread for each complete request. The handler answers through the
// exchange, now or later; a connection reads its next request only after the response ended.
using HttpHandler = std::function<void(const HttpRequest&, std::shared_ptr<Exchange>)>;

// Thread contract: listen() is called before the io_context runs (or on its thread); close()
// on the io thread. Connections live on the io_context; there is no thread per connection, so
// open streams cost memory only. A client that disconnects mid-response aborts its exchange.
class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host on `port` (0: an ephemeral one), starts accepting, returns the port. Throws
  // std::runtime_error naming host on failure. May be called again after close() (a replica
  // that comes back on its old port).
  std::uint16_t listen(const std::string& host, std::uint16_t port = 0);
  // Stops accepting, aborts every open exchange and closes every connection.
  void close();
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with pending accept handlers
};

}  // namespace kvsweep::sim
