// What `plan` says about a sweep's dataset: what is sent, what max_tokens a request asks for,
// and the generated stand-in for a file that cannot be shipped, with its measured statistics.
#pragma once

#include <string>
#include <vector>

#include "driver/datasets/dataset_options.h"
#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator {

// "8-12", "44", "mean 40 (sd 10, 1-80)": a length distribution as the scenario wrote it.
std::string length_text(const driver::LengthDistribution& length);

// What max_tokens a request asks for under dataset `d` when the run's load.max_tokens is
// `fallback` ("64", or "by factor"), as the driver decides it (a turn's own max_tokens, else
// the run's):
// "each turn's answer length in the dataset (its bytes / 4, at least 1)", "76 (the dataset's
// output_tokens)", "each row's max_tokens, else 64", "64".
std::string max_tokens_text(const driver::DatasetOptions& d, const std::string& fallback);

// "dataset: sharegpt scenarios/data/x.json, conversations of 16+ messages, the first 800"; for
// a file dataset with a stand-in, a second line naming the stand-in, whether the file is there
// (an absent file is replaced on --target sim and predict; a real target stops), and what the
// stand-in sends at the scenario's seed: requests and mean prompt and output tokens per request
// as the simulated fleet counts them (orchestrator/scenario/dataset_tokens.h).
std::vector<std::string> dataset_lines(const ScenarioSpec& spec);

}  // namespace kvsweep::orchestrator
