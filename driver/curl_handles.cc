// RAII owners for libcurl handles: CurlEasy, CurlSlist, CurlMulti.
#include "driver/curl_handles.h"

#include <stdexcept>

namespace kvsweep::driver {

void ensure_curl_global_init() {
  static const CURLcode kInitResult = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (kInitResult != CURLE_OK) {
    throw std::runtime_error(std::string("curl_global_init failed: ") +
                             curl_easy_strerror(kInitResult));
  }
}

CurlEasy::CurlEasy() {
  ensure_curl_global_init();
  handle_.reset(curl_easy_init());
  if (!handle_) throw std::runtime_error("curl_easy_init failed");
}

void CurlEasy::Deleter::operator()(CURL* handle) const { curl_easy_cleanup(handle); }

void CurlSlist::append(const std::string& line) {
  // curl_slist_append returns the (unchanged) head on success and nullptr on failure, leaving
  // the old list intact, so release only after it succeeded.
  curl_slist* head = curl_slist_append(list_.get(), line.c_str());
  if (head == nullptr) throw std::runtime_error("curl_slist_append failed");
  (void)list_.release();
  list_.reset(head);
}

void CurlSlist::Deleter::operator()(curl_slist* list) const { curl_slist_free_all(list); }

CurlMulti::CurlMulti() {
  ensure_curl_global_init();
  handle_ = curl_multi_init();
  if (handle_ == nullptr) throw std::runtime_error("curl_multi_init failed");
}

CurlMulti::~CurlMulti() {
  for (CURL* easy : added_) curl_multi_remove_handle(handle_, easy);
  curl_multi_cleanup(handle_);
}

void CurlMulti::add(const CurlEasy& easy) {
  const CURLMcode code = curl_multi_add_handle(handle_, easy.get());
  if (code != CURLM_OK) {
    throw std::runtime_error(std::string("curl_multi_add_handle: ") + curl_multi_strerror(code));
  }
  added_.insert(easy.get());
}

void CurlMulti::remove(const CurlEasy& easy) {
  if (added_.erase(easy.get()) > 0) curl_multi_remove_handle(handle_, easy.get());
}

void CurlMulti::perform() {
  int running = 0;
  const CURLMcode code = curl_multi_perform(handle_, &running);
  if (code != CURLM_OK) {
    throw std::runtime_error(std::string("curl_multi_perform: ") + curl_multi_strerror(code));
  }
}

void CurlMulti::poll(int timeout_ms) {
  const CURLMcode code = curl_multi_poll(handle_, nullptr, 0, timeout_ms, nullptr);
  if (code != CURLM_OK) {
    throw std::runtime_error(std::string("curl_multi_poll: ") + curl_multi_strerror(code));
  }
}

std::optional<CurlDone> CurlMulti::next_done() {
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(handle_, &queued)) {
    if (message->msg == CURLMSG_DONE) return CurlDone{message->easy_handle, message->data.result};
  }
  return std::nullopt;
}

}  // namespace kvsweep::driver
