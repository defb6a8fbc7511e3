// Rendering serve's pages: view JSON to template data, the layout, the embedded templates.
#include "serve/page_render.h"

#include <cmath>

#include "figures/units.h"
#include "reports/report_view.h"
#include "reports/svg_chart.h"

namespace kvsweep::serve {

namespace mustache = kainjow::mustache;

mustache::data template_data(const nlohmann::ordered_json& view) {
  switch (view.type()) {
    case nlohmann::ordered_json::value_t::object: {
      mustache::data d{mustache::data::type::object};
      for (const auto& [key, value] : view.items()) d.set(key, template_data(value));
      return d;
    }
    case nlohmann::ordered_json::value_t::array: {
      mustache::data list{mustache::data::type::list};
      for (const auto& item : view) list.push_back(template_data(item));
      return list;
    }
    case nlohmann::ordered_json::value_t::string:
      // "" is false too, so {{#error}} ... {{/error}} shows nothing for no error.
      return view.get<std::string>().empty() ? mustache::data(false)
                                             : mustache::data(view.get<std::string>());
    case nlohmann::ordered_json::value_t::boolean:
      return mustache::data(view.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
      return mustache::data(view.dump());
    case nlohmann::ordered_json::value_t::number_float: {
      const double v = view.get<double>();
      return std::isfinite(v) ? mustache::data(figures::format_fixed(v, 2)) : mustache::data(false);
    }
    default:
      return mustache::data(false);
  }
}

std::string render_page(const std::string& page, const std::string& title, const std::string& nav,
                        const nlohmann::ordered_json& view, mustache::data data) {
  for (const auto& [key, value] : view.items()) data.set(key, template_data(value));
  data.set("page_title", title);
  data.set("csp", kPageContentSecurityPolicy);
  data.set("nav_" + nav, true);
  return reports::render_embedded("serve_" + page + ".html", data, reports::xml_escape);
}

}  // namespace kvsweep::serve
