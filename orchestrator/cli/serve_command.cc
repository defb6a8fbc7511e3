// `kvsweep serve`: the web view of the store (orchestrator/serve/), until Ctrl-C.
#include <cstdio>
#include <memory>

#include "orchestrator/cli/api_key.h"
#include "orchestrator/cli/server_options.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/serve/web_server.h"

namespace kvsweep::orchestrator {
namespace {

struct ServeArgs {
  std::string bind = "127.0.0.1";
  int port = 8765;
  std::string token_env;
  double scrape_interval_s = 2;
  double window_s = 30;
};

int serve_command(const GlobalOptions& global, const ServeArgs& args, Console& console) {
  serve::ServeOptions options;
  options.db_path = global.db_path;
  options.bind = args.bind;
  options.port = args.port;
  options.token = api_key_from_env(args.token_env, "--token-env");
  options.live.interval_s = args.scrape_interval_s;
  options.live.window_s = args.window_s;
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
  return {cmd, [args, &global] {
            Console console(stderr, Console::PlainProgress::kQuiet, global.verbosity);
            return serve_command(global, *args, console);
          }};
}

}  // namespace kvsweep::orchestrator
