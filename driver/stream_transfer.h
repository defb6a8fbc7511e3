// One streamed HTTP request on an easy handle: headers, body bytes, outcome into a RequestRecord.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <string>

#include "driver/curl_handles.h"
#include "driver/request_record.h"
#include "driver/stream_decoder.h"

namespace kvsweep::driver {

struct StreamRequest {
  std::string url;
  std::string api_key;  // "" = no Authorization header
  std::string body;     // JSON
  double connect_timeout_s = 10;
  double timeout_s = 300;
};

// libcurl keeps pointers to this object (callbacks, error buffer, body), so it never moves:
// hold it by std::unique_ptr. Add easy() to a CurlMulti to start it.
class StreamTransfer {
 public:
  // `epoch` is the run's steady-clock zero: every time in the record is seconds since it.
  StreamTransfer(StreamRequest request, std::chrono::steady_clock::time_point epoch);
  StreamTransfer(const StreamTransfer&) = delete;
  StreamTransfer& operator=(const StreamTransfer&) = delete;

  const CurlEasy& easy() const { return easy_; }

  // Classifies the finished transfer (libcurl's result, HTTP status, stream contents) and
  // fills the outcome, timings and tokens of `record`, whose sent_s is already set.
  void finish(CURLcode result, RequestRecord& record) const;

 private:
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self);
  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self);

  StreamRequest request_;
  std::chrono::steady_clock::time_point epoch_;
  CurlEasy easy_;
  CurlSlist headers_;
  char curl_error_[CURL_ERROR_SIZE] = {};
  int status_ = 0;
  std::string replica_;
  std::string error_body_;  // start of a non-2xx body, for the record's `error`
  StreamDecoder decoder_;
};

}  // namespace kvsweep::driver
