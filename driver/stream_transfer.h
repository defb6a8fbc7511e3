// One HTTP request on an easy handle: headers, body bytes, outcome into a RequestRecord.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "driver/curl_handles.h"
#include "driver/request_record.h"
#include "driver/stream_decoder.h"

namespace kvsweep::driver {

struct StreamRequest {
  std::string url;
  std::string api_key;  // "" = no Authorization header
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
  std::string body;     // JSON
  bool stream = true;   // false: one JSON body, decoded when it is complete
  bool keep_text = false;  // keep the generated text (reply_text())
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
  // True once any response byte (the status line) arrived: the first-byte timeout is over.
  bool got_first_byte() const { return status_ != 0; }

  // Classifies the finished transfer (libcurl's result, HTTP status, stream contents) and
  // fills the outcome, timings and tokens of `record`, whose sent_s is already set.
  void finish(CURLcode result, RequestRecord& record);

  // For a request the run ends itself (cancelled by a stop, first-byte timeout) instead of
  // libcurl: keeps what had arrived, the HTTP status and the replica header, in `record`.
  void keep_response_so_far(RequestRecord& record) const;

  // The generated text when keep_text was set (streamed deltas joined, or the whole reply).
  const std::string& reply_text() const { return stream_ ? decoder_.text() : full_text_; }

 private:
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self);
  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self);
  void classify_timeout(RequestRecord& record, const std::string& curl_reason) const;

  std::chrono::steady_clock::time_point epoch_;
  std::string url_;
  std::string body_;
  double connect_timeout_s_;
  double timeout_s_;
  bool stream_;
  bool keep_text_;
  CurlEasy easy_;
  CurlSlist headers_;
  char curl_error_[CURL_ERROR_SIZE] = {};
  int status_ = 0;
  std::string replica_;
  std::string error_body_;  // start of a non-2xx body, for the record's `error`
  std::string full_body_;   // stream=false: the whole 2xx body
  double last_byte_s_ = -1;
  std::string full_text_;
  StreamDecoder decoder_;
};

}  // namespace kvsweep::driver
