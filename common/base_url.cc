// The one normal form of an OpenAI-compatible server's base URL, whichever way a user wrote it.
#include "common/base_url.h"

#include <string_view>

namespace kvsweep {
namespace {

void drop_trailing_slashes(std::string& url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
}

}  // namespace

std::string normalize_base_url(std::string url) {
  drop_trailing_slashes(url);
  constexpr std::string_view kVersion = "/v1";
  // The /v1 must follow a host: "http://v1" names a host called v1.
  const std::size_t scheme_end = url.find("://");
  const std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  if (url.size() > host_start + kVersion.size() &&
      url.compare(url.size() - kVersion.size(), kVersion.size(), kVersion) == 0) {
    url.resize(url.size() - kVersion.size());
    drop_trailing_slashes(url);
  }
  return url;
}

}  // namespace kvsweep
