// kvsweep serve's HTTP server (cpp-httplib): the pages and their JSON API over one store,
// read-only, beside any sweep writing it. Routes and their JSON: docs/serve.md.
#pragma once

#include <memory>
#include <string>

#include "serve/serve_options.h"

namespace kvsweep::serve {

// Thread contract: start() and stop() from the owning thread; requests are served on the
// server's own threads until stop() or destruction.
class WebServer {
 public:
  // Throws std::invalid_argument when the options are refused (bind_refusal, a short token).
  explicit WebServer(ServeOptions options);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds and starts serving; returns the port. Throws std::runtime_error when the address
  // cannot be bound.
  int start();
  void stop();  // ends open live streams too; idempotent

  // "http://HOST:PORT/": where to point a browser.
  std::string url() const;
  // With a token: a URL that logs a browser in once (a one-time code, not the token); "" for
  // an open server.
  std::string one_time_login_url();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvsweep::serve
