// Timing and capacity profiles of a simulated replica (one GPU/model pair each), read from YAML.
#include "sim/engine/profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/spellcheck.h"
#include "sim/engine/profiles_embedded.h"

namespace kvsweep::sim {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> kKeys = {"name",
                                                 "source",
                                                 "base_us",
                                                 "per_prefill_token_us",
                                                 "per_decode_token_us",
                                                 "per_kv_usage_us",
                                                 "max_num_seqs",
                                                 "max_num_batched_tokens",
                                                 "num_gpu_blocks",
                                                 "block_size",
                                                 "max_model_len",
                                                 "default_max_tokens",
                                                 "enable_prefix_caching"};
  return kKeys;
}

std::string where(const std::string& origin, const YAML::Mark& mark) {
  return origin + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// Collects every error of one file, each located, as the scenario loader does.
class ProfileReader {
 public:
  ProfileReader(const YAML::Node& root, std::string origin)
      : root_(root), origin_(std::move(origin)) {}

  void number(const char* key, double* out, bool required) {
    const YAML::Node node = root_[key];
    if (!node) return missing(key, required);
    try {
      const double value = node.as<double>();
      if (value < 0) throw YAML::Exception(node.Mark(), "negative");
      *out = value;
    } catch (const YAML::Exception&) {
      fail(node.Mark(), key, "expected a number >= 0, got \"" + scalar(node) + "\"");
    }
  }

  void integer(const char* key, int* out, int minimum) {
    const YAML::Node node = root_[key];
    if (!node) return;
    try {
      const int value = node.as<int>();
      if (value < minimum) throw YAML::Exception(node.Mark(), "small");
      *out = value;
    } catch (const YAML::Exception&) {
      fail(node.Mark(), key,
           "expected an integer >= " + std::to_string(minimum) + ", got \"" + scalar(node) + "\"");
    }
  }

  void boolean(const char* key, bool* out) {
    const YAML::Node node = root_[key];
    if (!node) return;
    // yaml-cpp reads YAML 1.1 spellings (true/false, yes/no, on/off) as bool; nothing else.
    try {
      if (!node.IsScalar()) throw YAML::Exception(node.Mark(), "not a scalar");
      *out = node.as<bool>();
    } catch (const YAML::Exception&) {
      fail(node.Mark(), key, "expected true or false, got \"" + scalar(node) + "\"");
    }
  }

  void text(const char* key, std::string* out, bool required) {
    const YAML::Node node = root_[key];
    if (!node) return missing(key, required);
    if (!node.IsScalar()) return fail(node.Mark(), key, "expected a string");
    *out = node.as<std::string>();
  }

  void unknown_keys() {
    for (const auto& entry : root_) {
      const std::string key = entry.first.as<std::string>();
      if (std::find(known_keys().begin(), known_keys().end(), key) != known_keys().end()) continue;
      std::string message = "unknown key";
      if (auto near = closest_word(key, known_keys())) message += "; did you mean '" + *near + "'?";
      fail(entry.first.Mark(), key, message);
    }
  }

  const std::string& errors() const { return errors_; }

 private:
  static std::string scalar(const YAML::Node& node) {
    return node.IsScalar() ? node.Scalar() : std::string("<not a scalar>");
  }
  void missing(const char* key, bool required) {
    if (required) fail(root_.Mark(), key, "required");
  }
  void fail(const YAML::Mark& mark, const std::string& key, const std::string& message) {
    // Appended piece by piece: GCC 12 at -O3 (Release) flags `const char* + std::string&&` with
    // a false -Wrestrict (GCC bug 105329), which -Werror turns into a failed build.
    if (!errors_.empty()) errors_ += '\n';
    errors_ += where(origin_, mark);
    errors_ += ": " + key + ": " + message;
  }

  const YAML::Node& root_;
  std::string origin_;
  std::string errors_;
};

struct ProfileFile {
  std::string origin;  // path, or "<embedded>/demo.yaml"
  std::string text;
};

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

// The profile name a file declares, without validating the rest; empty if unreadable.
std::string declared_name(const ProfileFile& file) {
  try {
    const YAML::Node root = YAML::Load(file.text);
    if (root.IsMap() && root["name"] && root["name"].IsScalar()) {
      return root["name"].as<std::string>();
    }
  } catch (const YAML::Exception&) {
  }
  return fs::path(file.origin).stem().string();
}

}  // namespace

std::optional<TimingProfile> parse_profile(std::string_view yaml_text, const std::string& origin,
                                           std::string* error) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    if (error) *error = where(origin, e.mark) + ": " + e.msg;
    return std::nullopt;
  }
  if (!root.IsMap()) {
    if (error) *error = origin + ":1:1: a profile is a mapping of keys to values";
    return std::nullopt;
  }
  TimingProfile profile;
  ProfileReader reader(root, origin);
  reader.text("name", &profile.name, true);
  reader.text("source", &profile.source, false);
  reader.number("base_us", &profile.base_us, true);
  reader.number("per_prefill_token_us", &profile.per_prefill_token_us, true);
  reader.number("per_decode_token_us", &profile.per_decode_token_us, true);
  reader.number("per_kv_usage_us", &profile.per_kv_usage_us, false);
  reader.integer("max_num_seqs", &profile.max_num_seqs, 1);
  reader.integer("max_num_batched_tokens", &profile.max_num_batched_tokens, 1);
  reader.integer("num_gpu_blocks", &profile.num_gpu_blocks, 1);
  reader.integer("block_size", &profile.block_size, 1);
  reader.integer("max_model_len", &profile.max_model_len, 2);
  reader.integer("default_max_tokens", &profile.default_max_tokens, 1);
  reader.boolean("enable_prefix_caching", &profile.enable_prefix_caching);
  reader.unknown_keys();
  if (!reader.errors().empty()) {
    if (error) *error = reader.errors();
    return std::nullopt;
  }
  return profile;
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
  for (const ProfileFile& file : files_in(with_env(dirs))) {
    if (declared_name(file) != name) continue;
    return parse_profile(file.text, file.origin, error);
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
    const std::string name = declared_name(file);
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

}  // namespace kvsweep::sim
