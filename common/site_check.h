// Whether a request to a server on this machine came from that server's own site: the Host
// header names the server (not a DNS name an attacker pointed at it: DNS rebinding), and no
// browser marks it cross-site (Origin, Sec-Fetch-Site). Pure text checks; each server applies
// them to its own request type (serve's web_server.cc, the sim's site_guard.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep {

// The names a server answers to besides the loopback ones ("localhost", 127.0.0.0/8, ::1):
// the address it listens on, and any --allowed-host given. A wildcard listen address (0.0.0.0,
// ::) accepts every IP literal: DNS rebinding needs a DNS name, never an IP literal.
struct SiteNames {
  std::string listen_address;
  std::vector<std::string> allowed_hosts;
};

// The host of a Host header value: "127.0.0.1:8000" -> "127.0.0.1", "[::1]:80" -> "::1",
// "localhost" -> "localhost". nullopt when the value is not host[:port] with a port of digits
// ("127.0.0.1:evil.com", "a b", "[::1", "") so nothing after a stray colon is ever ignored.
std::optional<std::string> host_header_name(std::string_view value);

// True for "localhost" and the IP literals only this machine can reach.
bool is_loopback_name(std::string_view name);

// "" when one Host header was sent and names this server; else why the request is refused.
// `host_values` holds every Host header of the request, in order.
std::string host_refusal(const std::vector<std::string_view>& host_values, const SiteNames& names);

// "" unless a browser says the request comes from another site: an Origin that is not
// http(s)://HOST with the request's own Host value, or Sec-Fetch-Site other than same-origin
// or none. Scripts (curl, kvsweep) send neither header and pass.
std::string cross_site_refusal(std::string_view host_value, std::string_view origin,
                               std::string_view sec_fetch_site);

// True when `text` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);
// The offset of the first byte where `text` stops being valid UTF-8; nullopt when it is valid.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace kvsweep
