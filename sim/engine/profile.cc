// Timing and capacity profiles of a simulated replica (one GPU/model pair each), read from YAML.
#include "sim/engine/profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/yaml_reader.h"
#include "sim/engine/profiles_embedded.h"

namespace kvsweep::sim {
namespace {

namespace fs = std::filesystem;

struct ProfileFile {
  std::string origin;  // path, or "<embedded>/demo.yaml"
  std::string text;
};

// One profile file, parsed once: the name it declares and the profile or why it is invalid.
struct LoadedProfile {
  std::string name;  // `name:`, or the file's stem when the file does not say (or is unreadable)
  std::optional<TimingProfile> profile;
  std::string error;  // every located error of the file, one after the other
};

void read_fields(YamlMapReader& reader, TimingProfile* profile) {
  reader.require("name");
  reader.read_string("name", &profile->name);
  reader.read_string("source", &profile->source);
  const std::string non_negative = "a number >= 0";
  for (const char* key : {"base_us", "per_prefill_token_us", "per_decode_token_us"}) {
    reader.require(key);
  }
  reader.read_double("base_us", &profile->base_us, 0, true, non_negative);
  reader.read_double("per_prefill_token_us", &profile->per_prefill_token_us, 0, true, non_negative);
  reader.read_double("per_decode_token_us", &profile->per_decode_token_us, 0, true, non_negative);
  reader.read_double("per_kv_usage_us", &profile->per_kv_usage_us, 0, true, non_negative);
  reader.read_double("per_context_token_us", &profile->per_context_token_us, 0, true, non_negative);
  reader.read_int("max_num_seqs", &profile->max_num_seqs, 1);
  reader.read_int("max_num_batched_tokens", &profile->max_num_batched_tokens, 1);
  reader.read_int("num_gpu_blocks", &profile->num_gpu_blocks, 1);
  reader.read_int("block_size", &profile->block_size, 1);
  reader.read_int("max_model_len", &profile->max_model_len, 2);
  reader.read_int("default_max_tokens", &profile->default_max_tokens, 1);
  reader.read_bool("enable_prefix_caching", &profile->enable_prefix_caching);
  std::string engine = engine_kind_name(profile->engine);
  reader.read_choice("engine", &engine,
                     {engine_kind_name(EngineKind::kPaged), engine_kind_name(EngineKind::kSlot)});
  profile->engine =
      engine == engine_kind_name(EngineKind::kSlot) ? EngineKind::kSlot : EngineKind::kPaged;
  reader.finish();
}

LoadedProfile load(std::string_view yaml_text, const std::string& origin) {
  LoadedProfile loaded;
  loaded.name = fs::path(origin).stem().string();
  const std::string text(yaml_text);
  std::vector<YamlError> errors;
  YamlErrors sink(origin, text, &errors);
  const std::optional<YAML::Node> root = load_yaml_document(text, sink);
  if (root && root->IsMap()) {
    // A missing key gives an invalid node whose IsScalar() throws: test it first.
    const YAML::Node name = (*root)["name"];
    if (name && name.IsScalar()) loaded.name = name.Scalar();
  }
  if (root && !root->IsMap()) {
    sink.add(root->Mark(), "",
             "a profile is a mapping of keys to values, got " + describe_node(*root));
  }
  TimingProfile profile;
  if (root && root->IsMap()) {
    YamlMapReader reader(*root, "", sink);
    read_fields(reader, &profile);
  }
  for (const YamlError& e : errors) loaded.error += (loaded.error.empty() ? "" : "\n") + e.text;
  if (errors.empty()) loaded.profile = std::move(profile);
  return loaded;
}

std::vector<ProfileFile> files_in(const std::vector<std::string>& dirs) {
  std::vector<ProfileFile> files;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const auto ext = entry.path().extension();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
        paths.push_back(entry.path());
      }
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& path : paths) {
      std::ifstream in(path);
      std::ostringstream text;
      text << in.rdbuf();
      files.push_back({path.string(), text.str()});
    }
  }
  for (const EmbeddedProfileFile& file : embedded_profile_files()) {
    files.push_back({"<embedded>/" + std::string(file.file_name), std::string(file.text)});
  }
  return files;
}

std::vector<std::string> with_env(std::vector<std::string> dirs) {
  for (std::string& dir : profile_path_from_env()) dirs.push_back(std::move(dir));
  return dirs;
}

}  // namespace

const char* engine_kind_name(EngineKind kind) {
  return kind == EngineKind::kSlot ? "slot" : "paged";
}

std::optional<TimingProfile> parse_profile(std::string_view yaml_text, const std::string& origin,
                                           std::string* error) {
  LoadedProfile loaded = load(yaml_text, origin);
  if (error) *error = loaded.error;
  return std::move(loaded.profile);
}

std::vector<std::string> profile_path_from_env() {
  std::vector<std::string> dirs;
  const char* value = std::getenv("KVSWEEP_PROFILE_PATH");
  if (!value) return dirs;
  std::string_view rest = value;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty()) dirs.emplace_back(dir);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return dirs;
}

std::optional<TimingProfile> find_profile(const std::string& name,
                                          const std::vector<std::string>& dirs,
                                          std::string* error) {
  // Each file is parsed once, whether it only tells its name or is the one asked for.
  for (const ProfileFile& file : files_in(with_env(dirs))) {
    LoadedProfile loaded = load(file.text, file.origin);
    if (loaded.name != name) continue;
    if (error) *error = loaded.error;
    return std::move(loaded.profile);
  }
  return std::nullopt;
}

std::optional<TimingProfile> find_profile(const std::string& name) {
  return find_profile(name, {}, nullptr);
}

std::vector<std::string> profile_names(const std::vector<std::string>& dirs) {
  std::vector<std::string> shipped;
  std::vector<std::string> user;
  for (const ProfileFile& file : files_in(with_env(dirs))) {
    const std::string name = load(file.text, file.origin).name;
    if (name.empty()) continue;
    const bool embedded = file.origin.rfind("<embedded>/", 0) == 0;
    auto& list = embedded ? shipped : user;
    if (std::find(shipped.begin(), shipped.end(), name) == shipped.end() &&
        std::find(user.begin(), user.end(), name) == user.end()) {
      list.push_back(name);
    }
  }
  // "demo" first: it is what the quickstart and most messages mention.
  std::stable_partition(shipped.begin(), shipped.end(), [](const auto& n) { return n == "demo"; });
  for (std::string& name : user) shipped.push_back(std::move(name));
  return shipped;
}

std::vector<std::string> profile_names() { return profile_names({}); }

namespace {

// The shortest text that reads back as the same double.
std::string shortest(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

// A YAML double-quoted scalar, escaped by yaml-cpp's emitter: the name and source are free text.
std::string quoted(const std::string& text) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << text;
  return out.c_str();
}

}  // namespace

std::string profile_to_yaml(const TimingProfile& p, const std::string& comment) {
  std::ostringstream out;
  if (!comment.empty()) out << "# " << comment << "\n";
  out << "name: " << quoted(p.name) << "\n"
      << "source: " << quoted(p.source) << "\n"
      << "base_us: " << shortest(p.base_us) << "\n"
      << "per_prefill_token_us: " << shortest(p.per_prefill_token_us) << "\n"
      << "per_decode_token_us: " << shortest(p.per_decode_token_us) << "\n"
      << "per_kv_usage_us: " << shortest(p.per_kv_usage_us) << "\n"
      << "per_context_token_us: " << shortest(p.per_context_token_us) << "\n"
      << "max_num_seqs: " << p.max_num_seqs << "\n"
      << "max_num_batched_tokens: " << p.max_num_batched_tokens << "\n"
      << "num_gpu_blocks: " << p.num_gpu_blocks << "\n"
      << "block_size: " << p.block_size << "\n"
      << "max_model_len: " << p.max_model_len << "\n"
      << "default_max_tokens: " << p.default_max_tokens << "\n"
      << "enable_prefix_caching: " << (p.enable_prefix_caching ? "true" : "false") << "\n"
      << "engine: " << engine_kind_name(p.engine) << "\n";
  return out.str();
}

}  // namespace kvsweep::sim
