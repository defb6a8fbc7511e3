// The fake Kubernetes API server: see fake_apiserver.h.
#include "tests/support/fake_apiserver.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>

#include "tests/support/front_door.h"

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// An idle watch re-checks for shutdown this often, so destruction never waits long on one.
constexpr auto kWatchPoll = std::chrono::milliseconds(100);
// An idle watch writes a blank line (JSON whitespace, skipped by client-go's decoder) this
// often: a write is the only way to notice a client that went away (a kubectl killed by its
// timeout) and give back the server thread the watch holds.
constexpr auto kWatchHeartbeat = std::chrono::seconds(1);
// Events kept so that a watch can resume from the resourceVersion of an earlier list.
constexpr size_t kMaxHistory = 10000;
// Every open watch holds a server thread, and a test may run several kubectl at once.
constexpr size_t kServerThreads = 16;
// A connection holds a server thread while it waits for a request, and shutdown waits for it:
// one request per connection (cheap on loopback) leaves no idle keep-alive connections, and
// one that never sends a request is given up after a second.
constexpr size_t kRequestsPerConnection = 1;
constexpr time_t kKeepAliveSeconds = 1;

struct Resource {
  std::string plural;
  std::string singular;
  std::string kind;
  std::string group;  // "" for the core group
  std::string version;
  std::vector<std::string> short_names;
};

const std::vector<Resource>& served_resources() {
  static const std::vector<Resource> kResources = {
      {"pods", "pod", "Pod", "", "v1", {"po"}},
      {"deployments", "deployment", "Deployment", "apps", "v1", {"deploy"}},
      {"models", "model", "Model", "kubeai.org", "v1", {}},
      {"dynamographdeployments",
       "dynamographdeployment",
       "DynamoGraphDeployment",
       "nvidia.com",
       "v1alpha1",
       {"dgd"}},
      // What deploy/serve.yaml and deploy/cronjob.yaml hold, for their dry runs.
      {"services", "service", "Service", "", "v1", {"svc"}},
      {"cronjobs", "cronjob", "CronJob", "batch", "v1", {"cj"}},
      // Indexed Jobs of load shards (tests/support/fake_jobs.h runs their pods).
      {"jobs", "job", "Job", "batch", "v1", {}},
      // llm-d: the InferencePool (Gateway API Inference Extension v1.0.0's v1 API) and the
      // ConfigMap its endpoint picker reads its EndpointPickerConfig from.
      {"inferencepools", "inferencepool", "InferencePool", "inference.networking.k8s.io", "v1", {}},
      {"configmaps", "configmap", "ConfigMap", "", "v1", {"cm"}},
  };
  return kResources;
}

std::string group_version(const Resource& r) {
  return r.group.empty() ? r.version : r.group + "/" + r.version;
}

// How the real server names a resource in messages: `pods`, `models.kubeai.org`.
std::string qualified_name(const Resource& r) {
  return r.group.empty() ? r.plural : r.plural + "." + r.group;
}

const Resource* find_resource(const std::string& plural) {
  for (const auto& r : served_resources()) {
    if (r.plural == plural) return &r;
  }
  return nullptr;
}

const Resource& resource_or_throw(const std::string& plural) {
  const Resource* r = find_resource(plural);
  if (r == nullptr) throw std::invalid_argument("FakeApiServer: unknown resource " + plural);
  return *r;
}

// A request the server refuses; answered as a Status object, which kubectl prints as
// "Error from server (<reason>): <message>".
struct ApiError {
  int code;
  std::string reason;
  std::string message;
};

json status_json(const ApiError& e) {
  return {{"kind", "Status"},    {"apiVersion", "v1"},   {"metadata", json::object()},
          {"status", "Failure"}, {"message", e.message}, {"reason", e.reason},
          {"code", e.code}};
}

ApiError not_found(const Resource& r, const std::string& name) {
  return {404, "NotFound", qualified_name(r) + " \"" + name + "\" not found"};
}

// A fault's answer, worded as the real server words each code.
ApiError fault_error(int code, const std::string& qualified, const std::string& name) {
  const std::string object = qualified + (name.empty() ? "" : " \"" + name + "\"");
  switch (code) {
    case 409:
      return {409, "Conflict",
              "Operation cannot be fulfilled on " + object +
                  ": the object has been modified; please apply your changes to the latest "
                  "version and try again"};
    case 422:  // an answer that would be the same again: not to be retried
      return {422, "Invalid",
              object + " is invalid: spec: Invalid value: \"object\": injected fault"};
    case 429:
      return {429, "TooManyRequests",
              "the server has received too many requests and has asked us to try again later"};
    case 503:
      return {503, "ServiceUnavailable", "the server is currently unable to handle the request"};
    case 504:
      return {504, "Timeout",
              "the server was unable to return a response in the time allotted, but may still "
              "be processing the request"};
    default:
      return {code, "InternalError",
              "Internal error occurred: etcdserver: request timed out (injected fault)"};
  }
}

ApiError invalid(const std::string& detail) {
  return {422, "Invalid",
          "the server rejected our request due to an error in our request: " + detail};
}

std::string now_rfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(' ') - begin + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(sep, start), s.size());
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// One term of a label or field selector: `k=v`, `k==v`, `k!=v`, `k`, `!k`.
struct Requirement {
  enum class Op { kEquals, kNotEquals, kExists, kNotExists };
  Op op;
  std::string key;
  std::string value;
};

std::vector<Requirement> parse_selector(const std::string& text) {
  // "!=" and "==" before "=", which they contain.
  static const std::pair<std::string_view, Requirement::Op> kOperators[] = {
      {"!=", Requirement::Op::kNotEquals},
      {"==", Requirement::Op::kEquals},
      {"=", Requirement::Op::kEquals},
  };
  std::vector<Requirement> out;
  for (const auto& raw : split(text, ',')) {
    const std::string term = trim(raw);
    if (term.empty()) continue;
    bool parsed = false;
    for (const auto& [symbol, op] : kOperators) {
      if (const auto pos = term.find(symbol); pos != std::string::npos) {
        out.push_back({op, trim(term.substr(0, pos)), trim(term.substr(pos + symbol.size()))});
        parsed = true;
        break;
      }
    }
    if (parsed) continue;
    if (term[0] == '!') {
      out.push_back({Requirement::Op::kNotExists, trim(term.substr(1)), ""});
    } else {
      out.push_back({Requirement::Op::kExists, term, ""});
    }
  }
  return out;
}

std::optional<std::string> as_text(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::optional<std::string> label_value(const json& object, const std::string& key) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->contains("labels")) return std::nullopt;
  const json& labels = (*meta)["labels"];
  const auto it = labels.find(key);
  return it == labels.end() ? std::nullopt : as_text(*it);
}

// A field selector key is a dotted path into the object: metadata.name, status.phase, ...
std::optional<std::string> field_value(const json& object, const std::string& key) {
  const json* node = &object;
  for (const auto& part : split(key, '.')) {
    if (!node->is_object()) return std::nullopt;
    const auto it = node->find(part);
    if (it == node->end()) return std::nullopt;
    node = &*it;
  }
  return as_text(*node);
}

using Lookup = std::optional<std::string> (*)(const json&, const std::string&);

bool satisfies(const std::vector<Requirement>& requirements, const json& object, Lookup lookup) {
  for (const auto& req : requirements) {
    const auto value = lookup(object, req.key);
    switch (req.op) {
      case Requirement::Op::kEquals:
        if (value != req.value) return false;
        break;
      case Requirement::Op::kNotEquals:
        if (value == req.value) return false;
        break;
      case Requirement::Op::kExists:
        if (!value) return false;
        break;
      case Requirement::Op::kNotExists:
        if (value) return false;
        break;
    }
  }
  return true;
}

// Which objects of a list, watch or deletecollection request are meant.
struct Selection {
  const Resource* resource = nullptr;
  std::string namespace_name;  // "" for all namespaces
  std::vector<Requirement> labels;
  std::vector<Requirement> fields;

  bool selects(const std::string& plural, const std::string& ns, const json& object) const {
    return plural == resource->plural && (namespace_name.empty() || namespace_name == ns) &&
           satisfies(labels, object, label_value) && satisfies(fields, object, field_value);
  }
};

// A request path naming a served resource's collection or one of its objects.
struct ObjectPath {
  const Resource* resource = nullptr;
  std::string namespace_name;  // "" for a list across all namespaces
  std::string name;            // "" for the collection
};

// /api/v1[/namespaces/NS]/RESOURCE[/NAME] and /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME];
// anything else (discovery, namespaces, subresources) is not one.
std::optional<ObjectPath> parse_object_path(const std::string& path) {
  std::vector<std::string> parts;
  for (auto& part : split(path, '/')) {
    if (!part.empty()) parts.push_back(std::move(part));
  }
  std::string group;
  std::string version;
  size_t i = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    version = parts[1];
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    group = parts[1];
    version = parts[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  ObjectPath out;
  if (i + 1 < parts.size() && parts[i] == "namespaces") {
    out.namespace_name = parts[i + 1];
    i += 2;
  }
  if (i >= parts.size()) return std::nullopt;
  out.resource = find_resource(parts[i++]);
  if (out.resource == nullptr || out.resource->group != group || out.resource->version != version) {
    return std::nullopt;
  }
  if (i < parts.size()) out.name = parts[i++];
  if (i != parts.size()) return std::nullopt;
  // Every served resource is namespaced: a single object is always addressed in a namespace.
  if (out.namespace_name.empty() && !out.name.empty()) return std::nullopt;
  return out;
}

// The documents served at fixed paths: the legacy (non-aggregated) discovery, which kubectl
// accepts after asking for the aggregated form first, and a sketch of OpenAPI v3.
std::map<std::string, json> discovery_documents(int port) {
  std::map<std::string, json> docs;
  docs["/version"] = {{"major", "1"},
                      {"minor", "32"},
                      {"gitVersion", "v1.32.0"},
                      {"gitCommit", "70d3cc986aa8221cd1dfb1121852688902d3bf53"},
                      {"gitTreeState", "clean"},
                      {"buildDate", "2024-12-11T17:59:15Z"},
                      {"goVersion", "go1.23.3"},
                      {"compiler", "gc"},
                      {"platform", "linux/amd64"}};
  docs["/api"] = {
      {"kind", "APIVersions"},
      {"versions", {"v1"}},
      {"serverAddressByClientCIDRs",
       {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1:" + std::to_string(port)}}}}};
  json groups = json::array();
  json openapi_paths = json::object();
  for (const auto& r : served_resources()) {
    const std::string gv = group_version(r);
    const std::string prefix = r.group.empty() ? "api/" + gv : "apis/" + gv;
    json& list = docs["/" + prefix];
    if (list.is_null()) {
      list = {{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", gv},
              {"resources", json::array()}};
      if (!r.group.empty()) {
        const json version = {{"groupVersion", gv}, {"version", r.version}};
        groups.push_back(
            {{"name", r.group}, {"versions", {version}}, {"preferredVersion", version}});
      }
      openapi_paths[prefix] = {{"serverRelativeURL", "/openapi/v3/" + prefix}};
      docs["/openapi/v3/" + prefix] = {{"openapi", "3.0.0"},
                                       {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                                       {"paths", json::object()}};
    }
    json resource = {
        {"name", r.plural},
        {"singularName", r.singular},
        {"namespaced", true},
        {"kind", r.kind},
        {"verbs",
         {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}};
    if (!r.short_names.empty()) resource["shortNames"] = r.short_names;
    list["resources"].push_back(std::move(resource));
    // kubectl create and apply validate a manifest on the client unless this says the server
    // takes fieldValidation on PATCH, and without any OpenAPI they fail.
    docs["/openapi/v3/" + prefix]["paths"]
        ["/" + prefix + "/namespaces/{namespace}/" + r.plural + "/{name}"] = {
            {"patch",
             {{"x-kubernetes-group-version-kind",
               {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
              {"parameters", {{{"name", "fieldValidation"}, {"in", "query"}}}}}}};
  }
  docs["/apis"] = {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
  docs["/openapi/v3"] = {{"paths", openapi_paths}};
  return docs;
}

// GET /api/v1/namespaces/NS/pods/NAME/log: kubectl logs.
bool is_pod_log_path(const std::string& path) {
  const auto parts = split(path, '/');
  return parts.size() == 8 && parts[1] == "api" && parts[2] == "v1" && parts[3] == "namespaces" &&
         parts[5] == "pods" && parts[7] == "log" && !parts[4].empty() && !parts[6].empty();
}

// The parameters after the media type ("; charset=utf-8") do not change how a body is read.
std::string media_type(const std::string& content_type) {
  return trim(content_type.substr(0, content_type.find(';')));
}

json parse_body(const std::string& body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw ApiError{400, "BadRequest", "the request body is not JSON"};
  return parsed;
}

// The metadata of an object sent to create or replace in namespace `ns`, which it gets if it
// names none.
json& request_metadata(json& object, const std::string& ns) {
  if (!object.is_object() || !object["metadata"].is_object()) {
    throw ApiError{400, "BadRequest", "the object has no metadata"};
  }
  json& meta = object["metadata"];
  if (meta.value("namespace", ns) != ns) {
    throw ApiError{400, "BadRequest",
                   "the namespace of the provided object does not match the namespace sent on "
                   "the request"};
  }
  meta["namespace"] = ns;
  return meta;
}

// A non-negative integer query parameter; a malformed one is the client's error.
uint64_t number_param(const std::string& name, const std::string& value) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) {
    throw ApiError{400, "BadRequest", "invalid " + name + " " + value};
  }
  return std::stoull(value);
}

std::string namespace_of(const json& object) {
  return object.at("metadata").value("namespace", "default");
}

std::string name_of(const json& object) { return object.at("metadata").value("name", ""); }

std::string event_line(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

// The state of one open watch stream, owned by its content provider.
struct Watch {
  Selection selection;
  uint64_t cursor = 0;  // events up to this resourceVersion are sent or skipped
  std::string pending;  // lines to send before anything else
  Clock::time_point deadline = Clock::time_point::max();
  Clock::time_point last_write = Clock::now();
};

}  // namespace

struct FakeApiServer::Impl {
  using Key = std::tuple<std::string, std::string, std::string>;  // resource, namespace, name

  struct Event {
    uint64_t resource_version;
    std::string type;  // ADDED, MODIFIED, DELETED
    const Resource* resource;
    json object;
  };

  // An action of after(), ordered by when it is due, then by when it was given.
  using TimerKey = std::pair<Clock::time_point, uint64_t>;

  FakeApiServer* owner = nullptr;
  httplib::Server http;
  std::thread listener;
  int http_port = 0;  // internal: what the front door relays to
  int port = 0;       // public: the front door's
  std::unique_ptr<FrontDoor> front;
  std::map<std::string, json> discovery;

  mutable std::mutex mu;
  std::condition_variable changed;  // an event was recorded, or the server is stopping
  bool stopping = false;
  uint64_t resource_version = 0;  // of the latest event; every change is one event
  std::map<Key, json> objects;
  std::deque<Event> history;
  std::vector<ApiCall> calls;
  Controller controller;
  std::map<int, Controller> more_controllers;  // add_controller's, by id
  int next_controller_id = 1;
  PodRuntime runtime;
  std::mt19937_64 rng{std::random_device{}()};
  std::map<std::string, double> termination_delay_s;  // resource plural -> grace period
  std::vector<Fault> faults;                          // each with the answers it has left

  // after(): its own lock, so an action may take `mu` (through put/get/...) while another
  // thread schedules the next one.
  std::mutex timer_mu;
  std::condition_variable timer_changed;
  std::map<TimerKey, std::function<void()>> timers;
  uint64_t timer_sequence = 0;
  bool timers_stopping = false;
  std::thread timer_thread;

  void run_timers();
  void schedule(double delay_s, std::function<void()> action);
  // The fault a request meets, if any, with its count taken down.
  std::optional<Fault> take_fault_locked(const std::string& method, const std::string& resource,
                                         const std::string& name);
  // DELETE of one stored object: at once, or (with a termination delay) marked Terminating
  // and removed later. Returns the object as the answer shows it.
  json delete_locked(const Resource& r, const json& existing);

  void start();
  void handle(const httplib::Request& req, httplib::Response& res);
  // kubectl exec, on a front door connection: true when the request was one (served).
  bool take_exec(const RequestHead& head, int fd, std::string rest,
                 const std::atomic<bool>& stopping);
  ExecResolution resolve_exec(const std::string& ns, const std::string& pod,
                              const std::string& container, const std::vector<std::string>& argv);
  json pod_log(const std::string& path, const httplib::Request& req, httplib::Response& res);
  bool serve_object(const httplib::Request& req, const ObjectPath& target, json& reply, int& code,
                    httplib::Response& res);
  json list_objects(const Selection& selection);
  void start_watch(const httplib::Request& req, Selection selection, httplib::Response& res);
  bool pump_watch(Watch& watch, httplib::DataSink& sink);
  json create(const Resource& r, const std::string& ns, json object);
  json replace(const Resource& r, const std::string& ns, const std::string& name, json object);
  json patch(const Resource& r, const std::string& ns, const std::string& name,
             const std::string& content_type, const json& patch);
  json erase(const Resource& r, const std::string& ns, const std::string& name);
  json erase_all(const Selection& selection);
  json dry_run(const httplib::Request& req, const ObjectPath& target, int& code);

  const json* find_locked(const Resource& r, const std::string& ns, const std::string& name) const {
    const auto it = objects.find(Key{r.plural, ns, name});
    return it == objects.end() ? nullptr : &it->second;
  }

  std::string new_uid_locked() {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string uid;
    for (int i = 0; i < 32; ++i) {
      if (i == 8 || i == 12 || i == 16 || i == 20) uid += '-';
      uid += kHex[rng() % 16];
    }
    return uid;
  }

  // Server-managed fields of an object about to be stored: apiVersion and kind from the
  // resource; uid, creationTimestamp and generation kept from `existing` (an update, where a
  // spec change bumps the generation, as the real server does) or new (a create).
  void stamp_locked(const Resource& r, json& object, const json* existing) {
    object["apiVersion"] = group_version(r);
    object["kind"] = r.kind;
    json& meta = object["metadata"];
    if (existing != nullptr) {
      const json& old = (*existing)["metadata"];
      meta["uid"] = old["uid"];
      meta["creationTimestamp"] = old["creationTimestamp"];
      const int64_t generation = old.value("generation", int64_t{1});
      const bool spec_changed = object.value("spec", json()) != existing->value("spec", json());
      meta["generation"] = spec_changed ? generation + 1 : generation;
    } else {
      meta["uid"] = new_uid_locked();
      meta["creationTimestamp"] = now_rfc3339();
      if (!meta.contains("generation")) meta["generation"] = 1;
    }
  }

  // Gives `object` the next resourceVersion, stores it (or drops it, for DELETED) and records
  // the event for watches. Returns the object as stored.
  json commit_locked(const Resource& r, json object, const std::string& type) {
    object["metadata"]["resourceVersion"] = std::to_string(++resource_version);
    const Key key{r.plural, namespace_of(object), name_of(object)};
    if (type == "DELETED") {
      objects.erase(key);
    } else {
      objects[key] = object;
    }
    history.push_back({resource_version, type, &r, object});
    if (history.size() > kMaxHistory) history.pop_front();
    changed.notify_all();
    return object;
  }
};

void FakeApiServer::Impl::start() {
  http.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  http.set_keep_alive_max_count(kRequestsPerConnection);
  http.set_keep_alive_timeout(kKeepAliveSeconds);
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    handle(req, res);
  };
  http.Get(".*", handler);
  http.Post(".*", handler);
  http.Put(".*", handler);
  http.Patch(".*", handler);
  http.Delete(".*", handler);
  http_port = http.bind_to_any_port("127.0.0.1");
  if (http_port <= 0) throw std::runtime_error("FakeApiServer: cannot bind a port on 127.0.0.1");
  front = std::make_unique<FrontDoor>(
      http_port,
      [this](const RequestHead& head, int fd, std::string rest, const std::atomic<bool>& stopping) {
        return take_exec(head, fd, std::move(rest), stopping);
      });
  port = front->port();
  discovery = discovery_documents(port);
  listener = std::thread([this] { http.listen_after_bind(); });
  timer_thread = std::thread([this] { run_timers(); });
  // stop() is a no-op until the accept loop runs, so the destructor may only rely on it then.
  while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void FakeApiServer::Impl::handle(const httplib::Request& req, httplib::Response& res) {
  ApiCall call;
  call.method = req.method;
  call.path = req.path;
  const auto q = req.target.find('?');
  call.query = q == std::string::npos ? "" : req.target.substr(q + 1);
  call.content_type = req.get_header_value("Content-Type");
  call.body = req.body;
  const auto target = parse_object_path(req.path);
  if (target) {
    call.resource = target->resource->plural;
    call.namespace_name = target->namespace_name;
    call.name = target->name;
  }
  std::optional<Fault> fault;
  {
    std::lock_guard lock(mu);
    calls.push_back(call);
    if (target) fault = take_fault_locked(call.method, call.resource, call.name);
  }

  json reply;
  int code = 200;
  bool mutated = false;
  try {
    if (fault) {
      // A slow answer: waits in steps so that destruction is never held up by it.
      const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(fault->delay_s));
      {
        std::unique_lock lock(mu);
        changed.wait_until(lock, until, [&] { return stopping || Clock::now() >= until; });
      }
      if (fault->meanwhile) fault->meanwhile(*owner);
      if (fault->code != 0) {
        throw fault_error(fault->code, qualified_name(*target->resource), call.name);
      }
    }
    if (target && req.get_param_value("dryRun") == "All") {
      // kubectl apply --dry-run=server: answered as the real server would, nothing stored.
      reply = dry_run(req, *target, code);
    } else if (target) {
      mutated = serve_object(req, *target, reply, code, res);
    } else if (req.method == "GET" && is_pod_log_path(req.path)) {
      reply = pod_log(req.path, req, res);
    } else if (const auto doc = discovery.find(req.path);
               req.method == "GET" && doc != discovery.end()) {
      reply = doc->second;
    } else {
      throw ApiError{404, "NotFound", "the server could not find the requested resource"};
    }
  } catch (const ApiError& e) {
    reply = status_json(e);
    code = e.code;
  } catch (const json::exception& e) {  // a body of the wrong shape: a string for a name, ...
    reply = status_json({400, "BadRequest", e.what()});
    code = 400;
  }
  if (!reply.is_null()) {
    res.status = code;
    res.set_content(reply.dump(), "application/json");
  }
  if (mutated) {
    std::vector<Controller> notify;
    {
      std::lock_guard lock(mu);
      if (controller) notify.push_back(controller);
      for (const auto& [id, more] : more_controllers) notify.push_back(more);
    }
    for (const auto& each : notify) each(*owner, call);
  }
}

bool FakeApiServer::Impl::take_exec(const RequestHead& head, int fd, std::string rest,
                                    const std::atomic<bool>& stopping) {
  std::string ns;
  std::string pod;
  if (!is_exec_path(head.path, ns, pod)) return false;
  ApiCall call;
  call.method = head.method;
  call.path = head.path;
  call.query = head.query;
  {
    std::lock_guard lock(mu);
    calls.push_back(call);
  }
  serve_exec(head, fd, std::move(rest), stopping,
             [this](const std::string& n, const std::string& p, const std::string& c,
                    const std::vector<std::string>& argv) { return resolve_exec(n, p, c, argv); });
  return true;
}

ExecResolution FakeApiServer::Impl::resolve_exec(const std::string& ns, const std::string& pod,
                                                 const std::string& container,
                                                 const std::vector<std::string>& argv) {
  ExecResolver exec;
  std::string first_container;
  {
    std::lock_guard lock(mu);
    const json* object = find_locked(resource_or_throw("pods"), ns, pod);
    if (object == nullptr) {
      ExecResolution missing;
      missing.code = 404;
      missing.reason = "NotFound";
      missing.message = "pods \"" + pod + "\" not found";
      return missing;
    }
    const json containers = (*object)["spec"].value("containers", json::array());
    if (!containers.empty()) first_container = containers[0].value("name", "");
    exec = runtime.exec;
  }
  const std::string name = container.empty() ? first_container : container;
  if (exec) return exec(ns, pod, name, argv);
  ExecResolution none;
  none.code = 400;
  none.reason = "BadRequest";
  none.message = "container not found (\"" + name + "\")";
  return none;
}

json FakeApiServer::Impl::pod_log(const std::string& path, const httplib::Request& req,
                                  httplib::Response& res) {
  const auto parts = split(path, '/');  // "", api, v1, namespaces, NS, pods, NAME, log
  const std::string& ns = parts[4];
  const std::string& pod = parts[6];
  std::string container = req.get_param_value("container");
  std::function<std::optional<std::string>(const std::string&, const std::string&,
                                           const std::string&)>
      logs;
  std::string waiting = "ContainerCreating";
  {
    std::lock_guard lock(mu);
    const json* object = find_locked(resource_or_throw("pods"), ns, pod);
    if (object == nullptr) throw not_found(resource_or_throw("pods"), pod);
    const json containers = (*object)["spec"].value("containers", json::array());
    if (container.empty() && !containers.empty()) container = containers[0].value("name", "");
    for (const auto& status : (*object)["status"].value("containerStatuses", json::array())) {
      if (status.value("name", "") == container && status["state"].contains("waiting")) {
        waiting = status["state"]["waiting"].value("reason", waiting);
      }
    }
    logs = runtime.logs;
  }
  std::optional<std::string> text;
  if (logs) text = logs(ns, pod, container);
  if (!text) {
    throw ApiError{
        400, "BadRequest",
        "container \"" + container + "\" in pod \"" + pod + "\" is waiting to start: " + waiting};
  }
  res.status = 200;
  res.set_content(*text, "text/plain");
  return nullptr;
}

// Serves a request on an ObjectPath: sets `reply` and `code`, or starts a watch stream on
// `res`. Returns whether it was a mutating request (for the controller), even a no-op patch.
bool FakeApiServer::Impl::serve_object(const httplib::Request& req, const ObjectPath& target,
                                       json& reply, int& code, httplib::Response& res) {
  const Resource& r = *target.resource;
  const std::string& ns = target.namespace_name;
  if (target.name.empty()) {
    Selection selection{&r, ns, parse_selector(req.get_param_value("labelSelector")),
                        parse_selector(req.get_param_value("fieldSelector"))};
    if (req.method == "GET") {
      const std::string watch = req.get_param_value("watch");
      if (watch == "true" || watch == "1") {
        start_watch(req, std::move(selection), res);
      } else {
        reply = list_objects(selection);
      }
      return false;
    }
    if (req.method == "POST" && !ns.empty()) {
      reply = create(r, ns, parse_body(req.body));
      code = 201;
      return true;
    }
    if (req.method == "DELETE") {
      reply = erase_all(selection);
      return true;
    }
  } else {
    const std::string& name = target.name;
    if (req.method == "GET") {
      std::lock_guard lock(mu);
      const json* object = find_locked(r, ns, name);
      if (object == nullptr) throw not_found(r, name);
      reply = *object;
      return false;
    }
    if (req.method == "PUT") {
      reply = replace(r, ns, name, parse_body(req.body));
      return true;
    }
    if (req.method == "PATCH") {
      reply = patch(r, ns, name, media_type(req.get_header_value("Content-Type")),
                    parse_body(req.body));
      return true;
    }
    if (req.method == "DELETE") {
      reply = erase(r, ns, name);
      return true;
    }
  }
  throw ApiError{405, "MethodNotAllowed",
                 "the server does not allow this method on the requested resource"};
}

// A mutating request with dryRun=All: a create (POST) answers the object as it would be
// stored, with the server's fields; anything else on an object that exists answers it as it
// is. Nothing is stored and no watcher or controller hears of it.
json FakeApiServer::Impl::dry_run(const httplib::Request& req, const ObjectPath& target,
                                  int& code) {
  const Resource& r = *target.resource;
  if (req.method == "POST" && target.name.empty() && !target.namespace_name.empty()) {
    json object = parse_body(req.body);
    json& meta = request_metadata(object, target.namespace_name);
    const std::string name = meta.value("name", "");
    std::lock_guard lock(mu);
    if (name.empty() || find_locked(r, target.namespace_name, name) != nullptr) {
      throw ApiError{409, "AlreadyExists", qualified_name(r) + " \"" + name + "\" already exists"};
    }
    stamp_locked(r, object, nullptr);
    code = 201;
    return object;
  }
  std::lock_guard lock(mu);
  const json* existing = find_locked(r, target.namespace_name, target.name);
  if (existing == nullptr) throw not_found(r, target.name);
  return *existing;
}

json FakeApiServer::Impl::list_objects(const Selection& selection) {
  const Resource& r = *selection.resource;
  json items = json::array();
  std::lock_guard lock(mu);
  for (const auto& [key, object] : objects) {
    if (selection.selects(std::get<0>(key), std::get<1>(key), object)) items.push_back(object);
  }
  return {{"kind", r.kind + "List"},
          {"apiVersion", group_version(r)},
          {"metadata", {{"resourceVersion", std::to_string(resource_version)}}},
          {"items", std::move(items)}};
}

void FakeApiServer::Impl::start_watch(const httplib::Request& req, Selection selection,
                                      httplib::Response& res) {
  auto watch = std::make_shared<Watch>();
  watch->selection = std::move(selection);
  if (const std::string timeout = req.get_param_value("timeoutSeconds"); !timeout.empty()) {
    const auto seconds = static_cast<int64_t>(number_param("timeoutSeconds", timeout));
    watch->deadline = Clock::now() + std::chrono::seconds(seconds);
  }
  const std::string from = req.get_param_value("resourceVersion");
  {
    std::lock_guard lock(mu);
    if (from.empty() || from == "0") {
      // As the real server does: the current state as ADDED events, then the changes.
      for (const auto& [key, object] : objects) {
        if (watch->selection.selects(std::get<0>(key), std::get<1>(key), object)) {
          watch->pending += event_line("ADDED", object);
        }
      }
      watch->cursor = resource_version;
    } else {
      // kubectl wait lists, then watches from the list's resourceVersion: replaying the kept
      // events after it means a change in between is not lost. Older than the history kept,
      // the watch starts from now.
      const uint64_t start = number_param("resourceVersion", from);
      const bool kept = history.empty() || start + 1 >= history.front().resource_version;
      watch->cursor = kept ? start : resource_version;
    }
  }
  // Not "application/json": httplib would gzip that for kubectl, and a streaming compressor
  // holds events back until its buffer fills. client-go only looks at the media type.
  res.set_chunked_content_provider(
      "application/json;stream=watch",
      [this, watch](size_t, httplib::DataSink& sink) { return pump_watch(*watch, sink); });
}

// One round of a watch stream: waits (boundedly) for events, writes the ones selected, ends
// the stream when the server stops or the watch's timeout passes. False drops the connection.
bool FakeApiServer::Impl::pump_watch(Watch& watch, httplib::DataSink& sink) {
  std::string out = std::move(watch.pending);
  watch.pending.clear();
  bool finished = false;
  {
    std::unique_lock lock(mu);
    if (out.empty()) {
      changed.wait_for(lock, kWatchPoll,
                       [&] { return stopping || resource_version > watch.cursor; });
    }
    finished = stopping || Clock::now() >= watch.deadline;
    const auto first =
        std::upper_bound(history.begin(), history.end(), watch.cursor,
                         [](uint64_t rv, const Event& e) { return rv < e.resource_version; });
    for (auto it = first; it != history.end(); ++it) {
      if (watch.selection.selects(it->resource->plural, namespace_of(it->object), it->object)) {
        out += event_line(it->type, it->object);
      }
    }
    watch.cursor = resource_version;
  }
  const auto now = Clock::now();
  if (out.empty() && !finished && now - watch.last_write >= kWatchHeartbeat) out = "\n";
  if (!out.empty()) {
    if (!sink.write(out.data(), out.size())) return false;
    watch.last_write = now;
  }
  if (finished) sink.done();
  return true;
}

json FakeApiServer::Impl::create(const Resource& r, const std::string& ns, json object) {
  json& meta = request_metadata(object, ns);
  const std::string name = meta.value("name", "");
  if (name.empty()) {
    throw ApiError{422, "Invalid",
                   r.kind +
                       " \"\" is invalid: metadata.name: Required value: name or "
                       "generateName is required"};
  }
  std::lock_guard lock(mu);
  if (find_locked(r, ns, name) != nullptr) {
    throw ApiError{409, "AlreadyExists", qualified_name(r) + " \"" + name + "\" already exists"};
  }
  stamp_locked(r, object, nullptr);
  return commit_locked(r, std::move(object), "ADDED");
}

json FakeApiServer::Impl::replace(const Resource& r, const std::string& ns, const std::string& name,
                                  json object) {
  json& meta = request_metadata(object, ns);
  if (meta.value("name", "") != name) {
    throw ApiError{400, "BadRequest",
                   "the name of the object (" + meta.value("name", "") +
                       ") does not match the name on the URL (" + name + ")"};
  }
  std::lock_guard lock(mu);
  const json* existing = find_locked(r, ns, name);
  if (existing == nullptr) throw not_found(r, name);
  // Optimistic concurrency, as kubectl replace and controllers expect it.
  const std::string expected = meta.value("resourceVersion", "");
  if (!expected.empty() && expected != (*existing)["metadata"].value("resourceVersion", "")) {
    throw ApiError{409, "Conflict",
                   "Operation cannot be fulfilled on " + qualified_name(r) + " \"" + name +
                       "\": the object has been modified; please apply your changes to the "
                       "latest version and try again"};
  }
  stamp_locked(r, object, existing);
  return commit_locked(r, std::move(object), "MODIFIED");
}

json FakeApiServer::Impl::patch(const Resource& r, const std::string& ns, const std::string& name,
                                const std::string& content_type, const json& patch) {
  std::lock_guard lock(mu);
  const json* existing = find_locked(r, ns, name);
  if (existing == nullptr) throw not_found(r, name);
  json patched;
  if (content_type == "application/merge-patch+json" ||
      content_type == "application/strategic-merge-patch+json") {
    patched = *existing;
    patched.merge_patch(patch);
  } else if (content_type == "application/json-patch+json") {
    try {
      patched = existing->patch(patch);
    } catch (const json::exception& e) {
      throw invalid(e.what());  // a failed "test" op, a missing path, a malformed op
    }
  } else {
    throw ApiError{415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types "
                   "include: application/json-patch+json, application/merge-patch+json, "
                   "application/strategic-merge-patch+json"};
  }
  if (!patched.is_object()) throw invalid("the patched object is not a JSON object");
  // A patch cannot move or rename an object, nor set what the server manages.
  patched["metadata"]["name"] = name;
  patched["metadata"]["namespace"] = ns;
  patched["metadata"]["resourceVersion"] = (*existing)["metadata"]["resourceVersion"];
  stamp_locked(r, patched, existing);
  // Like the real server, a patch that changes nothing is no event (kubectl: "(no change)").
  if (patched == *existing) return patched;
  return commit_locked(r, std::move(patched), "MODIFIED");
}

json FakeApiServer::Impl::erase(const Resource& r, const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu);
  const json* existing = find_locked(r, ns, name);
  if (existing == nullptr) throw not_found(r, name);
  return delete_locked(r, *existing);
}

json FakeApiServer::Impl::delete_locked(const Resource& r, const json& existing) {
  const auto delay = termination_delay_s.find(r.plural);
  if (delay == termination_delay_s.end() || delay->second <= 0) {
    return commit_locked(r, existing, "DELETED");
  }
  // Already on its way out: a second DELETE changes nothing, as on the real server.
  if (existing["metadata"].contains("deletionTimestamp")) return existing;
  json terminating = existing;
  terminating["metadata"]["deletionTimestamp"] = now_rfc3339();
  terminating["metadata"]["deletionGracePeriodSeconds"] =
      static_cast<int64_t>(std::ceil(delay->second));
  const json stored = commit_locked(r, std::move(terminating), "MODIFIED");
  const std::string ns = namespace_of(stored);
  const std::string name = name_of(stored);
  const std::string uid = stored["metadata"].value("uid", "");
  schedule(delay->second, [this, &r, ns, name, uid] {
    std::lock_guard lock(mu);
    const json* object = find_locked(r, ns, name);
    // Only the object that was deleted: a new one under the same name stays.
    if (object != nullptr && (*object)["metadata"].value("uid", "") == uid) {
      commit_locked(r, *object, "DELETED");
    }
  });
  return stored;
}

void FakeApiServer::Impl::schedule(double delay_s, std::function<void()> action) {
  const auto at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(std::max(0.0, delay_s)));
  {
    std::lock_guard lock(timer_mu);
    if (timers_stopping) return;
    timers.emplace(TimerKey{at, timer_sequence++}, std::move(action));
  }
  timer_changed.notify_all();
}

void FakeApiServer::Impl::run_timers() {
  std::unique_lock lock(timer_mu);
  while (!timers_stopping) {
    if (timers.empty()) {
      timer_changed.wait(lock, [&] { return timers_stopping || !timers.empty(); });
      continue;
    }
    const auto due = timers.begin()->first.first;
    if (Clock::now() < due) {
      timer_changed.wait_until(lock, due);
      continue;
    }
    auto action = std::move(timers.begin()->second);
    timers.erase(timers.begin());
    lock.unlock();
    action();
    lock.lock();
  }
}

std::optional<FakeApiServer::Fault> FakeApiServer::Impl::take_fault_locked(
    const std::string& method, const std::string& resource, const std::string& name) {
  for (auto it = faults.begin(); it != faults.end(); ++it) {
    if (!it->method.empty() && it->method != method) continue;
    if (!it->resource.empty() && it->resource != resource) continue;
    if (!it->name.empty() && it->name != name) continue;
    Fault fault = *it;
    if (--it->times <= 0) faults.erase(it);
    return fault;
  }
  return std::nullopt;
}

json FakeApiServer::Impl::erase_all(const Selection& selection) {
  const Resource& r = *selection.resource;
  json items = json::array();
  std::lock_guard lock(mu);
  std::vector<json> doomed;
  for (const auto& [key, object] : objects) {
    if (selection.selects(std::get<0>(key), std::get<1>(key), object)) doomed.push_back(object);
  }
  for (auto& object : doomed) items.push_back(delete_locked(r, object));
  return {{"kind", r.kind + "List"},
          {"apiVersion", group_version(r)},
          {"metadata", {{"resourceVersion", std::to_string(resource_version)}}},
          {"items", std::move(items)}};
}

FakeApiServer::FakeApiServer() : impl_(std::make_unique<Impl>()) {
  impl_->owner = this;
  impl_->start();
}

FakeApiServer::~FakeApiServer() {
  // Timers first: a pending action may still use the server, never the other way round.
  {
    std::lock_guard lock(impl_->timer_mu);
    impl_->timers_stopping = true;
    impl_->timers.clear();
  }
  impl_->timer_changed.notify_all();
  impl_->timer_thread.join();
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  impl_->front.reset();  // relays and exec sessions end; then the HTTP server behind them
  impl_->http.stop();
  impl_->listener.join();
}

std::string FakeApiServer::url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

void FakeApiServer::write_kubeconfig(const std::string& path,
                                     const std::string& namespace_name) const {
  // JSON is YAML, and client-go reads kubeconfigs either way.
  const json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", "fake"}, {"cluster", {{"server", url()}}}}}},
      {"users", {{{"name", "u"}, {"user", json::object()}}}},
      {"contexts",
       {{{"name", "fake"},
         {"context", {{"cluster", "fake"}, {"user", "u"}, {"namespace", namespace_name}}}}}},
      {"current-context", "fake"},
  };
  std::ofstream out(path);
  out << config.dump(2) << "\n";
  if (!out) throw std::runtime_error("FakeApiServer: cannot write " + path);
}

void FakeApiServer::put(const std::string& resource, json object) {
  const Resource& r = resource_or_throw(resource);
  if (!object.is_object() || !object["metadata"].is_object() ||
      object["metadata"].value("name", "").empty()) {
    throw std::invalid_argument("FakeApiServer::put: the object has no metadata.name");
  }
  if (!object["metadata"].contains("namespace")) object["metadata"]["namespace"] = "default";
  std::lock_guard lock(impl_->mu);
  const json* existing = impl_->find_locked(r, namespace_of(object), name_of(object));
  impl_->stamp_locked(r, object, existing);
  impl_->commit_locked(r, std::move(object), existing != nullptr ? "MODIFIED" : "ADDED");
}

std::optional<json> FakeApiServer::get(const std::string& resource,
                                       const std::string& namespace_name,
                                       const std::string& name) const {
  const Resource& r = resource_or_throw(resource);
  std::lock_guard lock(impl_->mu);
  const json* object = impl_->find_locked(r, namespace_name, name);
  if (object == nullptr) return std::nullopt;
  return *object;
}

std::vector<json> FakeApiServer::list(const std::string& resource,
                                      const std::string& namespace_name) const {
  const Resource& r = resource_or_throw(resource);
  std::vector<json> out;
  std::lock_guard lock(impl_->mu);
  for (const auto& [key, object] : impl_->objects) {
    if (std::get<0>(key) == r.plural && std::get<1>(key) == namespace_name) {
      out.push_back(object);
    }
  }
  return out;
}

void FakeApiServer::remove(const std::string& resource, const std::string& namespace_name,
                           const std::string& name) {
  const Resource& r = resource_or_throw(resource);
  std::lock_guard lock(impl_->mu);
  const json* existing = impl_->find_locked(r, namespace_name, name);
  if (existing != nullptr) impl_->commit_locked(r, *existing, "DELETED");
}

void FakeApiServer::terminate(const std::string& resource, const std::string& namespace_name,
                              const std::string& name) {
  const Resource& r = resource_or_throw(resource);
  std::lock_guard lock(impl_->mu);
  const json* existing = impl_->find_locked(r, namespace_name, name);
  if (existing != nullptr) impl_->delete_locked(r, *existing);
}

bool FakeApiServer::modify(const std::string& resource, const std::string& namespace_name,
                           const std::string& name, const std::function<void(json&)>& change) {
  const Resource& r = resource_or_throw(resource);
  std::lock_guard lock(impl_->mu);
  const json* existing = impl_->find_locked(r, namespace_name, name);
  if (existing == nullptr) return false;
  json object = *existing;
  change(object);
  object["metadata"]["name"] = name;
  object["metadata"]["namespace"] = namespace_name;
  impl_->stamp_locked(r, object, existing);
  object["metadata"]["resourceVersion"] = (*existing)["metadata"]["resourceVersion"];
  if (object != *existing) impl_->commit_locked(r, std::move(object), "MODIFIED");
  return true;
}

void FakeApiServer::set_controller(Controller controller) {
  std::lock_guard lock(impl_->mu);
  impl_->controller = std::move(controller);
}

int FakeApiServer::add_controller(Controller controller) {
  std::lock_guard lock(impl_->mu);
  const int id = impl_->next_controller_id++;
  impl_->more_controllers[id] = std::move(controller);
  return id;
}

void FakeApiServer::remove_controller(int id) {
  std::lock_guard lock(impl_->mu);
  impl_->more_controllers.erase(id);
}

void FakeApiServer::set_pod_runtime(PodRuntime runtime) {
  std::lock_guard lock(impl_->mu);
  impl_->runtime = std::move(runtime);
}

std::vector<ApiCall> FakeApiServer::calls() const {
  std::lock_guard lock(impl_->mu);
  return impl_->calls;
}

void FakeApiServer::after(double delay_s, std::function<void()> action) {
  impl_->schedule(delay_s, std::move(action));
}

void FakeApiServer::set_termination_delay(const std::string& resource, double seconds) {
  const Resource& r = resource_or_throw(resource);
  std::lock_guard lock(impl_->mu);
  impl_->termination_delay_s[r.plural] = seconds;
}

void FakeApiServer::inject_fault(Fault fault) {
  if (!fault.resource.empty()) resource_or_throw(fault.resource);
  if (fault.times <= 0) return;
  std::lock_guard lock(impl_->mu);
  impl_->faults.push_back(std::move(fault));
}

json make_pod(const std::string& name, const std::string& namespace_name, const json& labels,
              bool ready, const std::string& pod_ip, int port, const json& env,
              const std::string& waiting_reason, const std::string& waiting_message) {
  json env_list = json::array();
  for (const auto& [key, value] : env.items()) {
    env_list.push_back(
        {{"name", key}, {"value", value.is_string() ? value.get<std::string>() : value.dump()}});
  }
  const bool waiting = !waiting_reason.empty();
  const bool creating = waiting_reason == "ContainerCreating";
  const bool pulling =
      creating || waiting_reason == "ImagePullBackOff" || waiting_reason == "ErrImagePull";
  const bool pod_ready = ready && !waiting;
  const json state =
      waiting ? json{{"waiting", {{"reason", waiting_reason}, {"message", waiting_message}}}}
              : json{{"running", {{"startedAt", now_rfc3339()}}}};
  // A container in CrashLoopBackOff has restarted, which is what the reason means.
  const int restarts = waiting_reason == "CrashLoopBackOff" ? 5 : 0;
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", namespace_name}, {"labels", labels}}},
      {"spec",
       {{"containers",
         {{{"name", "server"},
           {"image", "kvsweep/sim"},
           {"ports", {{{"containerPort", port}}}},
           {"env", env_list}}}}}},
      {"status",
       {{"phase", pulling ? "Pending" : "Running"},
        {"podIP", creating ? "" : pod_ip},
        {"conditions", {{{"type", "Ready"}, {"status", pod_ready ? "True" : "False"}}}},
        {"containerStatuses",
         {{{"name", "server"},
           {"image", "kvsweep/sim"},
           {"ready", pod_ready},
           {"restartCount", restarts},
           {"state", state}}}}}},
  };
}

}  // namespace kvsweep::testing
