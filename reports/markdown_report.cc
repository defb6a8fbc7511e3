// The markdown report: the report view rendered through templates/report.md.mustache. Every
// number is formatted in report_view.cc (units.cc), none in the template.
#include "reports/markdown_report.h"

#include "reports/report_view.h"

namespace kvsweep::reports {
namespace {

// The template closes sections that may be false at the end of a content line rather than
// on a line of their own: kainjow keeps the newline after a standalone closing tag of a
// skipped section, which would put a blank line inside a markdown table.
constexpr const char* kTemplateName = "report.md";

// A user string inside a table cell: `|` would end the cell and a newline the row. Nothing
// else is escaped: names and errors should read as the user wrote them.
std::string table_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_markdown(const ReportModel& model) {
  // Markdown, not HTML: values reach the output exactly as report_view formatted them.
  return render_embedded(kTemplateName, report_view(model, table_cell), nullptr);
}

std::string render_markdown(const store::Store& store, std::int64_t experiment_id) {
  return render_markdown(build_report_model(store, experiment_id));
}

}  // namespace kvsweep::reports
