// The real kubectl binary, run as an argv with a timeout; every call is logged for the cell.
#include "orchestrator/targets/kube/kubectl.h"

#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <utility>

#include "common/duration.h"

namespace kvsweep::orchestrator::kube {
namespace {

// A cell's record keeps at most this much of each stream: a `get pods -o json` of a large
// deployment, polled for half an hour, must not grow the log without bound.
constexpr std::size_t kLogCut = 64 * 1024;
// How much of stderr an error message quotes; kubectl's own messages are one or two lines.
constexpr std::size_t kMessageCut = 2000;

std::string cut(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return text.substr(0, limit) + "... (" + std::to_string(text.size() - limit) + " more bytes)";
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

// "120", "0.5": a timeout as the user wrote it, without trailing zeros.
std::string how_it_ended(const ProcessResult& r, double timeout_s) {
  if (!r.started) return "could not be started";
  if (r.timed_out) return "timed out after " + format_duration_s(timeout_s);
  if (r.signal != 0) return "was killed by signal " + std::to_string(r.signal);
  return "exited with code " + std::to_string(r.exit_code);
}

bool contains_any(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* part : parts) {
    if (text.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

ApiAnswer classify_answer(const ProcessResult& r) {
  if (r.ok()) return ApiAnswer::kOk;
  if (r.timed_out) return ApiAnswer::kTransient;
  if (!r.started || r.signal != 0) return ApiAnswer::kOther;
  // kubectl prints the Status reason the server sent: "Error from server (Conflict): ...".
  const std::string& err = r.err;
  if (contains_any(err, {"Error from server (Conflict)"})) return ApiAnswer::kConflict;
  if (contains_any(err, {"Error from server (AlreadyExists)"})) return ApiAnswer::kAlreadyExists;
  if (contains_any(err, {"Error from server (NotFound)"})) return ApiAnswer::kNotFound;
  if (contains_any(err, {"Error from server (InternalError)",
                         "Error from server (ServiceUnavailable)", "Error from server (Timeout)",
                         "Error from server (ServerTimeout)", "Error from server (TooManyRequests)",
                         // the server unreachable, or the connection lost on the way
                         "Unable to connect to the server", "was refused - did you specify",
                         "connection reset by peer", "i/o timeout", "TLS handshake timeout",
                         "http2: client connection lost", "unexpected EOF"})) {
    return ApiAnswer::kTransient;
  }
  return ApiAnswer::kOther;
}

Kubectl::Kubectl(KubectlConfig config, Log log)
    : config_(std::move(config)), log_(std::move(log)) {}

std::vector<std::string> Kubectl::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> out{config_.binary};
  if (!config_.kubeconfig.empty()) out.insert(out.end(), {"--kubeconfig", config_.kubeconfig});
  if (!config_.context.empty()) out.insert(out.end(), {"--context", config_.context});
  out.insert(out.end(), {"--namespace", config_.namespace_name});
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

ProcessResult Kubectl::run(const std::string& step, const std::vector<std::string>& args) {
  const std::vector<std::string> full = argv(args);
  log_->debug("$ {}", describe_argv(full));
  const auto started = std::chrono::steady_clock::now();
  ProcessResult result = run_process(full, config_.timeout_s);
  CommandLog log;
  log.step = step;
  log.argv = full;
  log.exit_code = result.exit_code;
  log.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log.out = cut(result.out, kLogCut);
  log.err = cut(result.err, kLogCut);
  log_->debug("kubectl {} in {:.3f} s", how_it_ended(result, config_.timeout_s), log.seconds);
  logs_.push_back(std::move(log));
  return result;
}

std::string Kubectl::run_ok(const std::string& step, const std::vector<std::string>& args,
                            const std::string& what) {
  ProcessResult result = run(step, args);
  if (result.ok()) return std::move(result.out);
  std::string message =
      what + ": `" + describe_argv(argv(args)) + "` " + how_it_ended(result, config_.timeout_s);
  const std::string err = trim(cut(result.err, kMessageCut));
  if (!err.empty()) message += ": " + err;
  throw KubectlError(message, classify_answer(result));
}

nlohmann::json Kubectl::get_json(const std::string& step, const std::vector<std::string>& args,
                                 const std::string& what) {
  std::vector<std::string> with_output = args;
  with_output.insert(with_output.end(), {"-o", "json"});
  const std::string out = run_ok(step, with_output, what);
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw TargetError(what + ": `" + describe_argv(argv(with_output)) + "` did not print JSON (" +
                      e.what() + "): " + cut(out, 300));
  }
}

std::vector<CommandLog> Kubectl::take_logs() { return std::exchange(logs_, {}); }

}  // namespace kvsweep::orchestrator::kube
