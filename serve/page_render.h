// Pages of kvsweep serve: a view (the JSON its API route answers, plus charts) rendered
// through a template of templates/ inside the common page layout.
#pragma once

#include <kainjow/mustache.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace kvsweep::serve {

// The view as template data: objects and arrays as they are, strings as strings (escaped by
// the template's {{ }}), integers as digits, other numbers with two decimals, true as true,
// false, null and "" as false (a {{value}} of null renders nothing, {{^value}} shows what
// replaces it).
kainjow::mustache::data template_data(const nlohmann::ordered_json& view);

// Renders templates/serve_<page>.html.mustache with `view` as its data, inside the layout
// (serve_header.html / serve_footer.html partials: title, navigation with `nav` marked
// current, the page's CSP). Throws std::logic_error for a template that is not embedded or
// does not parse: a build error, not a request's.
// `base` is data the view's keys are added to (the HTML report's, on the experiment page).
std::string render_page(const std::string& page, const std::string& title, const std::string& nav,
                        const nlohmann::ordered_json& view,
                        kainjow::mustache::data base = kainjow::mustache::data{
                            kainjow::mustache::data::type::object});

// The Content-Security-Policy of every page, in its <meta> element: nothing from elsewhere,
// scripts only from /static/ (no inline script), fetches only back to this server, styles
// inline as in the HTML report.
inline constexpr const char* kPageContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; "
    "img-src data:; form-action 'self'; base-uri 'none'";
// The same as a response header, which can also forbid framing (a <meta> cannot).
inline constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; "
    "img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

}  // namespace kvsweep::serve
