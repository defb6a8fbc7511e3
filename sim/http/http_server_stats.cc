// What an HTTP server counts about its connections (open, refused, timed out, queued bytes), and
// its Prometheus text.
#include "sim/http/http_server_stats.h"

#include <sstream>

#include "sim/http/metrics_exposition.h"

namespace kvsweep::sim {

void HttpServerStats::note_queue(std::int64_t bytes) {
  std::int64_t peak = send_queue_peak_bytes.load();
  while (bytes > peak && !send_queue_peak_bytes.compare_exchange_weak(peak, bytes)) {
  }
}

std::string http_server_metrics_text(const HttpServerStats& stats) {
  std::ostringstream os;
  const auto one = [&os](const char* name, const char* type, const char* help, auto value) {
    write_family(os, name, type, help);
    os << name << ' ' << value << '\n';
  };
  one("kvsweep_http_connections_open", "gauge", "Client connections open now.",
      stats.connections_open.load());
  one("kvsweep_http_connections_total", "counter", "Client connections accepted.",
      stats.connections_total.load());
  one("kvsweep_http_connections_refused_total", "counter",
      "Connections over the cap, answered 503 and closed.", stats.connections_refused.load());
  write_family(os, "kvsweep_http_timeouts_total", "counter",
               "Connections closed by a timeout, by phase.");
  os << "kvsweep_http_timeouts_total{phase=\"header\"} " << stats.header_timeouts.load() << '\n'
     << "kvsweep_http_timeouts_total{phase=\"body\"} " << stats.body_timeouts.load() << '\n'
     << "kvsweep_http_timeouts_total{phase=\"idle\"} " << stats.idle_timeouts.load() << '\n'
     << "kvsweep_http_timeouts_total{phase=\"write\"} " << stats.write_timeouts.load() << '\n';
  one("kvsweep_http_accept_errors_total", "counter",
      "Failed accepts (out of descriptors...); accepting pauses and retries.",
      stats.accept_errors.load());
  one("kvsweep_http_send_queue_bytes", "gauge", "Response bytes queued for clients now.",
      stats.send_queue_bytes.load());
  one("kvsweep_http_send_queue_peak_bytes", "gauge",
      "The most response bytes one connection has had queued.", stats.send_queue_peak_bytes.load());
  return os.str();
}

}  // namespace kvsweep::sim
