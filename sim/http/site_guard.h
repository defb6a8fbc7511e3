// The check every sim server (the fleet's router and replicas, the proxy) makes before its
// routes: the request names this server in one Host header (no DNS rebinding), no browser marks
// it cross-site (Origin, Sec-Fetch-Site), it carries at most one Authorization header, and an
// /admin/* POST says its body is application/json (a type a page of another site cannot send
// without asking first). The rules themselves: common/site_check.h.
#pragma once

#include <optional>

#include "common/site_check.h"
#include "sim/http/http_exchange.h"
#include "sim/http/http_server.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {

// Why the request is refused (400, 403 or 415 in OpenAI's shape), or nullopt.
std::optional<ApiError> site_refusal(const HttpRequest& request, const SiteNames& names);

// `handler` behind site_refusal(): a refused request is answered and never reaches it.
HttpHandler site_guarded(HttpHandler handler, SiteNames names);

}  // namespace kvsweep::sim
