// Who may read serve's pages: anyone on a loopback bind without a token; with a token, only a
// request carrying it (Authorization: Bearer) or a session cookie got by logging in, either
// with the token on /login or once with the one-time code printed at start.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kvsweep::serve {

// Compares in time that depends on the lengths only, never on where a and b first differ.
bool constant_time_equals(const std::string& a, const std::string& b);

// True for 127.0.0.0/8, ::1 and "localhost": addresses only this machine can reach.
bool is_loopback_address(const std::string& address);

// "" when serving on `bind` is allowed; else why not. A non-loopback bind needs a token.
std::string bind_refusal(const std::string& bind, bool has_token);

inline constexpr const char* kSessionCookie = "kvsweep_session";
// A token shorter than this is refused: it would be guessed before anyone noticed.
inline constexpr std::size_t kMinTokenLength = 16;

// Thread contract: every method from any thread.
class AccessGuard {
 public:
  // No token: every request is let in. The token comes from the environment and is never
  // printed or stored.
  explicit AccessGuard(std::string token);

  bool open() const { return token_.empty(); }

  // Whether a request with these header values may be answered.
  bool allows(const std::string& authorization, const std::string& cookie) const;

  // A code for the URL printed at start: it logs in once, within `valid_for`.
  std::string new_one_time_code(std::chrono::seconds valid_for = std::chrono::minutes(15));

  // A new session id for a valid one-time code (which is then spent) or the token itself;
  // nullopt otherwise.
  std::optional<std::string> login_with_code(const std::string& code);
  std::optional<std::string> login_with_token(const std::string& token);

 private:
  std::string random_secret();
  std::string new_session_locked();

  const std::string token_;
  mutable std::mutex mutex_;
  std::random_device entropy_;
  std::vector<std::string> sessions_;
  struct Code {
    std::string value;
    std::chrono::steady_clock::time_point expires;
  };
  std::vector<Code> codes_;
};

}  // namespace kvsweep::serve
