// Host, Origin and Sec-Fetch-Site checks shared by every loopback server, and UTF-8 validation.
#include "common/site_check.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace kvsweep {
namespace {

bool is_ip_literal(const std::string& name) {
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, name.c_str(), &v4) == 1 || inet_pton(AF_INET6, name.c_str(), &v6) == 1;
}

bool is_wildcard(const std::string& address) {
  return address == "0.0.0.0" || address == "::" || address == "[::]";
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Letters, digits, '.', '-', '_' (a DNS name or an IPv4 literal); ':' too inside brackets.
bool plain_host_char(char c, bool bracketed) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
         (bracketed && c == ':');
}

std::string quoted(std::string_view value) {
  std::string out = "\"";
  for (char c : value.substr(0, 100)) {
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  return out + (value.size() > 100 ? "...\"" : "\"");
}

}  // namespace

std::optional<std::string> host_header_name(std::string_view value) {
  std::string_view host = value;
  std::string_view port;
  bool bracketed = false;
  if (!value.empty() && value.front() == '[') {
    const std::size_t close = value.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = value.substr(1, close - 1);
    const std::string_view rest = value.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
    bracketed = true;
  } else if (const std::size_t colon = value.find(':'); colon != std::string_view::npos) {
    host = value.substr(0, colon);
    port = value.substr(colon + 1);
    if (port.empty()) return std::nullopt;
  }
  if (host.empty() || port.size() > 5) return std::nullopt;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  for (char c : host) {
    if (!plain_host_char(c, bracketed)) return std::nullopt;
  }
  std::string name(host);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (bracketed && !is_ip_literal(name)) return std::nullopt;
  return name;
}

bool is_loopback_name(std::string_view name) {
  if (iequal(name, "localhost")) return true;
  const std::string text(name);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

std::string host_refusal(const std::vector<std::string_view>& host_values, const SiteNames& names) {
  if (host_values.empty()) return "no Host header";
  if (host_values.size() > 1) return "more than one Host header";
  const auto name = host_header_name(host_values.front());
  if (!name) return "Host " + quoted(host_values.front()) + " is not host[:port]";
  if (is_loopback_name(*name)) return "";
  std::string listen = names.listen_address;
  if (listen.size() > 2 && listen.front() == '[') listen = listen.substr(1, listen.size() - 2);
  if (iequal(*name, listen)) return "";
  if (is_wildcard(names.listen_address) && is_ip_literal(*name)) return "";
  for (const auto& allowed : names.allowed_hosts) {
    if (iequal(*name, allowed)) return "";
  }
  return "Host " + quoted(host_values.front()) +
         " is not a name of this server (a DNS name pointed at it from elsewhere?); give "
         "--allowed-host NAME to answer to it";
}

std::string cross_site_refusal(std::string_view host_value, std::string_view origin,
                               std::string_view sec_fetch_site) {
  if (!sec_fetch_site.empty() && !iequal(sec_fetch_site, "same-origin") &&
      !iequal(sec_fetch_site, "none")) {
    return "a page of another site sent this request (Sec-Fetch-Site: " + quoted(sec_fetch_site) +
           ")";
  }
  if (origin.empty()) return "";
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.size() == scheme.size() + host_value.size() &&
        iequal(origin.substr(0, scheme.size()), scheme) &&
        iequal(origin.substr(scheme.size()), host_value)) {
      return "";
    }
  }
  return "a page of another site sent this request (Origin: " + quoted(origin) + ")";
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    if ((lead & 0xe0) == 0xc0) {
      length = 2;
      code = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3;
      code = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) return i;
      code = (code << 6) | (byte(i + k) & 0x3f);
    }
    static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      return i;
    }
    i += length;
  }
  return std::nullopt;
}

bool is_valid_utf8(std::string_view text) { return !first_invalid_utf8(text); }

}  // namespace kvsweep
