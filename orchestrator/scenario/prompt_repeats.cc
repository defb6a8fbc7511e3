// How many times an experiment sends one prompt: a dataset smaller than its cells repeats itself.
#include "orchestrator/scenario/prompt_repeats.h"

#include <map>

namespace kvsweep::orchestrator {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// What the cell sends over its workload; -1 when only its run can say (a duration bound).
std::int64_t cell_requests(const CellPlan& cell, const WorkloadSize& w) {
  if (cell.load.num_requests <= 0 || w.trace) return -1;
  return cell.load.num_requests + (w.warmup_replays_measured ? cell.load.warmup_requests : 0);
}

// How often the cell sends its workload's first prompt: a cell of unknown length sends it once.
std::int64_t first_prompt_sends(std::int64_t requests, std::int64_t prompts) {
  return requests > 0 ? ceil_div(requests, prompts) : 1;
}

std::string cell_list(const std::vector<int>& ordinals, const std::string& unit) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(ordinals.size(), 6);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (i ? ", " : "") + std::to_string(ordinals[i] + 1);
  }
  if (ordinals.size() > shown) out += ", ...";
  return unit + (ordinals.size() == 1 ? " " : "s ") + out;
}

// What makes the dataset hold `requests` distinct prompts.
std::string dataset_fix(const WorkloadSize& w, std::int64_t requests) {
  const std::string key = w.stand_in ? "load.dataset.stand_in." : "load.dataset.";
  if (w.kind == "synthetic-multiturn" && w.conversations > 0 && w.prompts > 0) {
    const std::int64_t needed = ceil_div(requests * w.conversations, w.prompts);
    return "raise " + key + "conversations from " + std::to_string(w.conversations) +
           " to at least " + std::to_string(needed);
  }
  if (w.kind == "shared-prefix") {
    return "raise " + key + "prompts_per_prefix or num_prefixes until the dataset holds " +
           std::to_string(requests) + " prompts";
  }
  return "lower load.num_requests to " + std::to_string(w.prompts) +
         " or send a dataset of at least " + std::to_string(requests) + " prompts";
}

}  // namespace

std::int64_t workload_prompts(const driver::Workload& workload) {
  std::int64_t prompts = 0;
  for (const auto& conversation : workload.conversations) {
    prompts += static_cast<std::int64_t>(conversation.user.size());
  }
  return prompts;
}

WorkloadSize workload_size(const driver::Workload& measured, bool warmup_replays_measured,
                           const std::string& kind, bool stand_in) {
  WorkloadSize w;
  w.prompts = workload_prompts(measured);
  w.conversations = static_cast<int>(measured.conversations.size());
  w.kind = kind;
  w.stand_in = stand_in;
  w.trace = !measured.arrival_s.empty();
  w.warmup_replays_measured = warmup_replays_measured;
  return w;
}

std::optional<PromptRepeats> prompt_repeats(const CellPlan& cell, const driver::Workload& measured,
                                            bool warmup_replays_measured) {
  CellPlan alone = cell;
  alone.workload = 0;
  alone.load.cache = CachePolicy::kCold;
  return experiment_repeats({alone}, {workload_size(measured, warmup_replays_measured, "", false)})
      .front();
}

std::vector<std::optional<PromptRepeats>> experiment_repeats(
    const std::vector<CellPlan>& cells, const std::vector<WorkloadSize>& workloads) {
  std::vector<std::optional<PromptRepeats>> out(cells.size());
  // Per workload, what each earlier cell sent that the servers' caches still hold.
  std::map<int, std::vector<std::int64_t>> held;
  int group = -1;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const CellPlan& cell = cells[i];
    // A new deployment's servers start afresh; a cold cell empties them before it starts.
    if (cell.deploy_group != group || cell.load.cache == CachePolicy::kCold) held.clear();
    group = cell.deploy_group;
    const WorkloadSize& w = workloads.at(static_cast<std::size_t>(cell.workload));
    const std::int64_t requests = cell_requests(cell, w);
    std::vector<std::int64_t>& earlier = held[cell.workload];
    if (w.prompts > 0) {
      PromptRepeats r;
      r.prompts = w.prompts;
      r.requests = requests;
      r.cache = cell.load.cache;
      r.sends = requests > 0 ? ceil_div(requests, w.prompts) : 0;
      r.earlier_cells = static_cast<int>(earlier.size());
      for (const std::int64_t e : earlier) r.sends += first_prompt_sends(e, w.prompts);
      // A cell of unknown length repeats nothing it can be told of unless an earlier one sent
      // its first prompt (the report counts what it sent).
      if (requests > 0 ? r.sends > 1 : r.earlier_cells > 0) {
        if (requests <= 0) r.sends += 1;
        out[i] = r;
      }
    }
    earlier.push_back(requests);
  }
  return out;
}

std::string repeats_text(const PromptRepeats& repeats) {
  std::string text = "sends each prompt up to " + std::to_string(repeats.sends) + " times: ";
  text += repeats.requests > 0 ? std::to_string(repeats.requests) + " requests"
                               : std::string("its requests");
  text += " over a dataset of " + std::to_string(repeats.prompts) + " prompts";
  if (repeats.earlier_cells > 0) {
    text += ", with what " + std::to_string(repeats.earlier_cells) + " earlier cell" +
            (repeats.earlier_cells == 1 ? "" : "s") + " sent on the cache kept " +
            cache_policy_name(repeats.cache);
  }
  return text;
}

std::vector<std::string> repeats_warnings(const std::vector<CellPlan>& cells,
                                          const std::vector<std::optional<PromptRepeats>>& repeats,
                                          const std::vector<WorkloadSize>& workloads, bool search) {
  // A cell repeats itself (its dataset is too small), or what earlier cells left (its cache).
  std::vector<int> alone, carried;
  std::optional<std::size_t> worst_alone, worst_carried;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    if (!repeats[i]) continue;
    const PromptRepeats& r = *repeats[i];
    if (r.requests > r.prompts) {
      alone.push_back(cells[i].ordinal);
      if (!worst_alone || r.requests * repeats[*worst_alone]->prompts >
                              repeats[*worst_alone]->requests * r.prompts) {
        worst_alone = i;
      }
    }
    if (r.earlier_cells > 0) {
      carried.push_back(cells[i].ordinal);
      if (!worst_carried || r.sends > repeats[*worst_carried]->sends) worst_carried = i;
    }
  }
  const std::string of = " of " + std::to_string(cells.size()) + (search ? " arms" : " cells");
  const std::string unit = search ? "arm" : "cell";
  std::vector<std::string> out;
  if (worst_alone) {
    const PromptRepeats& r = *repeats[*worst_alone];
    PromptRepeats own = r;
    own.sends = ceil_div(r.requests, r.prompts);
    own.earlier_cells = 0;
    const WorkloadSize& w = workloads.at(static_cast<std::size_t>(cells[*worst_alone].workload));
    out.push_back(std::to_string(alone.size()) + of + " send a prompt more than once within " +
                  (search ? "a probe" : "the cell") + " (" + unit + " " +
                  std::to_string(cells[*worst_alone].ordinal + 1) + " " + repeats_text(own) +
                  "): " + dataset_fix(w, r.requests));
  }
  if (worst_carried) {
    const PromptRepeats& r = *repeats[*worst_carried];
    out.push_back(std::to_string(carried.size()) + of + " (" + cell_list(carried, unit) +
                  ") re-send the prompts " + (search ? "earlier arms' probes" : "earlier cells") +
                  " sent, on a cache kept " + cache_policy_name(r.cache) + " (" + unit + " " +
                  std::to_string(cells[*worst_carried].ordinal + 1) + " " + repeats_text(r) +
                  "): every cell over one dataset starts at its first prompt; set load.cache: "
                  "cold so each cell starts from empty caches");
  }
  if (search && !cells.empty() && cells.front().load.cache != CachePolicy::kCold) {
    out.push_back(std::string("each probe of an arm re-sends the prompts its earlier probes ") +
                  "sent, on a cache kept " + cache_policy_name(cells.front().load.cache) +
                  ": set load.cache: cold so each probe starts from empty caches");
  }
  return out;
}

}  // namespace kvsweep::orchestrator
