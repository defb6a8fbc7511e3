// TransferLane: one libcurl multi handle carrying a bounded number of transfers on a shared epoll
// set.
#include "driver/transfer_lane.h"

#include <sys/epoll.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvsweep::driver {
namespace {

void check(CURLMcode code, const char* what) {
  if (code != CURLM_OK) {
    throw std::runtime_error(std::string(what) + ": " + curl_multi_strerror(code));
  }
}

// epoll_ctl that tolerates a socket number reused behind our back: ADD of a number still
// registered becomes MOD, MOD of one no longer registered becomes ADD.
void watch(int epoll_fd, int fd, std::uint32_t events, std::uint64_t tag, bool registered) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  const int op = registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (::epoll_ctl(epoll_fd, op, fd, &event) == 0) return;
  if (errno == EEXIST) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
  } else if (errno == ENOENT) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
  }
}

}  // namespace

std::uint64_t pack(const EventTag& tag) {
  return (static_cast<std::uint64_t>(tag.kind) << 56) |
         (static_cast<std::uint64_t>(tag.lane & 0xffffffu) << 32) |
         static_cast<std::uint32_t>(tag.fd);
}

EventTag unpack(std::uint64_t data) {
  EventTag tag;
  tag.kind = static_cast<EventKind>(data >> 56);
  tag.lane = static_cast<std::uint32_t>((data >> 32) & 0xffffffu);
  tag.fd = static_cast<int>(static_cast<std::uint32_t>(data));
  return tag;
}

TransferLane::TransferLane(int epoll_fd, std::uint32_t id, std::vector<TransferLane*>* run_now)
    : epoll_fd_(epoll_fd), id_(id), run_now_(run_now) {
  ensure_curl_global_init();
  watch(epoll_fd_, timer_.fd(), EPOLLIN, pack({EventKind::kTimer, id_, timer_.fd()}), false);
  multi_ = curl_multi_init();
  if (multi_ == nullptr) throw std::runtime_error("curl_multi_init failed");
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &TransferLane::on_socket_change);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &TransferLane::on_timer_change);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(kLaneTransfers));
}

TransferLane::~TransferLane() {
  // The owner removed every transfer. Cleanup closes the cached connections; a closed socket
  // leaves the epoll set by itself, so the callbacks are stopped rather than run mid-cleanup.
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, nullptr);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, nullptr);
  curl_multi_cleanup(multi_);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, timer_.fd(), nullptr);
}

void TransferLane::add(CURL* easy) {
  check(curl_multi_add_handle(multi_, easy), "curl_multi_add_handle");
  ++active_;
}

void TransferLane::remove(CURL* easy) {
  curl_multi_remove_handle(multi_, easy);
  --active_;
}

int TransferLane::on_socket_change(CURL*, curl_socket_t socket, int what, void* self,
                                   void* socket_data) {
  auto* lane = static_cast<TransferLane*>(self);
  if (what == CURL_POLL_REMOVE) {
    ::epoll_ctl(lane->epoll_fd_, EPOLL_CTL_DEL, socket, nullptr);
    curl_multi_assign(lane->multi_, socket, nullptr);
    return 0;
  }
  const std::uint32_t events =
      (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
  // libcurl hands back the pointer we assigned to a socket: non-null means registered.
  watch(lane->epoll_fd_, socket, events, pack({EventKind::kSocket, lane->id_, socket}),
        socket_data != nullptr);
  if (socket_data == nullptr) curl_multi_assign(lane->multi_, socket, lane);
  return 0;
}

int TransferLane::on_timer_change(CURLM*, long timeout_ms, void* self) {
  auto* lane = static_cast<TransferLane*>(self);
  // Only note it here: calling back into libcurl from its own callback is not allowed.
  if (timeout_ms < 0) {
    lane->curl_deadline_.reset();  // a timer still armed fires once for nothing
  } else if (timeout_ms == 0) {
    lane->curl_deadline_.reset();  // libcurl reports the next deadline after the run
    if (!lane->on_run_now_) {
      lane->on_run_now_ = true;
      lane->run_now_->push_back(lane);
    }
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    lane->curl_deadline_ = deadline;
    if (!lane->armed_ || deadline < *lane->armed_) lane->arm(deadline);
  }
  return 0;
}

void TransferLane::arm(std::chrono::steady_clock::time_point deadline) {
  timer_.arm_at(deadline);
  armed_ = deadline;
}

void TransferLane::action(curl_socket_t socket, int flags) {
  int running = 0;
  check(curl_multi_socket_action(multi_, socket, flags, &running), "curl_multi_socket_action");
}

void TransferLane::on_socket(int fd, std::uint32_t epoll_events) {
  int flags = 0;
  if (epoll_events & EPOLLIN) flags |= CURL_CSELECT_IN;
  if (epoll_events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
  if (epoll_events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
  action(fd, flags);
}

void TransferLane::on_timer() {
  timer_.acknowledge();
  armed_.reset();
  action(CURL_SOCKET_TIMEOUT, 0);
  // A fire before libcurl's own deadline (it moved later) left that deadline unarmed.
  if (curl_deadline_ && !armed_) arm(*curl_deadline_);
}

void TransferLane::run_timeouts() {
  on_run_now_ = false;
  action(CURL_SOCKET_TIMEOUT, 0);
  if (curl_deadline_ && !armed_) arm(*curl_deadline_);
}

std::optional<CurlDone> TransferLane::next_done() {
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
    if (message->msg == CURLMSG_DONE) return CurlDone{message->easy_handle, message->data.result};
  }
  return std::nullopt;
}

}  // namespace kvsweep::driver
