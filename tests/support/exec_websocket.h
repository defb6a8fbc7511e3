// `kubectl exec` against the fake API server: the pods/NAME/exec subresource over a WebSocket,
// as kubectl v1.32 speaks it (client-go's WebSocket executor, subprotocol v5.channel.k8s.io;
// v4.channel.k8s.io is taken too). Each binary message's first byte is its channel: 1 stdout,
// 2 stderr, 3 the result as a metav1.Status ({"status":"Success"}, or Failure with reason
// NonZeroExitCode and an ExitCode cause, from which kubectl prints "command terminated with
// exit code N" and exits N), 255 (v5) a stream's close signal; the server then sends a close
// frame (1000). No stdin and no TTY: a request with stdin=true or tty=true is refused.
//
// kubectl v1.32.4 was seen (-v=9 against this fixture) to GET the exec URL with
// "Sec-WebSocket-Protocol: v5.channel.k8s.io" only. A request the fixture refuses (pod not
// running, -i, -t, ...) is answered with a plain HTTP error and a Status: kubectl then retries
// as an SPDY/3.1 POST (X-Stream-Protocol-Version v5..v1), answered the same way, and prints
// "Error from server (BadRequest): <message>", exiting 1. A command that cannot be started
// (no such binary) ends with a Failure Status on channel 3: kubectl prints its message.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/front_door.h"
#include "tests/support/local_process.h"

namespace kvsweep::testing {

// What runs for one exec request: `process` (argv, cwd, env; its output fds are set by the
// server), or, with code != 0, the error answered instead (code 400, reason "BadRequest",
// message "container not found (\"server\")", as the real server words it).
struct ExecResolution {
  int code = 0;
  std::string reason;
  std::string message;
  ProcessSpec process;
};

// Resolves an exec request in namespace `ns` for `pod`'s `container` ("" when kubectl named
// none) running `command`. Called on a connection thread; must be thread-safe.
using ExecResolver = std::function<ExecResolution(const std::string& ns, const std::string& pod,
                                                  const std::string& container,
                                                  const std::vector<std::string>& command)>;

// Whether `path` is /api/v1/namespaces/NS/pods/NAME/exec; sets ns and pod when it is.
bool is_exec_path(const std::string& path, std::string& ns, std::string& pod);

// Serves one exec request on connection `fd` (`rest`: bytes already read past the head): the
// WebSocket handshake, the process's output, its exit status, the close. Returns when the
// process has ended and the connection closed, or `stopping` is set (the process is killed).
void serve_exec(const RequestHead& head, int fd, std::string rest,
                const std::atomic<bool>& stopping, const ExecResolver& resolve);

// base64(SHA-1(key + the RFC 6455 GUID)): the Sec-WebSocket-Accept for a Sec-WebSocket-Key.
std::string websocket_accept(const std::string& key);

}  // namespace kvsweep::testing
