// kvsweep serve's HTTP server: binding, the access check before every route, login, headers.
#include "serve/web_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include "common/error_kinds.h"
#include "common/site_check.h"
#include "serve/gated_http_server.h"
#include "serve/page_render.h"
#include "serve/serve_context.h"

namespace kvsweep::serve {
namespace {

std::chrono::microseconds to_micros(double seconds) {
  return std::chrono::microseconds(std::llround(seconds * 1e6));
}

std::vector<std::string_view> header_values(const httplib::Request& req, const char* name) {
  std::vector<std::string_view> values;
  const auto range = req.headers.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) values.push_back(it->second);
  return values;
}

// A cross-site request is refused unless it is a link followed to a page that fetches nothing
// (a top-level navigation: another site can neither read the page nor act through it).
bool harmless_navigation(const httplib::Request& req) {
  return req.method == "GET" && req.get_header_value("Sec-Fetch-Mode") == "navigate" &&
         req.path.rfind("/api/", 0) != 0 && req.path != "/live" && req.path != "/login";
}

// Every decoded path and query byte must be UTF-8: the JSON answers carry them.
bool utf8_request(const httplib::Request& req) {
  if (!is_valid_utf8(req.path)) return false;
  for (const auto& [name, value] : req.params) {
    if (!is_valid_utf8(name) || !is_valid_utf8(value)) return false;
  }
  return true;
}

void security_headers(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-store");
}

void unauthorized(const httplib::Request& req, httplib::Response& res, const std::string& why) {
  res.status = 401;
  res.set_header("WWW-Authenticate", "Bearer realm=\"kvsweep\"");
  if (req.path.rfind("/api/", 0) == 0) {
    send_json(res, {{"error", why}, {"status", 401}});
    return;
  }
  send_html(res, render_page("login", "Log in", "", {{"message", why}}));
}

std::string session_cookie(const std::string& session) {
  return std::string(kSessionCookie) + "=" + session + "; Path=/; HttpOnly; SameSite=Strict";
}

}  // namespace

struct WebServer::Impl {
  explicit Impl(ServeOptions options) : context(std::move(options)) {}

  ServeContext context;
  GatedHttpServer http;
  std::thread listener;
  int port = 0;

  // Before any route. A page of another site may reach a loopback server through a DNS name
  // it controls (DNS rebinding: its Host names that site) or send the browser's request itself
  // (Origin, Sec-Fetch-Site): neither is answered, with or without a token. Then the token.
  httplib::Server::HandlerResponse check(const httplib::Request& req, httplib::Response& res) {
    security_headers(res);
    const auto refuse = [&](int status, const std::string& why) {
      send_error(req, res, status, why);
      return httplib::Server::HandlerResponse::Handled;
    };
    if (header_values(req, "Authorization").size() > 1) {
      return refuse(400, "more than one Authorization header");
    }
    const SiteNames names{context.options().bind, context.options().allowed_hosts};
    const auto hosts = header_values(req, "Host");
    if (const std::string why = host_refusal(hosts, names); !why.empty()) {
      // None or several Host headers make a malformed request (RFC 9112 3.2); one that names
      // another site is refused, as the sim's site guard does.
      return refuse(hosts.size() == 1 ? 403 : 400, "kvsweep serve refused this request: " + why);
    }
    if (const std::string why =
            cross_site_refusal(req.get_header_value("Host"), req.get_header_value("Origin"),
                               req.get_header_value("Sec-Fetch-Site"));
        !why.empty() && !harmless_navigation(req)) {
      return refuse(403, "kvsweep serve refused this request: " + why);
    }
    if (!utf8_request(req)) return refuse(400, "the path or query is not valid UTF-8");
    AccessGuard& guard = context.guard();
    if (guard.open()) return httplib::Server::HandlerResponse::Unhandled;
    // GET /login carries its code in the URL; a POST's form body is read after this check,
    // so its route (added in start()) logs in.
    if (req.path == "/login" && req.method == "POST")
      return httplib::Server::HandlerResponse::Unhandled;
    if (req.path == "/login") return login(req, res);
    if (guard.allows(req.get_header_value("Authorization"), req.get_header_value("Cookie"))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    unauthorized(req, res,
                 "this kvsweep serve needs its token: send Authorization: Bearer TOKEN, or log "
                 "in below (or with the one-time URL it printed at start)");
    return httplib::Server::HandlerResponse::Handled;
  }

  // GET /login?once=CODE (the URL printed at start) or POST /login with the token: a session
  // cookie and off to the experiments. Anything else: 401 and the form.
  httplib::Server::HandlerResponse login(const httplib::Request& req, httplib::Response& res) {
    std::optional<std::string> session;
    if (req.method == "GET" && req.has_param("once")) {
      session = context.guard().login_with_code(req.get_param_value("once"));
    } else if (req.method == "POST" && req.has_param("token")) {
      session = context.guard().login_with_token(req.get_param_value("token"));
    }
    if (!session) {
      unauthorized(req, res,
                   req.has_param("once") || req.has_param("token")
                       ? "that login did not work: a one-time URL works once, within 15 minutes "
                         "of the start; or give the token"
                       : "log in with the token this kvsweep serve was started with");
      return httplib::Server::HandlerResponse::Handled;
    }
    res.status = 303;
    res.set_header("Set-Cookie", session_cookie(*session));
    res.set_header("Location", "/");
    return httplib::Server::HandlerResponse::Handled;
  }
};

WebServer::WebServer(ServeOptions options) {
  if (const std::string refusal = bind_refusal(options.bind, !options.token.empty());
      !refusal.empty()) {
    throw UsageError(refusal);
  }
  if (!options.token.empty() && options.token.size() < kMinTokenLength) {
    throw UsageError("the token is " + std::to_string(options.token.size()) +
                     " characters; use at least " + std::to_string(kMinTokenLength) +
                     " (e.g. openssl rand -hex 32)");
  }
  if (options.limits.max_streams >= options.limits.threads) {
    throw UsageError("--max-streams " + std::to_string(options.limits.max_streams) +
                     " must be below --threads " + std::to_string(options.limits.threads) +
                     ": each open stream holds a thread, and other "
                     "requests need one");
  }
  impl_ = std::make_unique<Impl>(std::move(options));
}

WebServer::~WebServer() { stop(); }

int WebServer::start() {
  Impl& i = *impl_;
  const ServeOptions& o = i.context.options();
  const ServerLimits& limits = o.limits;
  GateLimits gate;
  gate.request_deadline_s = limits.header_timeout_s;
  gate.max_connections = static_cast<std::size_t>(limits.max_connections);
  gate.threads = static_cast<std::size_t>(limits.threads);
  gate.max_queued = static_cast<std::size_t>(limits.max_queued);
  gate.max_body_bytes = limits.payload_max_bytes;
  i.http.set_payload_max_length(limits.payload_max_bytes);
  i.http.set_read_timeout(to_micros(limits.read_timeout_s));
  i.http.set_write_timeout(to_micros(limits.write_timeout_s));
  i.http.start_gate(gate);
  i.http.set_pre_routing_handler(
      [&i](const httplib::Request& req, httplib::Response& res) { return i.check(req, res); });
  i.http.Post("/login",
              [&i](const httplib::Request& req, httplib::Response& res) { i.login(req, res); });
  add_routes(i.http, i.context);
  if (o.port == 0) {
    i.port = i.http.bind_to_any_port(o.bind);
  } else {
    i.port = i.http.bind_to_port(o.bind, o.port) ? o.port : -1;
  }
  if (i.port <= 0) {
    throw std::runtime_error("cannot listen on " + o.bind + ":" + std::to_string(o.port) +
                             " (in use, or not an address of this machine)");
  }
  i.http.widen_backlog(std::max(limits.max_connections, 128));
  i.listener = std::thread([&i] { i.http.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so the destructor may only rely on it then.
  while (!i.http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return i.port;
}

void WebServer::stop() {
  if (!impl_ || !impl_->listener.joinable()) return;
  impl_->context.stop();  // open live streams end at their next check
  impl_->http.stop();
  impl_->listener.join();
  impl_->http.stop_gate();  // waits for the workers: open streams end at their next check
}

std::string WebServer::url() const {
  const std::string& bind = impl_->context.options().bind;
  const std::string host = bind.find(':') != std::string::npos ? "[" + bind + "]" : bind;
  return "http://" + host + ":" + std::to_string(impl_->port) + "/";
}

std::string WebServer::one_time_login_url() {
  if (impl_->context.guard().open()) return "";
  return url() + "login?once=" + impl_->context.guard().new_one_time_code();
}

}  // namespace kvsweep::serve
