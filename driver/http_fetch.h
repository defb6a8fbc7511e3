// Small blocking HTTP calls for control paths (readiness, /metrics scrapes, admin endpoints).
#pragma once

#include <string>

namespace kvsweep::driver {

struct HttpResponse {
  int status = 0;  // 0 when no response arrived
  std::string body;
  std::string error;  // transport error ("connection refused", "timed out"), "" otherwise
};

// Never throws for network trouble: it comes back as `error`.
HttpResponse http_get(const std::string& url, double timeout_s);
HttpResponse http_post_json(const std::string& url, const std::string& json_body, double timeout_s);

}  // namespace kvsweep::driver
