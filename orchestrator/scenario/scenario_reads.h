// The scenario loader's reads on top of common/yaml_reader.h: the driver-typed ones (a length
// distribution), the `load:`, `target:`, `factors:`, `slo:` and `search:` sections' entry points,
// the fields a factor level is read by. Shared by the scenario loader's parts and the cell
// resolver.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "common/join.h"
#include "common/spellcheck.h"
#include "common/yaml_reader.h"
#include "driver/datasets/dataset_options.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/target_kind.h"

namespace kvsweep::orchestrator {

// A length: a number in [min_value, max_value], or {mean, stddev, min, max} (GuideLLM's form).
void read_length(YamlMapReader& reader, const std::string& key, driver::LengthDistribution* out,
                 int min_value, int max_value = std::numeric_limits<int>::max());

// The `load:` section (load_section_loader.cc) into spec.load; marks under load.marks().
void read_load(YamlMapReader& load, ScenarioSpec& spec, YamlErrors& sink);

// A server's base URL, in the driver's one normal form: "http://h:8000/v1/" is "http://h:8000".
void read_base_url(YamlMapReader& reader, const std::string& key, std::string* out,
                   YamlErrors& sink);

// The `factors:` section (factor_section_loader.cc): every factor, its levels and what each
// sets, its phase; `kind` is the scenario's target kind (nullptr when target.kind is unknown).
void read_factors(YamlMapReader& factors, ScenarioSpec& spec, const TargetKinds& kinds,
                  YamlErrors& sink);

// The `target:` section (target_section_loader.cc): target.kind one of `kinds`, then every key
// that kind reads.
void read_target(YamlMapReader& target, ScenarioSpec& spec, const TargetKinds& kinds,
                 YamlErrors& sink);

// Bounds of a scenario's numbers (docs/reliability.md, "Hostile input files"): each far beyond any
// sensible value and far short of where one overflows, exhausts memory or loses its precision (the
// issue's slo.resamples 2147483647 ran out of memory, search.max_probes 2147483647 asked the
// space reserve for 678 GB, cost 1e308 printed "$inf"). Refused at load, with file and line.
inline constexpr double kMinRate = 0.001;       // requests/s: one in 17 minutes
inline constexpr double kMaxRate = 1'000'000;   // requests/s
inline constexpr double kMaxMs = 604'800'000;   // a week in ms: SLO thresholds, delays, graces
inline constexpr int kMaxResamples = 100'000;   // bootstrap resamples (1,000 is plenty)
inline constexpr int kMaxProbes = 1'000;        // search.max_probes, per arm
inline constexpr int kMaxTries = 100;           // search.max_tries
inline constexpr double kMaxMinProbeS = 3'600;  // search.min_probe: an hour of arrivals a probe
// A request rate is probed on a grid of three significant digits, up to 1% apart: a step
// (growth, or 1 + precision) under 1% can round back to the load it left and probe it again.
inline constexpr double kMinStepFraction = 0.01;
inline constexpr double kMaxGrowth = 100;
inline constexpr double kMaxUsdPerGpuHour = 10'000;
inline constexpr double kMaxGpus = 1'000'000;
inline constexpr double kMaxBurstiness = 100;  // the arrival gaps' gamma shape
inline constexpr double kMaxTemperature = 100;
inline constexpr int kMaxThreads = 1'024;   // load.threads
inline constexpr int kMaxWarmPasses = 100;  // load.warm_passes
inline constexpr int kMaxRetries = 100;     // target.timeouts.retries
inline constexpr int kMaxHealthFailures = 1'000;
inline constexpr std::uint64_t kMaxSeed = 9'223'372'036'854'775'807;  // what SQLite stores

// The capacity search's sections (search_section_loader.cc, common/search_spec.h).
// `slo:` into spec.slo: each pNN_<metric>_ms key and `good` one requirement, in the order
// written; attainment, confidence, resamples. Marks under slo.marks().
void read_slo(YamlMapReader& slo, ScenarioSpec& spec, YamlErrors& sink);

// `search:` into spec.search. Read before `factors:`, whose concurrency factor a search of
// concurrency replaces.
void read_search(YamlMapReader& search, ScenarioSpec& spec, YamlErrors& sink);

// An EPP config file is a few kilobytes; a megabyte is not one (a scenario's epp: files, and
// `sim serve`/`proxy --epp-config`).
inline constexpr std::uintmax_t kMaxEppFileBytes = 1 << 20;

// `epp:` (epp_section_loader.cc): EndpointPickerConfigs by name, each a file (relative to the
// scenario) or written inline, into spec.epp_configs. Read before `factors:`, whose strategy
// levels name them.
void read_epp_configs(const YAML::Node& section, ScenarioSpec& spec, YamlErrors& sink);

// A strategy level written `{epp: FILE}`: the config read and named after the file's stem
// ("configs/queue-only.yaml" is "queue-only"), which is the level's label; "" after an error.
std::string read_epp_level(const YAML::Node& level, const std::string& field, ScenarioSpec& spec,
                           YamlErrors& sink);

// `target.cost` (every kind) into `cost`: usd_per_gpu_hour and gpus, both required.
void read_cost(YamlMapReader& target, CostSpec& cost, YamlErrors& sink);

// The rules between search, slo, factors and load, once every section is read; then the
// factor the search varies (concurrency or load.request_rate) is added with the one level
// search.low, so the plan expands (kvsweep plan shows the arms at the first load).
void check_search(const YAML::Node& root, ScenarioSpec& spec, YamlErrors& sink);

}  // namespace kvsweep::orchestrator
