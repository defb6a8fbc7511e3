// `kvsweep audit FILE`: did an outside run (vLLM's result JSON or console blocks) measure the
// load it asked for? The achieved-load analysis of figures/audit.h, printed per run.
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/error_kinds.h"
#include "common/input_file.h"
#include "common/utf8_prefix.h"
#include "figures/audit.h"
#include "figures/units.h"
#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {
namespace {

// Larger than any pasted write-up; a guard against naming a device or a huge log by mistake.
constexpr std::uintmax_t kMaxAuditFileBytes = 64u << 20;

struct AuditArgs {
  std::string file;
  std::string request_rate;  // "" = as the file says; a number or "inf"
  int max_concurrency = -1;  // -1 = as the file says
  std::int64_t num_prompts = -1;
  double min_in_flight_fraction = ValidityRules{}.audit_min_in_flight_fraction;
  bool json = false;
};

std::string or_dash(const std::optional<double>& v, const char* pattern) {
  if (!v) return "-";
  char text[64];
  std::snprintf(text, sizeof text, pattern, *v);
  return text;
}

nlohmann::ordered_json to_json(const figures::AuditedRun& a) {
  const auto num = [](const std::optional<double>& v) -> nlohmann::ordered_json {
    if (!v || !std::isfinite(*v)) return nullptr;
    return *v;
  };
  const figures::OutsideResult& r = a.result;
  nlohmann::ordered_json j;
  j["label"] = r.label;
  j["where"] = figures::strip_control_characters(r.where);
  j["verdict"] = a.verdict;
  j["reasons"] = a.reasons;
  j["not_evaluated"] = a.not_evaluated;
  j["completed"] = r.completed;
  j["request_throughput"] = r.request_throughput;
  j["request_rate"] = !r.request_rate               ? nlohmann::ordered_json(nullptr)
                      : std::isinf(*r.request_rate) ? nlohmann::ordered_json("inf")
                                                    : nlohmann::ordered_json(*r.request_rate);
  j["max_concurrency"] =
      r.max_concurrency ? nlohmann::ordered_json(*r.max_concurrency) : nlohmann::ordered_json();
  j["little_in_flight"] = num(a.little_in_flight);
  j["cap_fraction"] = num(a.cap_fraction);
  j["rate_fraction"] = num(a.rate_fraction);
  j["expected_in_flight"] = num(a.expected_in_flight);
  return j;
}

int audit_command(const AuditArgs& args) {
  // Unreadable input is bad input (exit 2): exit 1 is the verdict's, a run short of its
  // concurrency.
  std::string text;
  try {
    text = read_input_file(args.file, kMaxAuditFileBytes);
  } catch (const InputFileError& e) {
    throw UsageError(figures::strip_control_characters(e.what()));
  }
  std::vector<figures::OutsideResult> results = figures::read_outside_results(text, args.file);
  for (auto& r : results) {
    if (!args.request_rate.empty()) {
      r.request_rate = args.request_rate == "inf" ? std::numeric_limits<double>::infinity()
                                                  : std::stod(args.request_rate);
    }
    if (args.max_concurrency >= 0) r.max_concurrency = args.max_concurrency;
    if (args.num_prompts >= 0) r.num_prompts = args.num_prompts;
  }
  ValidityRules rules;
  rules.audit_min_in_flight_fraction = args.min_in_flight_fraction;
  std::vector<figures::AuditedRun> audited;
  for (const auto& r : results) audited.push_back(figures::audit_result(r, rules));
  if (args.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& a : audited) out.push_back(to_json(a));
    // Labels are UTF-8 (read_outside_results refuses other text); a path named on the command
    // line may not be, and is written with U+FFFD rather than thrown on.
    std::printf("%s\n",
                out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else {
    std::printf("%-52s %8s %6s %8s %9s %6s %9s  %s\n", "run", "rate", "cap", "req/s", "in flight",
                "of cap", "expected", "verdict");
    for (const auto& a : audited) {
      const figures::OutsideResult& r = a.result;
      const std::string rate = !r.request_rate ? "-"
                               : std::isinf(*r.request_rate)
                                   ? "inf"
                                   : figures::format_rate(*r.request_rate);
      const std::string cap = r.max_concurrency ? std::to_string(*r.max_concurrency) : "-";
      std::string label = figures::strip_control_characters(r.label.empty() ? r.where : r.label);
      if (label.size() > 52) label = std::string(utf8_prefix(label, 49)) + "...";
      std::printf(
          "%-52s %8s %6s %8.1f %9s %6s %9s  %s\n", label.c_str(), rate.c_str(), cap.c_str(),
          r.request_throughput, or_dash(a.little_in_flight, "%.0f").c_str(),
          or_dash(a.cap_fraction ? std::optional<double>(*a.cap_fraction * 100) : std::nullopt,
                  "%.0f%%")
              .c_str(),
          or_dash(a.expected_in_flight, "%.0f").c_str(), a.verdict.c_str());
      for (const auto& reason : a.reasons)
        std::printf("    %s (%s)\n", reason.c_str(),
                    figures::strip_control_characters(r.where).c_str());
    }
    if (!audited.empty()) {
      std::printf("\nNot evaluated from such a file:\n");
      for (const auto& why : audited.front().not_evaluated) std::printf("- %s\n", why.c_str());
    }
  }
  for (const auto& a : audited) {
    if (a.short_of_concurrency) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

Subcommand register_audit(CLI::App& app, const GlobalOptions&) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "judge an outside run (vLLM's result JSON or 'Serving Benchmark Result' blocks): did it "
      "reach the load it asked for? Exit 1 when a run was short of its concurrency");
  cmd->add_option("file", args->file, "result JSON, or text holding console blocks")->required();
  cmd->add_option("--request-rate", args->request_rate,
                  "the run's --request-rate (a number or inf), when the file does not say");
  cmd->add_option("--max-concurrency", args->max_concurrency,
                  "the run's --max-concurrency, when the file does not say")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-prompts", args->num_prompts,
                  "the run's --num-prompts, when the file does not say")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-in-flight", args->min_in_flight_fraction,
                  "short of its concurrency below this fraction of the expected in-flight "
                  "(default 0.75: Little's law from means reads low; docs/metrics.md)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--json", args->json, "print the analysis as JSON");
  return {cmd, [args] {
            if (!args->request_rate.empty() && args->request_rate != "inf") {
              try {
                std::size_t used = 0;
                const double v = std::stod(args->request_rate, &used);
                if (used != args->request_rate.size() || !(v > 0)) throw UsageError("");
              } catch (const std::exception&) {
                throw UsageError("--request-rate: expected a rate > 0 or inf, got \"" +
                                 args->request_rate + "\"");
              }
            }
            return audit_command(*args);
          }};
}

}  // namespace kvsweep::orchestrator
