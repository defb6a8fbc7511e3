// `kubectl exec` over a WebSocket against the fake API server: see exec_websocket.h.
#include "tests/support/exec_websocket.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 50;
constexpr uint8_t kStdout = 1;
constexpr uint8_t kStderr = 2;
constexpr uint8_t kError = 3;
// After the process exited, output its children still write is waited for this long at most.
constexpr auto kDrainAfterExit = std::chrono::milliseconds(500);
// After our close frame, the client's is waited for this long at most.
constexpr auto kCloseWait = std::chrono::seconds(1);

uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

std::array<uint8_t, 20> sha1(const std::string& message) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string data = message;
  const uint64_t bits = static_cast<uint64_t>(message.size()) * 8;
  data.push_back(static_cast<char>(0x80));
  while (data.size() % 64 != 56) data.push_back('\0');
  for (int i = 7; i >= 0; --i) data.push_back(static_cast<char>((bits >> (i * 8)) & 0xff));
  for (size_t chunk = 0; chunk < data.size(); chunk += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      w[i] = 0;
      for (int b = 0; b < 4; ++b) {
        w[i] = (w[i] << 8) | static_cast<uint8_t>(data[chunk + static_cast<size_t>(i * 4 + b)]);
      }
    }
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d), k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d, k = 0xCA62C1D6;
      }
      const uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rotl(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::array<uint8_t, 20> out{};
  for (size_t i = 0; i < 20; ++i) out[i] = static_cast<uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

std::string base64(const uint8_t* data, size_t size) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < size; i += 3) {
    uint32_t n = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < size) n |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < size) n |= data[i + 2];
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> query_params(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string item = query.substr(start, end - start);
    const auto eq = item.find('=');
    out.emplace_back(url_decode(item.substr(0, eq)),
                     eq == std::string::npos ? "" : url_decode(item.substr(eq + 1)));
    start = end + 1;
  }
  return out;
}

void answer_error(int fd, int code, const std::string& reason, const std::string& message) {
  const std::string body = json{
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}}.dump();
  const std::string response =
      "HTTP/1.1 " + std::to_string(code) + " " + reason +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  send_all(fd, response.data(), response.size());
}

// One unmasked server frame: FIN set, `opcode`, the payload.
bool send_frame(int fd, uint8_t opcode, const std::string& payload) {
  std::string frame;
  frame += static_cast<char>(0x80 | opcode);
  const size_t n = payload.size();
  if (n < 126) {
    frame += static_cast<char>(n);
  } else if (n < 65536) {
    frame += static_cast<char>(126);
    frame += static_cast<char>((n >> 8) & 0xff);
    frame += static_cast<char>(n & 0xff);
  } else {
    frame += static_cast<char>(127);
    for (int i = 7; i >= 0; --i)
      frame += static_cast<char>((static_cast<uint64_t>(n) >> (i * 8)) & 0xff);
  }
  frame += payload;
  return send_all(fd, frame.data(), frame.size());
}

bool send_channel(int fd, uint8_t channel, const std::string& data) {
  return send_frame(fd, 0x2, std::string(1, static_cast<char>(channel)) + data);
}

// Client frames read off the connection: answers pings, notes a close. Data messages (stdin,
// resize, close signals) are read and dropped: no stdin is taken.
struct FrameReader {
  std::string buffer;
  bool closed = false;  // a close frame came, or the connection ended

  // Parses the whole frames in `buffer`.
  void parse(int fd) {
    while (buffer.size() >= 2) {
      const auto byte = [&](size_t i) { return static_cast<uint8_t>(buffer[i]); };
      const uint8_t opcode = byte(0) & 0x0f;
      const bool masked = (byte(1) & 0x80) != 0;
      uint64_t length = byte(1) & 0x7f;
      size_t offset = 2;
      if (length == 126) {
        if (buffer.size() < 4) return;
        length = (uint64_t{byte(2)} << 8) | byte(3);
        offset = 4;
      } else if (length == 127) {
        if (buffer.size() < 10) return;
        length = 0;
        for (size_t i = 2; i < 10; ++i) length = (length << 8) | byte(i);
        offset = 10;
      }
      const size_t mask_at = offset;
      if (masked) offset += 4;
      if (buffer.size() < offset + length) return;
      std::string payload = buffer.substr(offset, length);
      if (masked) {
        for (size_t i = 0; i < payload.size(); ++i) payload[i] ^= buffer[mask_at + i % 4];
      }
      buffer.erase(0, offset + length);
      if (opcode == 0x8) {
        closed = true;
      } else if (opcode == 0x9) {
        send_frame(fd, 0xA, payload);  // pong
      }
    }
  }

  // Reads what the client sent, if anything. False once the connection ended.
  bool read(int fd) {
    char chunk[8192];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      closed = true;
      return false;
    }
    if (n > 0) buffer.append(chunk, static_cast<size_t>(n));
    parse(fd);
    return true;
  }
};

std::string exit_status_json(int exit_code) {
  if (exit_code == 0) return json{{"metadata", json::object()}, {"status", "Success"}}.dump();
  return json{
      {"metadata", json::object()},
      {"status", "Failure"},
      {"message",
       "command terminated with non-zero exit code: error executing command "
       "[...], exit code " +
           std::to_string(exit_code)},
      {"reason", "NonZeroExitCode"},
      {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(exit_code)}}}}}}}
      .dump();
}

// Runs the process, relaying its output as channel messages until it ended and its pipes
// closed. Returns the exit code; -1 when the client went away or the server stops (the process
// is killed then).
int run_streaming(int fd, FrameReader& reader, ProcessSpec spec, const std::atomic<bool>& stopping,
                  std::string& start_error) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return -1;
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return -1;
  }
  spec.output_path.clear();
  spec.stdout_fd = out_pipe[1];
  spec.stderr_fd = err_pipe[1];
  const pid_t pid = spawn_process(spec, start_error);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  int pipes[2] = {out_pipe[0], err_pipe[0]};
  if (pid < 0) {
    ::close(pipes[0]);
    ::close(pipes[1]);
    return -1;
  }
  bool abandoned = false;
  std::optional<Clock::time_point> exited_at;
  char chunk[32768];
  while (pipes[0] >= 0 || pipes[1] >= 0) {
    if (stopping || reader.closed) {
      abandoned = true;
      break;
    }
    if (!exited_at && has_exited(pid)) exited_at = Clock::now();
    if (exited_at && Clock::now() - *exited_at > kDrainAfterExit) break;
    pollfd p[3] = {{fd, POLLIN, 0}, {pipes[0], POLLIN, 0}, {pipes[1], POLLIN, 0}};
    if (::poll(p, 3, kPollMs) <= 0) continue;
    if (p[0].revents != 0) reader.read(fd);
    for (int i = 0; i < 2; ++i) {
      if (pipes[i] < 0 || p[i + 1].revents == 0) continue;
      const ssize_t n = ::read(pipes[i], chunk, sizeof chunk);
      if (n > 0) {
        if (!send_channel(fd, i == 0 ? kStdout : kStderr,
                          std::string(chunk, static_cast<size_t>(n)))) {
          reader.closed = true;
        }
      } else if (n == 0 || errno != EINTR) {
        ::close(pipes[i]);
        pipes[i] = -1;
      }
    }
  }
  for (int p : pipes) {
    if (p >= 0) ::close(p);
  }
  if (abandoned) {
    signal_group(pid, SIGKILL);
  } else {
    // Its children may linger (the pipes stayed open); the command is over.
    while (!stopping && !has_exited(pid)) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, kPollMs) > 0) reader.read(fd);
    }
    if (!has_exited(pid)) signal_group(pid, SIGKILL);
  }
  wait_exited(pid);
  signal_group(pid, SIGKILL);  // what it left behind in its group
  const int code = reap(pid);
  return abandoned ? -1 : code;
}

}  // namespace

std::string websocket_accept(const std::string& key) {
  const auto digest = sha1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
  return base64(digest.data(), digest.size());
}

bool is_exec_path(const std::string& path, std::string& ns, std::string& pod) {
  static const std::string kPrefix = "/api/v1/namespaces/";
  if (path.rfind(kPrefix, 0) != 0) return false;
  const std::string rest = path.substr(kPrefix.size());
  const auto slash1 = rest.find('/');
  if (slash1 == std::string::npos || rest.compare(slash1, 6, "/pods/") != 0) return false;
  const auto slash2 = rest.find('/', slash1 + 6);
  if (slash2 == std::string::npos || rest.substr(slash2) != "/exec") return false;
  ns = rest.substr(0, slash1);
  pod = rest.substr(slash1 + 6, slash2 - slash1 - 6);
  return !ns.empty() && !pod.empty();
}

void serve_exec(const RequestHead& head, int fd, std::string rest,
                const std::atomic<bool>& stopping, const ExecResolver& resolve) {
  std::string ns;
  std::string pod;
  if (!is_exec_path(head.path, ns, pod)) return answer_error(fd, 404, "NotFound", "not found");
  std::vector<std::string> command;
  std::string container;
  bool stdin_wanted = false;
  bool tty = false;
  for (const auto& [key, value] : query_params(head.query)) {
    if (key == "command") command.push_back(value);
    if (key == "container") container = value;
    if (key == "stdin") stdin_wanted = value == "true" || value == "1";
    if (key == "tty") tty = value == "true" || value == "1";
  }
  if (stdin_wanted || tty) {
    return answer_error(fd, 400, "BadRequest",
                        "the fake API server's exec takes no stdin and no TTY (-i, -t)");
  }
  if (command.empty()) {
    return answer_error(fd, 400, "BadRequest", "you must specify at least 1 command");
  }
  ExecResolution resolution = resolve(ns, pod, container, command);
  if (resolution.code != 0) {
    return answer_error(fd, resolution.code, resolution.reason, resolution.message);
  }
  if (head.header("upgrade").find("websocket") == std::string::npos &&
      head.header("upgrade").find("WebSocket") == std::string::npos) {
    return answer_error(
        fd, 400, "BadRequest",
        "the fake API server speaks exec over WebSocket only, not " + head.header("upgrade"));
  }
  std::string protocol;
  const std::string offered = head.header("sec-websocket-protocol");
  for (const char* candidate : {"v5.channel.k8s.io", "v4.channel.k8s.io"}) {
    if (offered.find(candidate) != std::string::npos) {
      protocol = candidate;
      break;
    }
  }
  if (protocol.empty()) {
    return answer_error(fd, 400, "BadRequest",
                        "no subprotocol the fake server speaks was offered: " + offered);
  }
  const std::string handshake =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Accept: " +
      websocket_accept(head.header("sec-websocket-key")) +
      "\r\nSec-WebSocket-Protocol: " + protocol + "\r\n\r\n";
  if (!send_all(fd, handshake.data(), handshake.size())) return;

  FrameReader reader;
  reader.buffer = std::move(rest);
  reader.parse(fd);
  std::string start_error;
  const int code = run_streaming(fd, reader, std::move(resolution.process), stopping, start_error);
  if (code < 0 && start_error.empty()) return;  // the client went away, or the server stops
  if (!start_error.empty()) {
    // As a runtime reports an exec whose binary is missing: the Status message, exit code 126
    // is not known to kubectl, it prints the message.
    send_channel(fd, kError,
                 json{{"metadata", json::object()},
                      {"status", "Failure"},
                      {"message", "exec failed: unable to start container process: " + start_error},
                      {"reason", "InternalError"}}
                     .dump());
  } else {
    send_channel(fd, kError, exit_status_json(code));
  }
  send_frame(fd, 0x8, std::string("\x03\xe8", 2));  // close, 1000 normal closure
  const auto deadline = Clock::now() + kCloseWait;
  while (!reader.closed && !stopping && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) > 0 && !reader.read(fd)) break;
  }
}

}  // namespace kvsweep::testing
