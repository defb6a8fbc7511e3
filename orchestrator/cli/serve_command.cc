// `kvsweep serve`: the web view of the store (serve/), until Ctrl-C.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "driver/http_fetch.h"
#include "orchestrator/cli/api_key.h"
#include "orchestrator/cli/server_options.h"
#include "orchestrator/cli/subcommand.h"
#include "serve/web_server.h"

namespace kvsweep::orchestrator {
namespace {

struct ServeArgs {
  std::string bind = "127.0.0.1";
  int port = 8765;
  std::string token_env;
  double scrape_interval_s = 2;
  double window_s = 30;
  double fetch_timeout_s = 1.5;
  std::size_t metrics_max_bytes = driver::kDefaultMaxReplyBytes;
  std::size_t max_urls = 16;
  std::vector<std::string> allowed_hosts;
  serve::ServerLimits limits;
};

int serve_command(const GlobalOptions& global, const ServeArgs& args, Console& console) {
  serve::ServeOptions options;
  options.db_path = global.db_path;
  options.bind = args.bind;
  options.port = args.port;
  options.token = api_key_from_env(args.token_env, "--token-env");
  options.live.interval_s = args.scrape_interval_s;
  options.live.window_s = args.window_s;
  options.live.timeout_s = args.fetch_timeout_s;
  options.live.max_reply_bytes = args.metrics_max_bytes;
  options.live.max_urls = args.max_urls;
  options.allowed_hosts = args.allowed_hosts;
  options.limits = args.limits;
  serve::WebServer server(options);  // refuses a non-loopback bind without a token
  server.start();
  // The URL line is the result (a script reads it, even with --quiet); the rest is status.
  std::printf("kvsweep serve: %s (store %s, read-only)\n", server.url().c_str(),
              global.db_path.c_str());
  if (const std::string login = server.one_time_login_url(); !login.empty()) {
    std::printf("log in once: %s\n", login.c_str());
    console.line("every request needs the token: Authorization: Bearer $" + args.token_env +
                 ", or the session cookie the one-time URL above (or /login) sets");
  }
  console.line("Ctrl-C stops.");
  std::fflush(stdout);
  const int status = wait_for_signal();
  server.stop();
  return status;
}

}  // namespace

Subcommand register_serve(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd =
      app.add_subcommand("serve",
                         "web pages and a JSON API over the store: experiments, a running sweep, "
                         "compare, history, live /metrics against a stored baseline");
  cmd->footer(
      "Loopback only unless --token-env names a variable holding a token (16+ characters); "
      "then every request must carry it. See docs/serve.md.");
  cmd->add_option("--port", args->port, "port to listen on (0: any free port)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", args->bind,
                  "address to listen on; anything but loopback needs --token-env")
      ->capture_default_str();
  cmd->add_option("--token-env", args->token_env,
                  "environment variable holding the token every request must carry");
  cmd->add_option("--scrape-interval", args->scrape_interval_s,
                  "live page: seconds between /metrics scrapes")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 60.0));
  cmd->add_option("--window", args->window_s,
                  "live page: seconds of histogram increase each figure is taken over")
      ->capture_default_str()
      ->check(CLI::Range(2.0, 3600.0));
  cmd->add_option("--allowed-host", args->allowed_hosts,
                  "a host name this server answers to besides loopback names and --bind (a "
                  "request naming another Host is refused: DNS rebinding); repeatable");
  cmd->add_option("--fetch-timeout", args->fetch_timeout_s,
                  "live page: seconds one /metrics scrape may take")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 60.0));
  cmd->add_option("--metrics-max-bytes", args->metrics_max_bytes,
                  "live page: a /metrics reply larger than this is cut and its URL shown stale")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 32));
  cmd->add_option("--max-urls", args->max_urls, "live page: /metrics URLs one request may name")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", args->limits.threads,
                  "requests served at once (each open live stream holds one)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  cmd->add_option("--max-queued", args->limits.max_queued,
                  "whole requests waiting for a thread; beyond, answered 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--header-timeout", args->limits.header_timeout_s,
                  "seconds from accepting a connection until its request (header and body) has "
                  "arrived whole; then it is closed unanswered")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--max-connections", args->limits.max_connections,
                  "connections open at once; beyond, the one waiting longest for its request is "
                  "closed, or the new one answered 503 when all are being served")
      ->capture_default_str()
      ->check(CLI::Range(2, 65536));
  CLI::Option* max_streams =
      cmd->add_option("--max-streams", args->limits.max_streams,
                      "open live streams in all (below --threads; by default 8, or half of a "
                      "smaller --threads); beyond, answered 503")
          ->capture_default_str()
          ->check(CLI::Range(1, 1023));
  cmd->add_option("--max-streams-per-client", args->limits.max_streams_per_client,
                  "open live streams from one client address; beyond, answered 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 1023));
  cmd->add_option("--read-timeout", args->limits.read_timeout_s,
                  "seconds one read of a request body may wait (a body beyond the 64 KiB the "
                  "gate reads ahead)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--write-timeout", args->limits.write_timeout_s,
                  "seconds a client may read nothing of an answer before its connection is "
                  "closed")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  return {cmd, [args, &global, max_streams] {
            // A smaller --threads alone keeps half its threads for requests other than streams.
            if (max_streams->count() == 0) {
              args->limits.max_streams =
                  std::min(args->limits.max_streams, std::max(1, args->limits.threads / 2));
            }
            Console console(stderr, Console::PlainProgress::kQuiet, global.verbosity);
            return serve_command(global, *args, console);
          }};
}

}  // namespace kvsweep::orchestrator
