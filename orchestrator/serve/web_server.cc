// kvsweep serve's HTTP server: binding, the access check before every route, login, headers.
#include "orchestrator/serve/web_server.h"

#include <httplib.h>

#include <stdexcept>
#include <thread>

#include "orchestrator/serve/page_render.h"
#include "orchestrator/serve/serve_context.h"

namespace kvsweep::orchestrator::serve {
namespace {

// "127.0.0.1:8765", "[::1]:8765", "localhost": the host part of a Host header.
std::string host_name(const std::string& host_header) {
  if (!host_header.empty() && host_header.front() == '[') {
    return host_header.substr(1, host_header.find(']') - 1);
  }
  return host_header.substr(0, host_header.find(':'));
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
  httplib::Server http;
  std::thread listener;
  int port = 0;

  // Before any route: a request from a page of another site that reached a loopback server
  // through a DNS name it controls (DNS rebinding) names that site as its Host, and a server
  // without a token must not answer it; with a token, the token is the check.
  httplib::Server::HandlerResponse check(const httplib::Request& req, httplib::Response& res) {
    security_headers(res);
    AccessGuard& guard = context.guard();
    if (guard.open()) {
      if (!is_loopback_address(host_name(req.get_header_value("Host")))) {
        res.status = 403;
        res.set_content("kvsweep serve answers loopback names only (Host: " +
                            req.get_header_value("Host") + ")\n",
                        "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
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
    throw std::invalid_argument(refusal);
  }
  if (!options.token.empty() && options.token.size() < kMinTokenLength) {
    throw std::invalid_argument("the token is " + std::to_string(options.token.size()) +
                                " characters; use at least " + std::to_string(kMinTokenLength) +
                                " (e.g. openssl rand -hex 32)");
  }
  impl_ = std::make_unique<Impl>(std::move(options));
}

WebServer::~WebServer() { stop(); }

int WebServer::start() {
  Impl& i = *impl_;
  const ServeOptions& o = i.context.options();
  const int threads = o.threads;
  i.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  i.http.set_payload_max_length(64 * 1024);  // a login form at most
  i.http.set_read_timeout(5, 0);
  // An idle keep-alive connection holds a thread, and stop() waits for it: short, so Ctrl-C
  // ends the server within a couple of seconds.
  i.http.set_keep_alive_timeout(2);
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

}  // namespace kvsweep::orchestrator::serve
