// One HTTP request on a reusable easy handle: headers, body bytes, outcome into a RequestRecord.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "driver/curl_handles.h"
#include "driver/request_record.h"
#include "driver/stream_decoder.h"

namespace kvsweep::driver {

// What every request of a run shares: where it goes and how it is sent.
struct TransferSettings {
  std::string url;
  std::string api_key;                                       // "" = no Authorization header
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
  bool stream = true;  // false: one JSON body, decoded when it is complete
  double connect_timeout_s = 10;
  double timeout_s = 300;
  bool new_connection = false;  // FRESH_CONNECT + FORBID_REUSE: a connection per request
  std::size_t max_event_bytes = kDefaultMaxSseEventBytes;  // LoadOptions::max_event_bytes
};

// The request header list of a run, built once from its settings and shared by every transfer
// of a thread (libcurl only reads it).
CurlSlist request_headers(const TransferSettings& settings);

// Counts the connections of one libcurl multi handle (transfer_lane.h): the socket callbacks of
// the transfers it carries report every socket opened and closed.
struct ConnectionCount {
  int open = 0;
};

// libcurl keeps pointers to this object (callbacks, error buffer, body), so it never moves:
// hold it by std::unique_ptr. Configured once (the run's settings); begin() readies it for
// each request, so one easy handle carries many requests: curl_easy_init and the option setup
// are paid once per handle, not once per request. Add easy() to a multi handle to start it.
// One thread at a time.
class StreamTransfer {
 public:
  // `headers` must outlive this. `epoch` is the run's steady-clock zero: every time in a
  // record is seconds since it.
  StreamTransfer(const TransferSettings& settings, const CurlSlist& headers,
                 std::chrono::steady_clock::time_point epoch);
  StreamTransfer(const StreamTransfer&) = delete;
  StreamTransfer& operator=(const StreamTransfer&) = delete;

  // Readies the handle for one request: forgets everything about the previous one. `body` is
  // the JSON; `keep_text` keeps the generated text (reply_text()); connections opened for it
  // are counted in `connections` (its multi handle's). `underway`, when set, goes from 0 to 1
  // when this request's status line arrives (LoadOptions::on_measured_underway).
  void begin(std::string body, bool keep_text, ConnectionCount* connections,
             std::atomic<int>* underway);

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
  static curl_socket_t on_open_socket(void* self, curlsocktype purpose, curl_sockaddr* address);
  static int on_close_socket(void* connections, curl_socket_t socket);
  void classify_timeout(RequestRecord& record, const std::string& curl_reason) const;

  std::chrono::steady_clock::time_point epoch_;
  double connect_timeout_s_;
  double timeout_s_;
  bool stream_;
  std::size_t max_event_bytes_;
  CurlEasy easy_;

  // Per request; begin() resets them.
  std::string body_;
  bool keep_text_ = false;
  ConnectionCount* connections_ = nullptr;
  std::atomic<int>* underway_ = nullptr;
  char curl_error_[CURL_ERROR_SIZE] = {};
  int socket_errno_ = 0;  // errno of a socket() that failed for this request, 0 when none
  int status_ = 0;
  std::string replica_;
  std::string error_body_;       // start of a non-2xx body, for the record's `error`
  std::string full_body_;        // stream=false: the whole 2xx body
  bool body_too_large_ = false;  // stream=false: the body passed max_event_bytes_
  double last_byte_s_ = -1;
  std::string full_text_;
  StreamDecoder decoder_;
};

}  // namespace kvsweep::driver
