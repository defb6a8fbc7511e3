// Mustache templates from templates/, compiled into the binary at build time.
#pragma once

#include <optional>
#include <string_view>

namespace kvsweep::reports {

// name is the file name without ".mustache": "report.md" (a script keeps its name: "serve.js").
// nullopt when there is no such template. The text lives for the whole program.
std::optional<std::string_view> embedded_template(std::string_view name);

}  // namespace kvsweep::reports
