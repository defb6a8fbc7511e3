// libFuzzer target: the simulated fleet's request handling, from raw bytes on the wire to the
// router and two simulated replicas, with no socket: Beast's request parser (the server's own,
// with its body limit), then Router::handle on an in-memory exchange, then a bounded run of
// the io_context. Admin endpoints, OpenAI bodies, headers and unknown paths all get fuzzed.
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/profile.h"
#include "sim/http/http_exchange.h"
#include "sim/http/replica_server.h"
#include "sim/router/router.h"

namespace {

namespace http = boost::beast::http;
using kvsweep::sim::Exchange;

// Keeps the bytes a response would send; the fuzzer only needs them to exist.
class NullSink : public Exchange::Sink {
 public:
  void send(std::string bytes) override { sent_ += bytes.size(); }
  void complete(bool) override {}

 private:
  std::size_t sent_ = 0;
};

// The fleet under test: built once (an engine per replica is not free), reset per input.
struct Fleet {
  boost::asio::io_context io;
  std::vector<std::unique_ptr<kvsweep::sim::ReplicaServer>> replicas;
  std::unique_ptr<kvsweep::sim::Router> router;

  Fleet() {
    const auto profile = kvsweep::sim::find_profile("demo");
    if (!profile) std::abort();
    std::vector<kvsweep::sim::RoutedReplica> routed;
    for (int i = 0; i < 2; ++i) {
      kvsweep::sim::ReplicaOptions options;
      options.index = i;
      options.model = "m";
      replicas.push_back(std::make_unique<kvsweep::sim::ReplicaServer>(io, *profile, options));
      routed.push_back({replicas.back().get(), replicas.back().get(), ""});
    }
    kvsweep::sim::RouterOptions options;
    options.strategy = "kv-aware";
    options.health.probe_interval = std::chrono::milliseconds(0);
    router = std::make_unique<kvsweep::sim::Router>(io, std::move(routed), options);
  }
};

Fleet& fleet() {
  static Fleet* f = new Fleet();  // never destroyed: libFuzzer exits without unwinding
  return *f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_done()) return 0;  // the server answers 400 or waits for more bytes
  const auto& message = parser.get();
  kvsweep::sim::HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.body = message.body();
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  Fleet& f = fleet();
  auto sink = std::make_shared<NullSink>();
  auto exchange = std::make_shared<Exchange>(sink, true);
  f.router->handle(request, exchange);
  // A bounded slice of the engines' steps, then the client goes away: whatever was started is
  // cancelled, as a disconnect does.
  f.io.restart();
  f.io.run_for(std::chrono::milliseconds(2));
  exchange->abort();
  f.io.restart();
  f.io.poll();
  // An admin request may have changed the fleet (faults, strategy, caching): restore it, so
  // one input cannot make every later one meaningless.
  f.router->restart();
  for (auto& replica : f.replicas) {
    kvsweep::sim::ReplicaSettings settings;
    settings.faults = kvsweep::sim::FaultOptions{};
    settings.prefix_caching = true;
    replica->apply(settings);
  }
  f.router->set_strategy("kv-aware");
  f.io.restart();
  f.io.poll();
  return 0;
}
