// What the console says about a cell: its label, its progress, its one-line summary.
#include "orchestrator/sweep/cell_text.h"

#include <cstdio>

#include "figures/report_model.h"
#include "figures/units.h"

namespace kvsweep::orchestrator {

std::string describe_treatment(const Treatment& t) {
  std::string text;
  for (const auto& [factor, level] : t.levels) {
    text += (text.empty() ? "" : ", ") + factor + "=" + level;
  }
  for (const auto& [path, value] : t.epp_settings) {
    text += (text.empty() ? "" : ", ") + path + "=" + value;
  }
  return text.empty() ? "(no target factor)" : text;
}

std::string cell_label(int ordinal, std::size_t cells, const std::string& arm, int repeat,
                       int repeats, int concurrency) {
  return "cell " + std::to_string(ordinal + 1) + "/" + std::to_string(cells) + " " +
         figures::repeat_label(arm, repeat, repeats) + " c=" + std::to_string(concurrency);
}

std::string describe_progress(const std::string& label, const driver::Progress& p) {
  char buffer[256];
  if (p.total > 0) {
    std::snprintf(buffer, sizeof buffer, "%s: %lld/%lld requests, %.1f req/s, p50 TTFT %s",
                  label.c_str(), static_cast<long long>(p.done), static_cast<long long>(p.total),
                  p.requests_per_s, (figures::format_ms(p.p50_ttft_ms) + " ms").c_str());
  } else {
    std::snprintf(buffer, sizeof buffer, "%s: %lld requests in %.0f s, %.1f req/s, p50 TTFT %s",
                  label.c_str(), static_cast<long long>(p.done), p.elapsed_s, p.requests_per_s,
                  (figures::format_ms(p.p50_ttft_ms) + " ms").c_str());
  }
  std::string text = buffer;
  if (p.failed > 0) text += ", " + std::to_string(p.failed) + " failed";
  return text;
}

std::string cell_summary(const figures::CellMetrics& m) {
  std::string text = std::to_string(m.ok) + " ok";
  if (m.failed > 0) text += ", " + std::to_string(m.failed) + " failed";
  if (m.ok > 0) {
    text += ", mean TTFT " + figures::format_ms(m.ttft_ms.mean) + " ms, ";
    if (m.total_token_throughput) {
      text += figures::format_si(*m.total_token_throughput) + " tok/s";
    } else {  // the server sent no usage: prompt tokens unknown, output tokens counted
      text += figures::format_si(m.output_throughput) + " output tok/s" +
              (m.output_tokens_estimated > 0 ? " (estimated)" : "");
    }
  }
  text += ", KV hit " + figures::format_percent(m.kv_hit_rate_server) +
          (m.kv_hit_rate_server ? "%" : "");
  if (m.validity.load_known && m.ok + m.failed > 0) {
    text += "; " + std::string(figures::verdict_name(m.validity.verdict));
  }
  return text;
}

std::vector<std::string> verdict_lines(const figures::CellMetrics& m) {
  std::vector<std::string> lines;
  if (m.validity.verdict != figures::CellVerdict::kValid) {
    for (const std::string& reason : m.validity.reasons) lines.push_back(reason);
  }
  // Whatever the verdict: too many failures, and the figures that decide nothing.
  if (const std::string failures = figures::failures_text(m.validity); !failures.empty()) {
    lines.push_back(failures);
  }
  for (const std::string& note : m.validity.notes) lines.push_back(note);
  return lines;
}

std::vector<std::string> first_failure_lines(const figures::CellMetrics& m) {
  std::vector<std::string> lines;
  for (const auto& [kind, count] : m.failed_by_kind) {
    const auto first = m.first_failure_by_kind.find(kind);
    std::string line = std::to_string(count) + " " + (kind.empty() ? "unknown" : kind);
    if (first != m.first_failure_by_kind.end()) {
      line += ", first: " + figures::failure_text(first->second.http_status, first->second.error);
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace kvsweep::orchestrator
