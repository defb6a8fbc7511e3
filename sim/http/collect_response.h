// One request to a backend whose whole answer is kept for the router itself (fan-out, probes).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "sim/http/http_exchange.h"

namespace kvsweep::sim {

// What came back: a response (error empty), or why none did.
struct CollectedResponse {
  int status = 0;     // 0 when no response arrived
  std::string body;   // de-chunked
  std::string error;  // "connection reset", "timed out after 2.0 s"; "" when a response arrived
};

// Something that answers a request through an exchange: a ServingBackend's handle().
using SendRequest = std::function<void(const HttpRequest&, std::shared_ptr<Exchange>)>;

// Sends `request` through `send` with an exchange that keeps the response, and calls `done`
// exactly once on the io thread: with the response, or with an error when the backend cut the
// exchange or gave no complete answer within `timeout` (the exchange is then aborted, which
// closes an upstream connection). Thread contract: called on io's thread, where `done` runs too;
// the backend may move the exchange to its own thread (Exchange::move_to) and answer there.
void collect_response(boost::asio::io_context& io, const HttpRequest& request,
                      std::chrono::milliseconds timeout, const SendRequest& send,
                      std::function<void(CollectedResponse)> done);

// "HTTP 404: <body or its OpenAI error message, cut to 200 characters>", or the error.
std::string describe_collected(const CollectedResponse& response);

}  // namespace kvsweep::sim
