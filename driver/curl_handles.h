// RAII owners for libcurl handles: CurlEasy, CurlSlist, CurlMulti.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

namespace kvsweep::driver {

// curl_global_init is not thread-safe and must run before any handle exists; every wrapper
// calls this, and a function-local static makes the first call do it exactly once (C++11
// guarantees thread-safe initialisation). It is never undone: the process may hold handles
// until exit, and curl_global_cleanup with handles alive is undefined.
void ensure_curl_global_init();

// One easy handle. Move-only. get() is for curl_easy_setopt/getinfo by the code that
// configures a transfer; ownership never leaves this object.
class CurlEasy {
 public:
  CurlEasy();  // throws std::runtime_error when libcurl cannot allocate a handle
  CURL* get() const { return handle_.get(); }

 private:
  struct Deleter {
    void operator()(CURL* handle) const;
  };
  std::unique_ptr<CURL, Deleter> handle_;
};

// A header list. Move-only; get() is nullptr while empty (what libcurl expects).
class CurlSlist {
 public:
  void append(const std::string& line);  // throws std::runtime_error on allocation failure
  curl_slist* get() const { return list_.get(); }

 private:
  struct Deleter {
    void operator()(curl_slist* list) const;
  };
  std::unique_ptr<curl_slist, Deleter> list_;
};

struct CurlDone {
  CURL* easy = nullptr;  // identifies the finished transfer; compare with CurlEasy::get()
  CURLcode result = CURLE_OK;
};

// A multi handle plus the set of easy handles currently added to it. Invariant: an easy handle
// is removed from the multi before the multi is cleaned up (the destructor removes any still
// added), so owners of CurlEasy objects must outlive the CurlMulti or remove() them first.
class CurlMulti {
 public:
  CurlMulti();
  ~CurlMulti();
  CurlMulti(const CurlMulti&) = delete;
  CurlMulti& operator=(const CurlMulti&) = delete;

  void add(const CurlEasy& easy);     // starts the transfer; throws std::runtime_error
  void remove(const CurlEasy& easy);  // stops it (a no-op when not added)
  std::size_t size() const { return added_.size(); }
  // For the socket-action drivers (transfer_lane.cc), which set callbacks and drive sockets.
  CURLM* get() const { return handle_; }

  // Drives every transfer as far as it can go without blocking.
  void perform();
  // Blocks until there is socket activity or timeout_ms passes.
  void poll(int timeout_ms);
  // The next transfer that finished, if any. The handle stays added until remove().
  std::optional<CurlDone> next_done();

 private:
  CURLM* handle_ = nullptr;
  std::unordered_set<CURL*> added_;
};

}  // namespace kvsweep::driver
