// What an HTTP server counts about its connections (open, refused, timed out, queued bytes), and
// its Prometheus text.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace kvsweep::sim {

// Updated by the server's connections on whichever io thread runs them; read by /metrics.
struct HttpServerStats {
  std::atomic<std::int64_t> connections_open{0};
  std::atomic<std::uint64_t> connections_total{0};     // accepted, refused ones included
  std::atomic<std::uint64_t> connections_refused{0};   // over max_connections: answered 503
  std::atomic<std::uint64_t> header_timeouts{0};       // request header not complete in time
  std::atomic<std::uint64_t> body_timeouts{0};         // request body not complete in time
  std::atomic<std::uint64_t> idle_timeouts{0};         // keep-alive connection left unused
  std::atomic<std::uint64_t> write_timeouts{0};        // a client that stopped reading
  std::atomic<std::uint64_t> accept_errors{0};         // EMFILE, ENFILE, ...: accepting paused
  std::atomic<std::int64_t> send_queue_bytes{0};       // response bytes waiting for clients now
  std::atomic<std::int64_t> send_queue_peak_bytes{0};  // the most one connection ever held

  // Raises send_queue_peak_bytes to `bytes` if it is more.
  void note_queue(std::int64_t bytes);
};

// kvsweep_http_connections_open, kvsweep_http_connections_total,
// kvsweep_http_connections_refused_total,
// kvsweep_http_timeouts_total{phase=header|body|idle|write}, kvsweep_http_accept_errors_total,
// kvsweep_http_send_queue_bytes, kvsweep_http_send_queue_peak_bytes.
std::string http_server_metrics_text(const HttpServerStats& stats);

}  // namespace kvsweep::sim
