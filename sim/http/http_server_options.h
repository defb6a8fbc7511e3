// What an HttpServer (http_server.h) is given: the handler of its requests and what it allows its
// peers. Apart from the server, so that a connection (http_connection.h), which the server
// includes, reads them without including the server back.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/http/http_exchange.h"

namespace kvsweep::sim {

// Called on the connection's io thread for each complete request. The handler answers through
// the exchange, now or later; a connection reads its next request only after the response ended.
using HttpHandler = std::function<void(const HttpRequest&, std::shared_ptr<Exchange>)>;

// What a server allows its peers. The defaults let a benchmark hold 10,000 streams and keep its
// connections between cells, and stop a client that sends too slowly or stops reading from
// holding memory or descriptors for good. A zero duration turns that timeout off.
struct HttpServerOptions {
  // From accepting a connection, or from the first byte of a later request, until the end of the
  // request header: slowloris clients that trickle a header are closed after this.
  std::chrono::milliseconds header_timeout{10000};
  // From the end of the header until the end of the body.
  std::chrono::milliseconds body_timeout{60000};
  // A keep-alive connection with no request under way for this long is closed.
  std::chrono::milliseconds idle_timeout{60000};
  // A response write that makes no progress for this long (a client that stopped reading)
  // closes the connection; the handler hears an abort.
  std::chrono::milliseconds write_timeout{30000};
  // Connections open at once; one more is answered 503 (OpenAI's error shape) and closed.
  std::size_t max_connections = 16384;
  // Response bytes queued per connection beyond which its exchange reports backlogged():
  // producers that honour it (a relayed upstream, a generation) pause until half has drained.
  std::size_t send_queue_limit = std::size_t{1} << 20;
  // Where accepted connections run, in turn (several io threads share the streams); empty:
  // on the io_context given to the server.
  std::vector<boost::asio::io_context*> connection_contexts;
  // Host names the fleet's and the proxy's site guard (site_guard.h) answers to besides the
  // loopback names and the listen address (--allowed-host); the server itself does not look.
  std::vector<std::string> allowed_hosts;
};

}  // namespace kvsweep::sim
