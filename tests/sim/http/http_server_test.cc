// Tests for sim/http/http_server.cc and sim/http/http_exchange.cc: keep-alive, pipelining,
// streaming, and what a handler hears when the client goes away.
#include "sim/http/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <future>
#include <thread>

#include "tests/sim/http/server_thread.h"

namespace kvsweep::sim {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

using testing::ServerThread;

std::string read_all(tcp::socket& socket) {
  std::string out;
  boost::system::error_code ec;
  char buf[4096];
  for (;;) {
    const std::size_t n = socket.read_some(net::buffer(buf), ec);
    if (ec) break;
    out.append(buf, n);
  }
  return out;
}

TEST(HttpServer, AnswersPipelinedRequestsInOrderOnOneConnection) {
  ServerThread server([](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
    exchange->respond(HttpResponse{200, "text/plain", request.method + " " + request.target, {}});
  });
  net::io_context client_io;
  tcp::socket socket(client_io);
  socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
  net::write(socket,
             net::buffer(std::string("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
                                     "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
                                     "GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
  const std::string reply = read_all(socket);
  const auto a = reply.find("\r\n\r\nGET /a");
  const auto b = reply.find("\r\n\r\nPOST /b");
  const auto c = reply.find("\r\n\r\nGET /c");
  ASSERT_NE(a, std::string::npos) << reply;
  ASSERT_NE(b, std::string::npos) << reply;
  ASSERT_NE(c, std::string::npos) << reply;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

// A stream answered later (from a timer: between its chunks nothing is being read or written
// on the socket) while the next request already waits in the buffer: the connection must live
// until the answer ends, then serve the pipelined request. (A handler on another thread, as in
// a fleet with several io threads, answers later in just this way.)
TEST(HttpServer, PipelinedRequestsWaitForAStreamAnsweredLater) {
  ServerThread* where = nullptr;
  ServerThread server([&where](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
    exchange->begin_stream(200, "text/plain", {});
    exchange->write_chunk("first of " + request.target + ";");
    auto timer = std::make_shared<net::steady_timer>(where->io(), std::chrono::milliseconds(200));
    timer->async_wait([timer, exchange, target = request.target](boost::system::error_code) {
      exchange->write_chunk("last of " + target + ";");
      exchange->finish();
    });
  });
  where = &server;
  net::io_context client_io;
  tcp::socket socket(client_io);
  socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
  net::write(socket, net::buffer(std::string("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
                                             "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close"
                                             "\r\n\r\n")));
  const std::string reply = read_all(socket);
  std::string payload;  // the chunks' text, in order
  for (const char* piece : {"first of /a;", "last of /a;", "first of /b;", "last of /b;"}) {
    if (reply.find(piece) != std::string::npos) payload += piece;
  }
  EXPECT_EQ(payload, "first of /a;last of /a;first of /b;last of /b;") << reply;
  EXPECT_LT(reply.find("last of /a;"), reply.find("first of /b;")) << reply;
}

TEST(HttpServer, StreamsChunksAndTellsTheHandlerWhenTheClientLeaves) {
  std::promise<bool> ended;
  std::shared_ptr<Exchange> held;
  ServerThread server([&](const HttpRequest&, std::shared_ptr<Exchange> exchange) {
    exchange->on_end([&ended](bool aborted) { ended.set_value(aborted); });
    exchange->begin_stream(200, "text/event-stream", {{"x-test", "1"}});
    exchange->write_chunk("data: one\n\n");
    held = exchange;  // never finished: only the client can end it
  });
  {
    net::io_context client_io;
    tcp::socket socket(client_io);
    socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
    net::write(socket, net::buffer(std::string("GET /s HTTP/1.1\r\nHost: x\r\n\r\n")));
    std::string got;
    char buf[1024];
    while (got.find("data: one") == std::string::npos) {
      got.append(buf, socket.read_some(net::buffer(buf)));
    }
    EXPECT_NE(got.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << got;
    EXPECT_NE(got.find("x-test: 1\r\n"), std::string::npos) << got;
    EXPECT_NE(got.find("\r\nb\r\ndata: one\n\n\r\n"), std::string::npos) << got;
  }  // the client closes here
  auto result = ended.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(result.get());
  // Writes after the end are ignored rather than crashing.
  std::promise<void> wrote;
  net::post(server.io(), [&] {
    EXPECT_TRUE(held->ended());
    held->write_chunk("late");
    held->finish();
    held.reset();
    wrote.set_value();
  });
  wrote.get_future().wait();
}

TEST(HttpServer, FinishedStreamEndsWithTheLastChunkAndKeepsTheConnection) {
  std::atomic<int> ends{0};
  ServerThread server([&](const HttpRequest&, std::shared_ptr<Exchange> exchange) {
    exchange->on_end([&ends](bool aborted) { ends += aborted ? 100 : 1; });
    exchange->begin_stream(200, "text/event-stream", {});
    exchange->write_chunk("x");
    exchange->finish();
  });
  net::io_context client_io;
  tcp::socket socket(client_io);
  socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
  net::write(socket,
             net::buffer(std::string("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
                                     "GET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
  const std::string reply = read_all(socket);
  std::size_t streams = 0;
  for (auto at = reply.find("1\r\nx\r\n0\r\n\r\n"); at != std::string::npos;
       at = reply.find("1\r\nx\r\n0\r\n\r\n", at + 1)) {
    ++streams;
  }
  EXPECT_EQ(streams, 2u) << reply;
  EXPECT_EQ(ends.load(), 2);
}

}  // namespace
}  // namespace kvsweep::sim
