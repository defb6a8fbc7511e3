// The sim servers' Host, cross-site, duplicate-header and admin content-type check.
#include "sim/http/site_guard.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "sim/http/server_routes.h"

namespace kvsweep::sim {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string_view> header_values(const HttpRequest& request, std::string_view name) {
  std::vector<std::string_view> values;
  for (const auto& [key, value] : request.headers) {
    if (iequals(key, name)) values.push_back(value);
  }
  return values;
}

// "application/json", "application/json; charset=utf-8": the media type before any parameter.
bool is_json_type(std::string_view content_type) {
  const std::string_view media = content_type.substr(0, content_type.find(';'));
  std::size_t end = media.size();
  while (end > 0 && (media[end - 1] == ' ' || media[end - 1] == '\t')) --end;
  return iequals(media.substr(0, end), "application/json");
}

ApiError refusal(int status, std::string message) {
  const char* type = status == 403   ? "PermissionDeniedError"
                     : status == 415 ? "UnsupportedMediaTypeError"
                                     : "BadRequestError";
  return ApiError{status, type, std::move(message), ""};
}

}  // namespace

std::optional<ApiError> site_refusal(const HttpRequest& request, const SiteNames& names) {
  const auto hosts = header_values(request, "host");
  if (const std::string why = host_refusal(hosts, names); !why.empty()) {
    return refusal(hosts.size() == 1 ? 403 : 400, "refused: " + why);
  }
  if (header_values(request, "authorization").size() > 1) {
    return refusal(400, "refused: more than one Authorization header");
  }
  if (const std::string why = cross_site_refusal(hosts.front(), request.header("origin"),
                                                 request.header("sec-fetch-site"));
      !why.empty()) {
    return refusal(403, "refused: " + why);
  }
  if (request.method == "POST" && request_path(request).rfind("/admin/", 0) == 0 &&
      !is_json_type(request.header("content-type"))) {
    return refusal(415,
                   "refused: an /admin/ request body must be sent as Content-Type: "
                   "application/json");
  }
  return std::nullopt;
}

HttpHandler site_guarded(HttpHandler handler, SiteNames names) {
  return [handler = std::move(handler), names = std::move(names)](
             const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
    if (auto error = site_refusal(request, names)) return reply_error(*exchange, *error);
    handler(request, std::move(exchange));
  };
}

}  // namespace kvsweep::sim
