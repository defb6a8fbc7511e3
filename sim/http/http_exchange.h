// One HTTP request/response exchange as handlers see it, independent of the socket behind it.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvsweep::sim {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, e.g. "/v1/chat/completions"
  std::string body;
  HttpHeaders headers;  // as received; names compare case-insensitively (header())

  // The value of the first header called `name` (any case), or empty.
  std::string_view header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  HttpHeaders headers;
};

// The response side of one request. A handler answers once with respond(), or streams with
// begin_stream(), write_chunk()* and finish() (chunked transfer encoding). Handlers hold it by
// shared_ptr for as long as they may still write; calls after the exchange ended are ignored,
// so a late engine callback after a disconnect is harmless.
//
// Thread contract: an exchange belongs to one io_context at a time, its home: the connection's
// until a handler hands it to a replica on another thread with move_to(). Every method may be
// called from any thread: a call from outside the home is posted to it, in call order, so the
// exchange's state and its listeners only ever run there. An exchange without a home (tests,
// collectors driven by hand) runs every call inline. ended(), streaming() and backlogged() read
// atomics: exact on the home, a recent value elsewhere.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  // Where the bytes go: the connection (http_server.cc) or a test double. send() and
  // complete() may be called from the exchange's home, which need not be the sink's thread.
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void send(std::string bytes) = 0;
    // The response is complete (all bytes handed to send()); keep_alive says whether the
    // connection may carry another request.
    virtual void complete(bool keep_alive) = 0;
    // Drops the connection at once without finishing the response (a dying server, a cut
    // stream): the client sees a reset or a truncated body.
    virtual void reset() {}
    // true while more bytes wait for the client than the connection allows per stream: the
    // producer should pause until the exchange's drain listener runs. Any thread.
    virtual bool backlogged() const { return false; }
  };

  // Always held by shared_ptr (calls from other threads post a reference to it).
  Exchange(std::weak_ptr<Sink> sink, bool keep_alive, boost::asio::io_context* home = nullptr);
  ~Exchange();  // never fires end listeners: destruction is not an event
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  void respond(HttpResponse response);
  void begin_stream(int status, std::string_view content_type, const HttpHeaders& headers);
  void write_chunk(std::string_view data);  // empty data is skipped (it would end the stream)
  void finish();

  // The transport lost the client (disconnect, write error, server stop): ends the exchange
  // and tells the listeners with aborted = true.
  void abort();
  // The server side cuts the response: the connection is dropped mid-way (fault injection, a
  // replica that dies), then the exchange ends as aborted.
  void sever();

  // Sets a response header that overrides the handler's header of the same name (any case):
  // the router names the replica it chose on every reply, whoever writes the reply. Takes
  // effect only before the response starts.
  void set_header(std::string name, std::string value);

  // Called once, just before the first body byte of the response is handed on (the first
  // streamed chunk, or a whole respond()): a router's "first token" signal.
  void on_first_byte(std::function<void()> listener);

  // Called exactly once when the exchange ends: after the last byte was handed to the sink
  // (aborted = false) or on abort() (aborted = true). Listeners run in registration order.
  void on_end(std::function<void(bool aborted)> listener);

  // Backpressure. backlogged(): the client is not reading as fast as the response is written
  // (the sink holds more than its per-stream limit); a producer that can wait (a relayed
  // upstream, a generation) stops writing and registers on_drained(), which runs once on the
  // home when the backlog has fallen again (at once if it already has), never after the end.
  // A second registration replaces the first.
  bool backlogged() const;
  void on_drained(std::function<void()> listener);
  // The sink's backlog has fallen below its limit: runs the drain listener, if any.
  void notify_drained();

  // Hands the exchange to another io_context (a replica on its own thread). Call it on the
  // current home, before the new home's thread uses the exchange.
  void move_to(boost::asio::io_context& home) { home_.store(&home); }
  boost::asio::io_context* home() const { return home_.load(); }

  bool ended() const { return state_.load() == State::kEnded; }
  bool streaming() const { return state_.load() == State::kStreaming; }

 private:
  enum class State { kIdle, kStreaming, kEnded };
  // true when called outside the home: the caller posts itself there with post_home().
  bool away() const;
  void post_home(std::function<void()> call);
  void end(bool aborted);
  void first_byte();

  std::weak_ptr<Sink> sink_;
  // The sink (the connection) lives while its exchange is open, even when nothing is being read
  // or written on its socket: a stream answered later, from a timer or another thread, while a
  // pipelined request waits in the connection's buffer. Released at the end; a connection that
  // closes first aborts its exchange, which ends it.
  std::shared_ptr<Sink> open_sink_;
  bool keep_alive_ = true;
  std::atomic<boost::asio::io_context*> home_{nullptr};
  HttpHeaders forced_headers_;  // set_header(): applied after the handler's own
  std::atomic<State> state_{State::kIdle};
  std::vector<std::function<void(bool)>> listeners_;
  std::vector<std::function<void()>> first_byte_listeners_;
  std::function<void()> drain_listener_;
};

// Convenience for handlers: an OpenAI-shaped JSON reply.
HttpResponse json_response(int status, std::string body, HttpHeaders headers = {});

}  // namespace kvsweep::sim
