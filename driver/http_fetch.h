// Small blocking HTTP calls for control paths (readiness, /metrics scrapes, admin endpoints).
#pragma once

#include <cstddef>
#include <string>

namespace kvsweep::driver {

struct HttpResponse {
  int status = 0;  // 0 when no response arrived
  std::string body;
  std::string error;  // transport error ("connection refused", "timed out"), "" otherwise
};

// A reply body larger than this is cut and the call fails: a /metrics reply of a real server is
// tens of KB, and a server (or anything at a URL a user typed) sending without end would
// otherwise be read into memory whole.
inline constexpr std::size_t kDefaultMaxReplyBytes = std::size_t{16} << 20;

// Never throws for network trouble: it comes back as `error` (a body over max_reply_bytes too:
// "reply over N bytes: cut", status kept, body empty).
HttpResponse http_get(const std::string& url, double timeout_s,
                      std::size_t max_reply_bytes = kDefaultMaxReplyBytes);
HttpResponse http_post_json(const std::string& url, const std::string& json_body, double timeout_s);

}  // namespace kvsweep::driver
