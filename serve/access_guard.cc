// Who may read serve's pages: the token check, sessions, one-time login codes, bind policy.
#include "serve/access_guard.h"

#include <arpa/inet.h>

#include <algorithm>

namespace kvsweep::serve {
namespace {

// Sessions kept at most; the oldest is forgotten first (its browser logs in again).
constexpr std::size_t kMaxSessions = 256;

// The value of cookie `name` in a Cookie header ("a=1; kvsweep_session=...; b=2"), or "".
std::string cookie_value(const std::string& header, const std::string& name) {
  std::size_t at = 0;
  while (at < header.size()) {
    std::size_t end = header.find(';', at);
    if (end == std::string::npos) end = header.size();
    std::string pair = header.substr(at, end - at);
    pair.erase(0, pair.find_first_not_of(' '));
    if (pair.compare(0, name.size() + 1, name + "=") == 0) return pair.substr(name.size() + 1);
    at = end + 1;
  }
  return "";
}

}  // namespace

bool constant_time_equals(const std::string& a, const std::string& b) {
  // Every byte of the longer is visited whatever the contents; the length difference is
  // folded into the result instead of returning early.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool is_loopback_address(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

std::string bind_refusal(const std::string& bind, bool has_token) {
  if (is_loopback_address(bind) || has_token) return "";
  return "--bind " + bind +
         " is not a loopback address: anyone who can reach it could read every stored "
         "experiment; pass --token-env VAR (the token, at least " +
         std::to_string(kMinTokenLength) +
         " characters, in environment variable VAR), and every request must then carry it";
}

AccessGuard::AccessGuard(std::string token) : token_(std::move(token)) {}

bool AccessGuard::allows(const std::string& authorization, const std::string& cookie) const {
  if (open()) return true;
  const std::string bearer = "Bearer ";
  if (authorization.compare(0, bearer.size(), bearer) == 0 &&
      constant_time_equals(authorization.substr(bearer.size()), token_)) {
    return true;
  }
  const std::string session = cookie_value(cookie, kSessionCookie);
  if (session.empty()) return false;
  std::lock_guard lock(mutex_);
  bool known = false;
  for (const auto& s : sessions_) known |= constant_time_equals(session, s);  // no early exit
  return known;
}

std::string AccessGuard::random_secret() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 8; ++i) {
    std::uint32_t word = entropy_();
    for (int j = 0; j < 8; ++j, word >>= 4) out += kHex[word & 0xf];
  }
  return out;  // 256 bits from the system's entropy source
}

std::string AccessGuard::new_session_locked() {
  if (sessions_.size() >= kMaxSessions) sessions_.erase(sessions_.begin());
  sessions_.push_back(random_secret());
  return sessions_.back();
}

std::string AccessGuard::new_one_time_code(std::chrono::seconds valid_for) {
  std::lock_guard lock(mutex_);
  codes_.push_back({random_secret(), std::chrono::steady_clock::now() + valid_for});
  return codes_.back().value;
}

std::optional<std::string> AccessGuard::login_with_code(const std::string& code) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::optional<std::size_t> match;
  for (std::size_t i = 0; i < codes_.size(); ++i) {
    if (constant_time_equals(code, codes_[i].value) && codes_[i].expires > now) match = i;
  }
  if (!match) return std::nullopt;
  codes_.erase(codes_.begin() + static_cast<std::ptrdiff_t>(*match));  // spent
  return new_session_locked();
}

std::optional<std::string> AccessGuard::login_with_token(const std::string& token) {
  if (open() || !constant_time_equals(token, token_)) return std::nullopt;
  std::lock_guard lock(mutex_);
  return new_session_locked();
}

}  // namespace kvsweep::serve
