// Small blocking HTTP calls for control paths, on one easy handle each.
#include "driver/http_fetch.h"

#include <algorithm>
#include <exception>
#include <string>

#include "driver/curl_handles.h"

namespace kvsweep::driver {
namespace {

// Where a reply's body goes, up to its cap.
struct BodySink {
  std::string* body;
  std::size_t max_bytes;
  bool cut = false;
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* sink_ptr) {
  auto* sink = static_cast<BodySink*>(sink_ptr);
  if (size * count > sink->max_bytes - std::min(sink->max_bytes, sink->body->size())) {
    sink->cut = true;
    return 0;  // curl ends the transfer (CURLE_WRITE_ERROR)
  }
  sink->body->append(data, size * count);
  return size * count;
}

// `json_body` == nullptr means GET.
HttpResponse fetch(const std::string& url, const std::string* json_body, double timeout_s,
                   std::size_t max_reply_bytes) {
  HttpResponse response;
  BodySink sink{&response.body, max_reply_bytes};
  try {
    CurlEasy easy;
    CurlSlist headers;
    char curl_error[CURL_ERROR_SIZE] = {};
    CURL* handle = easy.get();
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000.0));
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, curl_error);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &append_body);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &sink);
    // A declared length over the cap is refused before any of the body is read.
    curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(max_reply_bytes));
    if (json_body != nullptr) {
      headers.append("Content-Type: application/json");
      headers.append("Expect:");  // see stream_transfer.cc: no 100-continue round trip
      curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
      curl_easy_setopt(handle, CURLOPT_POST, 1L);
      curl_easy_setopt(handle, CURLOPT_POSTFIELDS, json_body->c_str());
      curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(json_body->size()));
    }
    const CURLcode result = curl_easy_perform(handle);
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    if (sink.cut || result == CURLE_FILESIZE_EXCEEDED) {
      response.body.clear();
      response.body.shrink_to_fit();
      response.error = "reply over " + std::to_string(max_reply_bytes) + " bytes: cut";
    } else if (result != CURLE_OK) {
      response.error = curl_error[0] != '\0' ? curl_error : curl_easy_strerror(result);
    }
  } catch (const std::exception& e) {
    // Only handle allocation can throw here; the header promises no exceptions.
    response.error = e.what();
  }
  return response;
}

}  // namespace

HttpResponse http_get(const std::string& url, double timeout_s, std::size_t max_reply_bytes) {
  return fetch(url, nullptr, timeout_s, max_reply_bytes);
}

HttpResponse http_post_json(const std::string& url, const std::string& json_body,
                            double timeout_s) {
  return fetch(url, &json_body, timeout_s, kDefaultMaxReplyBytes);
}

}  // namespace kvsweep::driver
