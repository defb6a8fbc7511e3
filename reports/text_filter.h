// How a renderer makes a user string safe for its format before it enters template data; shared
// by the report's view (report_view.h) and the sections it composes (capacity_view.h).
#pragma once

#include <functional>
#include <string>

namespace kvsweep::reports {

// Applied to every user string (names, errors, setup values) before it enters the data:
// markdown escapes HTML and its own syntax (markdown_report.cc); HTML leaves it to the
// template's HTML escaping.
using TextFilter = std::function<std::string(const std::string&)>;

}  // namespace kvsweep::reports
