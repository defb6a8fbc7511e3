// The markdown report: the report view rendered through templates/report.md.mustache. Every
// number is formatted in report_view.cc (units.cc), none in the template.
#include "reports/markdown_report.h"

#include "reports/report_view.h"

namespace kvsweep::reports {
namespace {

// The template closes sections that may be false at the end of a content line rather than
// on a line of their own: kainjow keeps the newline after a standalone closing tag of a
// skipped section, which would put a blank line inside a markdown table.
constexpr const char* kMarkdownTemplateName = "report.md";

// A user string (a name, a label, an error) as markdown that renders it as written and can
// do nothing else, since GitHub and dashboards render the report: `<`, `>` and `&` become
// entities (no raw HTML, no <!-- comment swallowing the rest, no autolink), `[` and `]` are
// escaped (no link, no remote image), `\` too (else a user's `\[` would undo ours); `|`
// would end a table cell and a newline the row. Backticks stay: a code span renders its
// text literally.
std::string markdown_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '|':
      case '[':
      case ']':
      case '\\':
        out += '\\';
        out += c;
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_markdown(const figures::ReportModel& model) {
  // Markdown, not HTML: values reach the output exactly as report_view formatted them.
  return render_embedded(kMarkdownTemplateName, report_view(model, markdown_text), nullptr);
}

std::string render_markdown(const store::StoreReader& store, std::int64_t experiment_id) {
  return render_markdown(figures::build_report_model(store, experiment_id));
}

}  // namespace kvsweep::reports
