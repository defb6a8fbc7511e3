// Small blocking HTTP calls for control paths, on one easy handle each.
#include "driver/http_fetch.h"

#include <exception>

#include "driver/curl_handles.h"

namespace kvsweep::driver {
namespace {

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

// `json_body` == nullptr means GET.
HttpResponse fetch(const std::string& url, const std::string* json_body, double timeout_s) {
  HttpResponse response;
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
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &response.body);
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
    if (result != CURLE_OK) {
      response.error = curl_error[0] != '\0' ? curl_error : curl_easy_strerror(result);
    }
  } catch (const std::exception& e) {
    // Only handle allocation can throw here; the header promises no exceptions.
    response.error = e.what();
  }
  return response;
}

}  // namespace

HttpResponse http_get(const std::string& url, double timeout_s) {
  return fetch(url, nullptr, timeout_s);
}

HttpResponse http_post_json(const std::string& url, const std::string& json_body,
                            double timeout_s) {
  return fetch(url, &json_body, timeout_s);
}

}  // namespace kvsweep::driver
