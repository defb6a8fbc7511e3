// How many times a cell sends one prompt: a dataset smaller than the cell repeats itself, and a
// cache an earlier cell left holds what it sent.
#include "orchestrator/scenario/prompt_repeats.h"

#include <algorithm>
#include <map>

#include "driver/datasets/length_distribution.h"

namespace kvsweep::orchestrator {
namespace {

// Whole requests a cell sends over its workload's prompts (with a warm-up that replays them);
// 0 when unknown before it runs (bounded by its duration only) or when its workload is a trace.
std::int64_t cell_requests(const CellPlan& cell, const WorkloadPrompts& w) {
  if (cell.load.num_requests <= 0 || w.measured == nullptr || !w.measured->arrival_s.empty()) {
    return 0;
  }
  return cell.load.num_requests + (w.warmup_replays_measured ? cell.load.warmup_requests : 0);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool multi_turn_kind(const std::string& kind) {
  return kind == "synthetic-multiturn" || kind == "sharegpt" || kind == "chat-threads";
}

// Conversations that hold `needed` prompts at the workload's turns per conversation; drawn
// turn counts get 5% more, as another count of conversations draws other turns.
std::int64_t conversations_for(const WorkloadPrompts& w, std::int64_t needed,
                               std::int64_t prompts) {
  const auto have = static_cast<std::int64_t>(w.measured->conversations.size());
  std::int64_t n = ceil_div(needed * have, prompts);
  if (w.dataset.kind == "synthetic-multiturn" && !driver::is_constant(w.dataset.turns)) {
    n = ceil_div(n * 105, 100);
  }
  return n;
}

// The change that makes a workload of `prompts` hold `needed`, the requests of its largest cell.
std::string sizing_fix(const CellPlan& cell, const WorkloadPrompts& w, std::int64_t needed,
                       std::int64_t prompts, const RehearsalCuts& cuts) {
  const driver::DatasetOptions& d = w.dataset;
  const std::string& key = w.dataset_key;
  std::string fix;
  if (cuts.conversations > 0 && multi_turn_kind(d.kind)) {
    fix = "raise target.sim.conversations from " + std::to_string(cuts.conversations) + " to " +
          std::to_string(conversations_for(w, needed, prompts));
  } else if (d.kind == "synthetic-multiturn") {
    fix = "raise " + key + ".conversations from " + std::to_string(d.conversations) + " to " +
          std::to_string(conversations_for(w, needed, prompts));
  } else if (d.kind == "random") {
    fix = "raise " + key + ".num_prompts from " + std::to_string(d.num_prompts) + " to " +
          std::to_string(needed) + " (or leave it out: the cell then sizes it)";
  } else if (d.kind == "shared-prefix") {
    fix = "raise " + key + ".num_prefixes from " + std::to_string(d.num_prefixes) + " to " +
          std::to_string(ceil_div(needed, std::max(1, d.prompts_per_prefix)));
  } else if (d.max_conversations > 0 &&
             static_cast<std::int64_t>(w.measured->conversations.size()) >= d.max_conversations) {
    // The cut binds: the file may hold more.
    fix = "raise " + key + ".max_conversations from " + std::to_string(d.max_conversations) +
          " to " + std::to_string(conversations_for(w, needed, prompts)) +
          " if the file holds that many";
  } else {
    fix = "send a file of at least " + std::to_string(needed) + " prompts";
  }
  const std::int64_t warmup = w.warmup_replays_measured ? cell.load.warmup_requests : 0;
  if (prompts - warmup > 0) {
    const bool cut = cuts.num_requests > 0 && cell.load.num_requests == cuts.num_requests;
    fix += ", or lower " + std::string(cut ? "target.sim.num_requests" : "load.num_requests") +
           " to " + std::to_string(prompts - warmup);
  }
  return fix;
}

// "every cell sends", "3 of 9 cells send": `verb` in its plural form, as "send".
std::string cells_text(int n, std::size_t total, const std::string& verb) {
  if (static_cast<std::size_t>(n) == total) {
    return (total == 1 ? "the cell " : "every cell ") + verb + "s";
  }
  return std::to_string(n) + " of " + std::to_string(total) + " cells " + verb +
         (n == 1 ? "s" : "");
}

// Cells that send a prompt more than once themselves, one line per workload.
void within_cells(const std::vector<CellPlan>& cells, const std::vector<std::string>& labels,
                  const std::vector<WorkloadPrompts>& workloads, const RehearsalCuts& cuts,
                  std::vector<std::string>& lines) {
  struct Group {
    int cells = 0;
    std::size_t worst = 0;
    PromptRepeats repeats;
    std::int64_t needed = 0;
  };
  std::map<int, Group> groups;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const WorkloadPrompts& w = workloads.at(static_cast<std::size_t>(cells[i].workload));
    const std::optional<PromptRepeats> r =
        prompt_repeats(cells[i], *w.measured, w.warmup_replays_measured);
    if (!r) continue;
    Group& g = groups[cells[i].workload];
    if (g.cells++ == 0 || r->sends > g.repeats.sends) {
      g.worst = i;
      g.repeats = *r;
    }
    g.needed = std::max(g.needed, r->requests);
  }
  for (const auto& [index, g] : groups) {
    const CellPlan& cell = cells[g.worst];
    const WorkloadPrompts& w = workloads.at(static_cast<std::size_t>(index));
    lines.push_back(cells_text(g.cells, cells.size(), "send") +
                    " a prompt more than once, so the prefix cache finds what the same cell "
                    "sent before, whatever the strategy: " +
                    labels.at(g.worst) + " " + repeats_text(g.repeats) + "; " +
                    sizing_fix(cell, w, g.needed, g.repeats.prompts, cuts));
  }
}

// Cells whose as-is or warm cache holds what earlier cells of their deployment sent.
void after_earlier_cells(const std::vector<CellPlan>& cells, const std::vector<std::string>& labels,
                         const std::vector<WorkloadPrompts>& workloads,
                         std::vector<std::string>& lines) {
  int count = 0;
  std::size_t first = 0;
  std::int64_t first_resent = 0;
  std::int64_t first_requests = 0;
  int group = -1;
  std::map<int, std::int64_t> sent;  // workload -> the most requests a cell of it sent
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const CellPlan& cell = cells[i];
    const WorkloadPrompts& w = workloads.at(static_cast<std::size_t>(cell.workload));
    if (cell.deploy_group != group) {  // a new deployment starts from empty caches
      sent.clear();
      group = cell.deploy_group;
    }
    if (cell.load.cache == CachePolicy::kCold) sent.clear();
    const std::int64_t requests = cell_requests(cell, w);
    if (requests == 0) continue;
    const auto before = sent.find(cell.workload);
    if (before != sent.end() && cell.load.cache != CachePolicy::kCold) {
      if (count++ == 0) {
        first = i;
        first_requests = requests;
        first_resent = std::min({requests, before->second, workload_prompts(*w.measured)});
      }
    }
    sent[cell.workload] = std::max(before == sent.end() ? 0 : before->second, requests);
  }
  if (count == 0) return;
  const CachePolicy policy = cells[first].load.cache;
  lines.push_back(cells_text(count, cells.size(), "start") +
                  " from a cache (load.cache: " + cache_policy_name(policy) +
                  ") holding what the cells before them on the same deployment sent, and every "
                  "cell starts at the workload's first prompt, so their KV hit counts it whatever "
                  "the strategy: " +
                  labels.at(first) + " resends up to " + std::to_string(first_resent) + " of its " +
                  std::to_string(first_requests) + " requests' prompts" +
                  (policy == CachePolicy::kWarm ? " (its warm pre-pass aside)" : "") +
                  "; set load.cache: cold to start every cell from empty caches");
}

}  // namespace

std::int64_t workload_prompts(const driver::Workload& workload) {
  std::int64_t prompts = 0;
  for (const auto& conversation : workload.conversations) {
    prompts += static_cast<std::int64_t>(conversation.user.size());
  }
  return prompts;
}

std::optional<PromptRepeats> prompt_repeats(const CellPlan& cell, const driver::Workload& measured,
                                            bool warmup_replays_measured) {
  if (cell.load.num_requests <= 0 || !measured.arrival_s.empty()) return std::nullopt;
  PromptRepeats repeats;
  repeats.prompts = workload_prompts(measured);
  repeats.requests =
      cell.load.num_requests + (warmup_replays_measured ? cell.load.warmup_requests : 0);
  if (repeats.prompts <= 0 || repeats.requests <= repeats.prompts) return std::nullopt;
  repeats.sends = (repeats.requests + repeats.prompts - 1) / repeats.prompts;
  return repeats;
}

std::string repeats_text(const PromptRepeats& repeats) {
  return "sends each prompt up to " + std::to_string(repeats.sends) +
         " times: " + std::to_string(repeats.requests) + " requests over a dataset of " +
         std::to_string(repeats.prompts) + " prompts";
}

std::vector<std::string> sweep_repeat_warnings(const std::vector<CellPlan>& cells,
                                               const std::vector<std::string>& labels,
                                               const std::vector<WorkloadPrompts>& workloads,
                                               const RehearsalCuts& cuts) {
  std::vector<std::string> lines;
  within_cells(cells, labels, workloads, cuts, lines);
  after_earlier_cells(cells, labels, workloads, lines);
  return lines;
}

}  // namespace kvsweep::orchestrator
