// The real kubectl binary, run as an argv with a timeout; every call is logged for the cell.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/log.h"
#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/target.h"

namespace kvsweep::orchestrator::kube {

// What a kubectl call's exit and stderr say the API server answered ("Error from server
// (Conflict): ...", exit 1).
enum class ApiAnswer {
  kOk,
  kConflict,       // 409 Conflict: the object changed since it was read; read again, apply again
  kAlreadyExists,  // 409 AlreadyExists
  kNotFound,       // 404 NotFound
  // 500 InternalError, 503 ServiceUnavailable, 504 Timeout, 429 TooManyRequests, the server
  // unreachable, or kubectl timed out: the same call may well succeed a moment later.
  kTransient,
  kOther,  // 422 Invalid, 403 Forbidden, bad arguments, ...: it would fail again
};

// Reads what a finished kubectl call says about the server's answer.
ApiAnswer classify_answer(const ProcessResult& result);

// A kubectl call that did not exit 0, with what the server answered.
class KubectlError : public TargetError {
 public:
  KubectlError(const std::string& message, ApiAnswer answer)
      : TargetError(message), answer_(answer) {}
  ApiAnswer answer() const { return answer_; }

 private:
  ApiAnswer answer_;
};

struct KubectlConfig {
  std::string binary = "kubectl";
  std::string kubeconfig;  // "" = kubectl's default
  std::string context;     // "" = current context
  std::string namespace_name = "default";
  double timeout_s = 120;  // per call
};

// Thread contract: one thread. Never builds a shell string: argv only. Every call's argv and
// how it ended are logged at debug level on `log`.
class Kubectl {
 public:
  explicit Kubectl(KubectlConfig config, Log log = silent_log());

  // {binary, [--kubeconfig K], [--context C], --namespace NS, args...}
  std::vector<std::string> argv(const std::vector<std::string>& args) const;

  // Runs kubectl with `args`, logs the call under `step`, returns the result as is.
  ProcessResult run(const std::string& step, const std::vector<std::string>& args);

  // Runs and returns stdout; throws KubectlError "<what>: `kubectl ...` <how it ended>:
  // <stderr>" unless it exited 0.
  std::string run_ok(const std::string& step, const std::vector<std::string>& args,
                     const std::string& what);

  // run_ok with "-o json" appended, parsed; throws TargetError when the output is not JSON.
  nlohmann::json get_json(const std::string& step, const std::vector<std::string>& args,
                          const std::string& what);

  std::vector<CommandLog> take_logs();
  const KubectlConfig& config() const { return config_; }
  const Log& log() const { return log_; }

 private:
  KubectlConfig config_;
  Log log_;
  std::vector<CommandLog> logs_;
};

}  // namespace kvsweep::orchestrator::kube
