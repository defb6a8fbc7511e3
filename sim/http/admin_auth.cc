// Who may call /admin/*: open on loopback, a bearer token once the server listens any wider.
#include "sim/http/admin_auth.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/string.hpp>
#include <stdexcept>

#include "common/error_kinds.h"
#include "sim/http/openai_api.h"
#include "sim/http/server_routes.h"

namespace kvsweep::sim {

bool is_loopback_host(std::string_view host) {
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  if (ec) return false;
  if (address.is_v4()) return address.to_v4().is_loopback();  // 127.0.0.0/8
  const auto v6 = address.to_v6();
  if (v6.is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).is_loopback();
  }
  return v6.is_loopback();  // ::1
}

void require_admin_token(std::string_view host, std::string_view token) {
  if (!token.empty() || is_loopback_host(host)) return;
  throw UsageError(
      "admin_token: host " + std::string(host) +
      " is reachable beyond this machine, so /admin/* needs a token: put one in an environment "
      "variable and pass --admin-token-env VAR (or listen on 127.0.0.1)");
}

bool bearer_token_matches(const HttpRequest& request, std::string_view token) {
  std::string_view value = request.header("authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (token.empty() || value.size() < kScheme.size() ||
      !boost::beast::iequals(boost::beast::string_view(value.data(), kScheme.size()),
                             boost::beast::string_view(kScheme.data(), kScheme.size()))) {
    return false;
  }
  value.remove_prefix(kScheme.size());
  // Every byte of the expected token is looked at whatever the given one holds.
  unsigned char diff = value.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const char given = i < value.size() ? value[i] : '\0';
    diff |= static_cast<unsigned char>(given ^ token[i]);
  }
  return diff == 0;
}

void reply_unauthorized(Exchange& exchange) {
  reply_error(exchange,
              ApiError{401, "AuthenticationError",
                       "/admin/* needs the header Authorization: Bearer <token>, the token "
                       "the server was started with (--admin-token-env)",
                       ""},
              {{"WWW-Authenticate", "Bearer"}});
}

}  // namespace kvsweep::sim
