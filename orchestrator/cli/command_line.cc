// Parsing kvsweep's command line: CLI11's errors as kvsweep's, "did you mean" for subcommands.
#include "orchestrator/cli/command_line.h"

#include <algorithm>

#include "common/join.h"
#include "common/spellcheck.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {
namespace {

// An option named `word` on `level` or, since subcommands fall through, on a parent.
const CLI::Option* find_option(const CLI::App* level, const std::string& word) {
  for (; level != nullptr; level = level->get_parent()) {
    if (const CLI::Option* option = level->get_option_no_throw(word)) return option;
  }
  return nullptr;
}

std::vector<std::string> subcommand_names(const CLI::App& level) {
  std::vector<std::string> names;
  for (const CLI::App* sub : level.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// "run ", "sim ": the subcommands chosen on the way to `level`, for messages.
std::string path_of(const CLI::App* level) {
  std::string path;
  for (; level != nullptr && level->get_parent() != nullptr; level = level->get_parent()) {
    path = level->get_name() + " " + path;
  }
  return path;
}

// How far the words get: the deepest subcommand they choose, and the first word that stands
// where a subcommand must and names none.
struct Walk {
  const CLI::App* level = nullptr;
  std::optional<std::string> unknown;
};

Walk walk(const CLI::App& app, const std::vector<std::string>& args) {
  Walk w{&app, std::nullopt};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-') {
      const CLI::Option* option = find_option(w.level, word);
      const bool takes_value = option != nullptr && option->get_type_size_max() > 0;
      if (takes_value && word.find('=') == std::string::npos) ++i;
      continue;
    }
    const auto names = subcommand_names(*w.level);
    if (names.empty()) break;  // the rest are a leaf subcommand's arguments
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      w.unknown = word;
      break;
    }
    w.level = w.level->get_subcommand(word);
  }
  return w;
}

}  // namespace

std::optional<std::string> unknown_subcommand(const CLI::App& app,
                                              const std::vector<std::string>& args) {
  const Walk w = walk(app, args);
  if (!w.unknown) return std::nullopt;
  const std::string path = path_of(w.level);
  const std::string message = "unknown command '" + path + *w.unknown + "'";
  const auto names = subcommand_names(*w.level);
  if (const auto near = closest_word(*w.unknown, names)) {
    return message + "; did you mean '" + path + *near + "'?";
  }
  return message + " (commands: " + join(names) + ")";
}

std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(e);  // --help, --version: printed on stdout
    }
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (const auto unknown = unknown_subcommand(app, args)) {
      print_error(*unknown);
    } else {
      print_error(std::string(e.what()) + " (see: kvsweep " + path_of(walk(app, args).level) +
                  "--help)");
    }
    return kExitUsage;
  }
}

}  // namespace kvsweep::orchestrator
