// One HTTP request on a reusable easy handle: headers, body bytes, outcome into a RequestRecord.
#include "driver/stream_transfer.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/duration.h"
#include "common/unique_fd.h"
#include "common/utf8_prefix.h"
#include "driver/descriptor_budget.h"
#include "driver/full_response.h"

namespace kvsweep::driver {
namespace {

// Enough of an error body to parse an OpenAI error object; what `error` quotes is shorter.
constexpr std::size_t kMaxErrorBody = 2048;
constexpr std::size_t kMaxQuotedError = 300;
constexpr int kRateLimitedStatus = 429;
constexpr std::string_view kReplicaHeader = "x-kvsweep-replica";

long to_ms(double seconds) { return static_cast<long>(seconds * 1000.0); }

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// The message of an error body: OpenAI's {"error":{"message":..}}, vLLM's top-level
// {"message":..}, FastAPI's {"detail":..} or {"error":"..."}; else the body itself, cut short.
std::string error_message(std::string_view body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* message = nullptr;
  if (parsed.is_object()) {
    const auto error = parsed.find("error");
    if (error != parsed.end() && error->is_object()) {
      if (const auto m = error->find("message"); m != error->end()) message = &*m;
    } else if (error != parsed.end() && error->is_string()) {
      message = &*error;
    }
    for (const char* key : {"message", "detail"}) {
      if (message != nullptr) break;
      if (const auto m = parsed.find(key); m != parsed.end()) message = &*m;
    }
  }
  std::string text =
      message != nullptr && message->is_string() ? message->get<std::string>() : std::string(body);
  if (text.size() > kMaxQuotedError) text = std::string(utf8_prefix(text, kMaxQuotedError)) + "...";
  return text;
}

}  // namespace

CurlSlist request_headers(const TransferSettings& settings) {
  CurlSlist headers;
  headers.append("Content-Type: application/json");
  headers.append(settings.stream ? "Accept: text/event-stream" : "Accept: application/json");
  // libcurl would otherwise send "Expect: 100-continue" for large prompts and wait for a
  // reply many servers never send, adding up to a second to TTFT.
  headers.append("Expect:");
  if (!settings.api_key.empty()) headers.append("Authorization: Bearer " + settings.api_key);
  for (const auto& [name, value] : settings.headers) headers.append(name + ": " + value);
  return headers;
}

StreamTransfer::StreamTransfer(const TransferSettings& settings, const CurlSlist& headers,
                               std::chrono::steady_clock::time_point epoch)
    : epoch_(epoch),
      connect_timeout_s_(settings.connect_timeout_s),
      timeout_s_(settings.timeout_s),
      stream_(settings.stream),
      max_event_bytes_(settings.max_event_bytes) {
  CURL* easy = easy_.get();
  // libcurl copies the URL string; the header list and the body are borrowed.
  curl_easy_setopt(easy, CURLOPT_URL, settings.url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  // Signals for DNS timeouts are unsafe with several handles on one thread.
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, to_ms(connect_timeout_s_));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, to_ms(timeout_s_));
  if (settings.new_connection) {
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
  }
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, curl_error_);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &StreamTransfer::on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &StreamTransfer::on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
  // Our own socket(): its errno tells a full descriptor table (EMFILE) from a server that
  // refused (libcurl reports both as "Couldn't connect to server"), and every socket opened
  // and closed is counted on the multi handle that owns the connection.
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &StreamTransfer::on_open_socket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, this);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &StreamTransfer::on_close_socket);
}

void StreamTransfer::begin(std::string body, bool keep_text, ConnectionCount* connections,
                           std::atomic<int>* underway) {
  body_ = std::move(body);
  keep_text_ = keep_text;
  connections_ = connections;
  underway_ = underway;
  curl_error_[0] = '\0';
  socket_errno_ = 0;
  status_ = 0;
  replica_.clear();
  error_body_.clear();
  full_body_.clear();
  body_too_large_ = false;
  last_byte_s_ = -1;
  full_text_.clear();
  decoder_ = StreamDecoder(max_event_bytes_);
  decoder_.keep_text(keep_text_);
  CURL* easy = easy_.get();
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body_.c_str());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_.size()));
  // libcurl stores this with each connection the handle opens, and calls the close callback
  // with it whichever handle later closes the connection: the owner's count stays right.
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, connections);
}

curl_socket_t StreamTransfer::on_open_socket(void* self, curlsocktype, curl_sockaddr* address) {
  auto* transfer = static_cast<StreamTransfer*>(self);
  const int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) {
    transfer->socket_errno_ = errno;
    return CURL_SOCKET_BAD;
  }
  if (transfer->connections_ != nullptr) ++transfer->connections_->open;
  return fd;
}

int StreamTransfer::on_close_socket(void* connections, curl_socket_t socket) {
  if (connections != nullptr) --static_cast<ConnectionCount*>(connections)->open;
  return close_descriptor(socket);  // libcurl hands the socket back to close
}

std::size_t StreamTransfer::on_header(char* data, std::size_t size, std::size_t count, void* self) {
  auto* transfer = static_cast<StreamTransfer*>(self);
  const std::string_view line(data, size * count);
  if (starts_with_ignoring_case(line, "http/")) {
    // A new status line (after "100 Continue" or a redirect) starts a new header block.
    const std::size_t space = line.find(' ');
    transfer->status_ = space == std::string_view::npos
                            ? 0
                            : std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    transfer->replica_.clear();
    if (transfer->underway_ != nullptr && transfer->status_ != 0) {
      int waiting = 0;
      transfer->underway_->compare_exchange_strong(waiting, 1, std::memory_order_relaxed);
      transfer->underway_ = nullptr;
    }
  } else if (starts_with_ignoring_case(line, kReplicaHeader) &&
             line.size() > kReplicaHeader.size() && line[kReplicaHeader.size()] == ':') {
    transfer->replica_ = std::string(trim(line.substr(kReplicaHeader.size() + 1)));
  }
  return size * count;
}

std::size_t StreamTransfer::on_body(char* data, std::size_t size, std::size_t count, void* self) {
  // Timestamp first: the arrival time of these bytes is the measurement.
  const auto now = std::chrono::steady_clock::now();
  auto* transfer = static_cast<StreamTransfer*>(self);
  const std::string_view bytes(data, size * count);
  const double now_s = std::chrono::duration<double>(now - transfer->epoch_).count();
  if (transfer->status_ >= 200 && transfer->status_ < 300) {
    if (transfer->stream_) {
      transfer->decoder_.feed(bytes, now_s);
      // Less than was given makes libcurl end the transfer: nothing more is read or held.
      if (transfer->decoder_.event_too_large()) return 0;
    } else {
      // One whole JSON body is one event: bounded by the same limit.
      if (transfer->full_body_.size() + bytes.size() > transfer->max_event_bytes_) {
        transfer->body_too_large_ = true;
        transfer->full_body_ = std::string();
        return 0;
      }
      transfer->full_body_.append(bytes);
      transfer->last_byte_s_ = now_s;
    }
  } else if (transfer->error_body_.size() < kMaxErrorBody) {
    transfer->error_body_.append(bytes.substr(0, kMaxErrorBody - transfer->error_body_.size()));
  }
  return bytes.size();
}

void StreamTransfer::classify_timeout(RequestRecord& record, const std::string& curl_reason) const {
  record.ok = false;
  record.error_kind = kErrorTimeout;
  // Zero pre-transfer time means the connection never became usable (a reused connection
  // has a small positive one), so the connect phase is what ran out.
  curl_off_t pretransfer_us = 0;
  curl_easy_getinfo(easy_.get(), CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
  if (pretransfer_us == 0 && status_ == 0) {
    record.error =
        "connect timeout after " + format_duration_s(connect_timeout_s_) + ": " + curl_reason;
  } else {
    record.error = "total timeout after " + format_duration_s(timeout_s_) + ": " + curl_reason;
  }
}

void StreamTransfer::keep_response_so_far(RequestRecord& record) const {
  record.http_status = status_;
  record.replica = replica_;
}

void StreamTransfer::finish(CURLcode result, RequestRecord& record) {
  keep_response_so_far(record);
  const bool success_status = status_ >= 200 && status_ < 300;
  if (success_status) {
    if (stream_) {
      decoder_.finish(record);  // timings and tokens of whatever arrived
    } else if (result == CURLE_OK) {
      decode_full_response(full_body_, last_byte_s_ >= 0 ? last_byte_s_ : record.sent_s, record,
                           keep_text_ ? &full_text_ : nullptr);
    }
  }

  const std::string curl_reason = curl_error_[0] != '\0' ? curl_error_ : curl_easy_strerror(result);
  if (success_status && stream_ && decoder_.event_too_large()) {
    // The decoder said so, and the write error libcurl reports is this transfer stopping.
  } else if (success_status && body_too_large_) {
    record.ok = false;
    record.error_kind = kErrorMalformed;
    record.error = "response too large: the body passed " + std::to_string(max_event_bytes_) +
                   " bytes (the limit is --max-event-bytes); reading stopped";
  } else if (result != CURLE_OK && status_ == 0 &&
             (socket_errno_ == EMFILE || socket_errno_ == ENFILE ||
              curl_reason.find("Too many open files") != std::string::npos)) {
    record.ok = false;
    record.error_kind = kErrorClientResources;
    record.error = std::string("socket(): ") +
                   (socket_errno_ == ENFILE ? "the system's file table is full (ENFILE)"
                                            : "too many open files (EMFILE)") +
                   ": the client hit its descriptor limit (RLIMIT_NOFILE " +
                   std::to_string(open_file_limit()) +
                   "), the server was not reached; raise `ulimit -n` or lower the concurrency";
  } else if (result == CURLE_OPERATION_TIMEDOUT) {
    classify_timeout(record, curl_reason);
  } else if (status_ != 0 && !success_status) {
    // The status says why even when the error body was then cut short.
    record.ok = false;
    record.error_kind = status_ == kRateLimitedStatus ? kErrorRateLimited : kErrorHttpStatus;
    record.error = "HTTP " + std::to_string(status_);
    const std::string_view body = trim(error_body_);
    if (!body.empty()) record.error += ": " + error_message(body);
  } else if (result != CURLE_OK) {
    // No status line means the server never answered (refused, reset, DNS): a connect
    // failure. After a status line, losing the connection is a dropped stream.
    record.ok = false;
    record.error_kind = status_ == 0 ? kErrorConnect : kErrorStreamDropped;
    record.error = curl_reason;
  }
  // Otherwise the decoder already set the outcome (ok, malformed, server_error, dropped).
  if (keep_text_ && record.ok) record.response_text = reply_text();
}

}  // namespace kvsweep::driver
