// Who may call /admin/*: open on loopback, a bearer token once the server listens any wider.
#pragma once

#include <string>
#include <string_view>

#include "sim/http/http_exchange.h"

namespace kvsweep::sim {

// true for an IP address only this host can reach: 127.0.0.0/8, ::1, and 127.0.0.0/8 mapped
// into IPv6 (::ffff:127.x.x.x). false for everything else, 0.0.0.0 and :: (every interface)
// and anything that is not an IP address included.
bool is_loopback_host(std::string_view host);

// Throws std::invalid_argument naming the field when a server bound to `host` would leave
// /admin/* open to the network: a host beyond loopback needs a token.
void require_admin_token(std::string_view host, std::string_view token);

// Whether the request carries "Authorization: Bearer <token>" (scheme in any case). Compared in
// constant time over the token's length, so the reply time says nothing about the prefix.
bool bearer_token_matches(const HttpRequest& request, std::string_view token);

// 401 in OpenAI's shape, with WWW-Authenticate: Bearer.
void reply_unauthorized(Exchange& exchange);

}  // namespace kvsweep::sim
