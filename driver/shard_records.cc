// A shard's records file: header, records, trailer (count and checksum), checked against its plan.
#include "driver/shard_records.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/input_file.h"
#include "common/json_text.h"
#include "common/utf8_prefix.h"
#include "driver/workload.h"

namespace kvsweep::driver {
namespace {

using nlohmann::json;

constexpr int kRecordsVersion = 1;
// The header: counts, epochs and the driver's figures (its stop reason is the one free text).
constexpr std::uint64_t kHeaderMaxBytes = 64 * 1024;
constexpr std::uint64_t kTrailerMaxBytes = 256;
// A record line with every required field at its shortest is longer than this.
constexpr std::uint64_t kRecordMinBytes = 200;
// A record's fixed fields, an error message (300 bytes of text, escaped) and a replica name.
constexpr std::uint64_t kRecordFixedBytes = 16 * 1024;
// Per output token: its ITL and, where the reply is kept, its text.
constexpr std::uint64_t kRecordTokenBytes = 160;
// Unix seconds: year 2286. A start or an epoch later than that is not a clock's reading.
constexpr double kMaxWallS = 1e10;

json driver_json(const DriverSelf& d) {
  return {{"measured", d.measured},
          {"threads", d.threads},
          {"cores", d.cores},
          {"wall_s", d.wall_s},
          {"cpu_s", d.cpu_s},
          {"send_delay_count", d.send_delay_count},
          {"send_delay_p50_ms", d.send_delay_p50_ms},
          {"send_delay_p99_ms", d.send_delay_p99_ms},
          {"send_delay_max_ms", d.send_delay_max_ms},
          {"ready_span_s", d.ready_span_s},
          {"sent_span_s", d.sent_span_s},
          {"first_ready_s", d.first_ready_s},
          {"first_sent_s", d.first_sent_s},
          {"stopped_over_capacity", d.stopped_over_capacity},
          {"stop_reason", d.stop_reason}};
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// A JSON object's fields, each read with its type and range checked: nlohmann's get<int>() of
// 1e300 is an undefined cast, JSON's 1e400 reads as infinity, and a forged -1e308 TTFT would
// reach every mean. Every problem is a runtime_error "<context>: <field>: <problem>".
class Fields {
 public:
  Fields(const json& object, std::string context) : object_(object), context_(std::move(context)) {
    if (!object_.is_object()) fail("", "expected a JSON object");
  }

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw std::runtime_error(context_ + (field.empty() ? "" : ": " + field) + ": " + problem);
  }

  const json& at(const char* name) const {
    const auto it = object_.find(name);
    if (it == object_.end()) fail(name, "missing");
    return *it;
  }

  bool flag(const char* name) const {
    const json& v = at(name);
    if (!v.is_boolean()) fail(name, std::string("expected true or false, got ") + v.type_name());
    return v.get<bool>();
  }

  std::int64_t integer(const char* name, std::int64_t low, std::int64_t high) const {
    return integer_of(at(name), name, low, high);
  }

  std::int64_t integer_of(const json& v, const std::string& name, std::int64_t low,
                          std::int64_t high) const {
    bool in_range = false;
    std::int64_t value = 0;
    if (v.is_number_unsigned()) {
      const std::uint64_t u = v.get<std::uint64_t>();
      in_range = high >= 0 && u <= static_cast<std::uint64_t>(high);
      value = in_range ? static_cast<std::int64_t>(u) : 0;
      in_range = in_range && value >= low;
    } else if (v.is_number_integer()) {
      value = v.get<std::int64_t>();
      in_range = value >= low && value <= high;
    } else {
      fail(name, std::string("expected an integer, got ") +
                     (v.is_number() ? number_text(v.get<double>()) : v.type_name()));
    }
    if (!in_range) {
      fail(name, v.dump() + " is out of range (" + std::to_string(low) + " to " +
                     std::to_string(high) + ")");
    }
    return value;
  }

  std::uint64_t hash(const char* name) const {
    const json& v = at(name);
    if (!v.is_number_unsigned()) fail(name, "expected an unsigned 64-bit integer");
    return v.get<std::uint64_t>();
  }

  double number(const char* name, double low, double high) const {
    return number_of(at(name), name, low, high);
  }

  double number_of(const json& v, const std::string& name, double low, double high) const {
    if (!v.is_number()) fail(name, std::string("expected a number, got ") + v.type_name());
    const double value = v.get<double>();
    if (!std::isfinite(value) || value < low || value > high) {
      fail(name, number_text(value) + " is out of range (" + number_text(low) + " to " +
                     number_text(high) + ")");
    }
    return value;
  }

  // A time in seconds from the epoch: -1 where there is none (`absent_allowed`), else 0 to most.
  double time(const char* name, double most, bool absent_allowed) const {
    const json& v = at(name);
    if (absent_allowed && v.is_number() && v.get<double>() == -1) return -1;
    return number_of(v, name, 0, most);
  }

  std::string text(const char* name) const {
    const auto it = object_.find(name);
    if (it == object_.end()) return "";
    if (!it->is_string()) fail(name, std::string("expected a string, got ") + it->type_name());
    return it->get<std::string>();
  }

 private:
  const json& object_;
  std::string context_;
};

DriverSelf parse_driver(const json& j, const std::string& context, const ShardRecordBounds& b) {
  const Fields f(j, context + ": driver");
  const double most_s = b.max_time_s;
  const double most_ms = most_s * 1000;
  DriverSelf d;
  d.measured = f.flag("measured");
  d.threads = static_cast<int>(f.integer("threads", 0, kMaxConcurrency));
  d.cores = static_cast<int>(f.integer("cores", 0, kMaxConcurrency));
  d.wall_s = f.number("wall_s", 0, most_s);
  d.cpu_s = f.number("cpu_s", 0, most_s * std::max(1, d.threads + 1));
  d.send_delay_count = f.integer("send_delay_count", 0, b.max_records);
  d.send_delay_p50_ms = f.number("send_delay_p50_ms", 0, most_ms);
  d.send_delay_p99_ms = f.number("send_delay_p99_ms", 0, most_ms);
  d.send_delay_max_ms = f.number("send_delay_max_ms", 0, most_ms);
  d.ready_span_s = f.number("ready_span_s", 0, most_s);
  d.sent_span_s = f.number("sent_span_s", 0, most_s);
  d.first_ready_s = f.number("first_ready_s", 0, most_s);
  d.first_sent_s = f.number("first_sent_s", 0, most_s);
  d.stopped_over_capacity = f.flag("stopped_over_capacity");
  d.stop_reason = f.text("stop_reason");
  return d;
}
json record_json(const RequestRecord& r) {
  json j = {{"i", r.index},
            {"worker", r.worker},
            {"conversation", r.conversation},
            {"turn", r.turn},
            {"prompt_hash", r.prompt_hash},
            {"warmup", r.warmup},
            {"ok", r.ok},
            {"http_status", r.http_status},
            {"scheduled_s", r.scheduled_s},
            {"sent_s", r.sent_s},
            {"schedule_lag_ms", r.schedule_lag_ms},
            {"first_token_s", r.first_token_s},
            {"last_token_s", r.last_token_s},
            {"ended_s", r.ended_s},
            {"ttft_ms", r.ttft_ms},
            {"e2e_ms", r.e2e_ms},
            {"tpot_ms", r.tpot_ms},
            {"itl_ms", r.itl_ms},
            {"prompt_tokens", r.prompt_tokens},
            {"output_tokens", r.output_tokens},
            {"cached_tokens", r.cached_tokens},
            {"tokens_estimated", r.tokens_estimated}};
  if (!r.error_kind.empty()) j["error_kind"] = r.error_kind;
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.replica.empty()) j["replica"] = r.replica;
  if (!r.response_text.empty()) j["response_text"] = r.response_text;
  return j;
}

RequestRecord parse_record(const json& j, const std::string& context, const ShardRecordBounds& b) {
  const Fields f(j, context);
  const double most_s = b.max_time_s;
  const double most_ms = most_s * 1000;
  constexpr std::int64_t kMostInt = std::numeric_limits<int>::max();
  RequestRecord r;
  r.index = f.integer("i", 0, b.max_index - 1);
  r.worker = static_cast<int>(f.integer("worker", 0, std::max(b.users, 1) - 1));
  r.conversation =
      static_cast<int>(f.integer("conversation", 0, static_cast<std::int64_t>(b.turns.size()) - 1));
  r.turn =
      static_cast<int>(f.integer("turn", 0, b.turns[static_cast<std::size_t>(r.conversation)] - 1));
  const std::string part = " of " + std::to_string(b.count) + " belongs to shard ";
  if (b.by_conversation) {
    if (r.conversation % b.count != b.shard) {
      f.fail("conversation", std::to_string(r.conversation) + ": conversation % " +
                                 std::to_string(b.count) + part +
                                 std::to_string(r.conversation % b.count) + ", not this one");
    }
  } else {
    if (r.index % b.count != b.shard) {
      f.fail("i", "run index " + std::to_string(r.index) + part +
                      std::to_string(r.index % b.count) + ", not this one");
    }
    if (b.users > 0 && r.worker % b.count != b.shard) {
      f.fail("worker", "user " + std::to_string(r.worker) + part +
                           std::to_string(r.worker % b.count) + ", not this one");
    }
  }
  r.prompt_hash = f.hash("prompt_hash");
  r.warmup = f.flag("warmup");
  r.ok = f.flag("ok");
  r.http_status = static_cast<int>(f.integer("http_status", 0, 999));
  r.scheduled_s = f.time("scheduled_s", most_s, true);
  r.sent_s = f.time("sent_s", most_s, false);
  r.schedule_lag_ms = f.number("schedule_lag_ms", 0, most_ms);
  r.first_token_s = f.time("first_token_s", most_s, true);
  r.last_token_s = f.time("last_token_s", most_s, true);
  r.ended_s = f.time("ended_s", most_s, true);
  r.ttft_ms = f.number("ttft_ms", 0, most_ms);
  r.e2e_ms = f.number("e2e_ms", 0, most_ms);
  r.tpot_ms = f.number("tpot_ms", 0, most_ms);
  const json& itl = f.at("itl_ms");
  if (!itl.is_array()) f.fail("itl_ms", "expected an array of numbers");
  r.itl_ms.reserve(itl.size());
  for (std::size_t i = 0; i < itl.size(); ++i) {
    r.itl_ms.push_back(f.number_of(itl[i], "itl_ms[" + std::to_string(i) + "]", 0, most_ms));
  }
  r.prompt_tokens = static_cast<int>(f.integer("prompt_tokens", -1, kMostInt));
  r.output_tokens = static_cast<int>(f.integer("output_tokens", 0, kMostInt));
  r.cached_tokens = static_cast<int>(f.integer("cached_tokens", -1, kMostInt));
  r.tokens_estimated = f.flag("tokens_estimated");
  r.error_kind = f.text("error_kind");
  r.error = f.text("error");
  r.replica = f.text("replica");
  r.response_text = f.text("response_text");
  if (r.ok && !r.error_kind.empty()) {
    f.fail("error_kind",
           "\"" + std::string(utf8_prefix(r.error_kind, 40)) + "\" on a request that is ok");
  }
  return r;
}
std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::uint64_t fnv1a64(const std::string& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string shard_records_text(const ShardResult& shard) {
  const LoadResult& result = shard.result;
  const json header = {{"kvsweep_shard_records", kRecordsVersion},
                       {"shard", shard.index},
                       {"shards", shard.count},
                       {"records", result.records.size()},
                       {"start_at_wall_s", shard.start_at_wall_s},
                       {"epoch_wall_s", result.epoch_wall_s},
                       {"epoch_steady_ns", result.epoch_steady_ns},
                       {"interrupted", result.interrupted},
                       {"driver", driver_json(result.driver)}};
  std::string text = json_text(header) + "\n";
  for (const RequestRecord& record : result.records) text += json_text(record_json(record)) + "\n";
  const json trailer = {{"end", result.records.size()}, {"fnv1a64", hex64(fnv1a64(text))}};
  return text + json_text(trailer) + "\n";
}

ShardRecordBounds shard_record_bounds(const ShardPlan& plan, int shard) {
  const LoadOptions& o = plan.options;
  const Workload& w = plan.workload;
  ShardRecordBounds b;
  b.shard = shard;
  b.count = std::max(1, o.shard.count);
  const bool open = is_open_loop(o, w);
  const bool trace = !w.arrival_s.empty() && o.concurrency == 0;
  const bool sequential = open && w.arrival_s.empty() && o.turns == LoadOptions::Turns::kSequential;
  // request_source.cc, RequestSource::owns: independent turns and traces deal conversations,
  // the closed loop and sequential turns deal run indexes.
  b.by_conversation = open && !sequential;
  b.users = open ? 0 : o.concurrency;
  b.turns.reserve(w.conversations.size());
  for (const Conversation& c : w.conversations) b.turns.push_back(static_cast<int>(c.user.size()));

  // How many requests the whole run makes, where the plan fixes it: a trace's arrivals, or a
  // count with a warm-up counted in requests. Else a bound: an open loop's rate over its
  // window, four times over (gamma gaps bunch), or kMaxUnplannedShardRecords.
  std::int64_t total = -1;
  const bool counted =
      o.num_requests > 0 && o.duration_s == 0 && o.warmup_s == 0 && o.warmup_conversations == 0;
  if (trace) {
    total = static_cast<std::int64_t>(w.arrival_s.size());
  } else if (counted) {
    total = o.warmup_requests + o.num_requests;
  }
  if (total >= 0) {
    b.max_index = total;
    // Its own part of the indexes; a part by conversation is uneven, so at most all of them.
    b.max_records = b.by_conversation ? total : (total - shard + b.count - 1) / b.count;
  } else {
    double most = static_cast<double>(kMaxUnplannedShardRecords);
    if (open && std::isfinite(o.request_rate) && o.request_rate > 0 && o.duration_s > 0) {
      const double arrivals = o.request_rate * (o.warmup_s + o.duration_s) +
                              static_cast<double>(o.warmup_requests + o.num_requests);
      most = std::min(most, 4 * arrivals + 1000);
    }
    b.max_records = static_cast<std::int64_t>(most);
    b.max_index = b.max_records * b.count;
  }
  b.max_records = std::max<std::int64_t>(b.max_records, 0);

  double last_arrival_s = 0;
  for (const double t : w.arrival_s) {
    if (std::isfinite(t)) last_arrival_s = std::max(last_arrival_s, t);
  }
  b.max_time_s =
      kMaxShardRunSpanS + std::max(0.0, o.warmup_s) + std::max(0.0, o.duration_s) + last_arrival_s;

  // One record: its fixed fields, an error message and a replica name (kRecordFixedBytes),
  // and per output token an ITL and, where replies are kept, the token's text.
  int tokens = o.max_tokens;
  for (const Conversation& c : w.conversations) {
    for (const int t : c.max_tokens) tokens = std::max(tokens, t);
  }
  if (o.max_tokens_cap > 0) tokens = std::min(tokens, o.max_tokens_cap);
  tokens = std::clamp(tokens, 1, kMaxTokens);
  b.max_record_bytes = kRecordFixedBytes + static_cast<std::uint64_t>(tokens) * kRecordTokenBytes;
  b.max_bytes = kHeaderMaxBytes + kTrailerMaxBytes +
                static_cast<std::uint64_t>(b.max_records) * b.max_record_bytes;
  return b;
}

ShardResult parse_shard_records(const std::string& text, const std::string& where,
                                const ShardRecordBounds& bounds) {
  const auto fail = [&](const std::string& problem) -> void {
    throw std::runtime_error(where + ": " + problem);
  };
  if (text.size() > bounds.max_bytes) {
    fail(format_bytes(text.size()) + ", more than the " + format_bytes(bounds.max_bytes) +
         " its plan's requests can fill");
  }
  std::size_t at = 0;
  std::size_t line_number = 0;
  const auto next_line = [&](std::string& line) {
    if (at >= text.size()) return false;
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos) return false;  // a line without its end was cut short
    line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    return true;
  };
  const auto parse = [&](const std::string& line, const std::string& context) {
    try {
      return json::parse(line);
    } catch (const json::exception& e) {
      throw std::runtime_error(where + ": " + context + ": not JSON: " + e.what());
    }
  };
  std::string line;
  if (!next_line(line)) fail("empty or cut short before its header");
  if (line.size() > kHeaderMaxBytes)
    fail("line 1 (header): longer than " + format_bytes(kHeaderMaxBytes));
  ShardResult shard;
  std::int64_t expected = 0;
  {
    const std::string context = where + ": line 1 (header)";
    const json header_json = parse(line, "line 1 (header)");
    const Fields header(header_json, context);
    const json& version = header.at("kvsweep_shard_records");
    if (!version.is_number_integer() || version.get<std::int64_t>() != kRecordsVersion) {
      fail("not a kvsweep shard records file (version " + std::to_string(kRecordsVersion) + ")");
    }
    shard.index = static_cast<int>(header.integer("shard", 0, kMaxShards - 1));
    shard.count = static_cast<int>(header.integer("shards", 1, kMaxShards));
    if (shard.index != bounds.shard || shard.count != bounds.count) {
      header.fail("shard", "shard " + std::to_string(shard.index) + " of " +
                               std::to_string(shard.count) + "'s records, not shard " +
                               std::to_string(bounds.shard) + " of " +
                               std::to_string(bounds.count) + "'s");
    }
    expected = header.integer("records", 0, std::numeric_limits<std::int64_t>::max());
    if (expected > bounds.max_records) {
      header.fail("records", std::to_string(expected) + ", more than the " +
                                 std::to_string(bounds.max_records) +
                                 " requests this shard's part of the plan can send");
    }
    // Every record takes a line of at least kRecordMinBytes: a count the text cannot hold is
    // refused before anything is reserved for it.
    if (static_cast<std::uint64_t>(expected) > text.size() / kRecordMinBytes) {
      header.fail("records",
                  std::to_string(expected) + " records cannot fit in " + format_bytes(text.size()));
    }
    if (text.size() > kHeaderMaxBytes + kTrailerMaxBytes +
                          static_cast<std::uint64_t>(expected) * bounds.max_record_bytes) {
      header.fail("records", format_bytes(text.size()) + " is more than " +
                                 std::to_string(expected) + " records can fill");
    }
    shard.start_at_wall_s = header.number("start_at_wall_s", 0, kMaxWallS);
    shard.result.epoch_wall_s = header.number("epoch_wall_s", 0, kMaxWallS);
    shard.result.epoch_steady_ns =
        header.integer("epoch_steady_ns", 0, std::numeric_limits<std::int64_t>::max());
    shard.result.interrupted = header.flag("interrupted");
    shard.result.driver = parse_driver(header.at("driver"), context, bounds);
  }
  shard.result.records.reserve(static_cast<std::size_t>(expected));
  std::vector<std::int64_t> indexes;
  indexes.reserve(static_cast<std::size_t>(expected));
  while (true) {
    const std::size_t line_start = at;
    const std::size_t read = shard.result.records.size();
    if (!next_line(line)) {
      fail("cut short: " + std::to_string(read) + " of " + std::to_string(expected) +
           " records and no trailer");
    }
    const std::string context =
        "line " + std::to_string(line_number) + " (record " + std::to_string(read + 1) + ")";
    const json j = parse(line, context);
    if (j.is_object() && j.contains("end")) {
      const Fields trailer(j, where + ": line " + std::to_string(line_number) + " (trailer)");
      const std::int64_t end = trailer.integer("end", 0, bounds.max_records);
      const std::string sum = trailer.text("fnv1a64");
      if (end != expected || static_cast<std::int64_t>(read) != expected) {
        fail("the trailer counts " + std::to_string(end) + " records, the header " +
             std::to_string(expected) + ", and " + std::to_string(read) + " were read");
      }
      if (sum != hex64(fnv1a64(text.substr(0, line_start)))) {
        fail("checksum mismatch: the records were changed or garbled on the way");
      }
      if (at != text.size()) fail("bytes after the trailer");
      break;
    }
    if (static_cast<std::int64_t>(read) >= expected) {
      fail(context + ": more records than the header's " + std::to_string(expected));
    }
    if (line.size() > bounds.max_record_bytes) {
      fail(context + ": longer than the " + format_bytes(bounds.max_record_bytes) +
           " one record of this plan can take");
    }
    shard.result.records.push_back(parse_record(j, where + ": " + context, bounds));
    indexes.push_back(shard.result.records.back().index);
  }
  // No run index twice: a record sent once and written twice would count twice.
  std::vector<std::size_t> order(indexes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return indexes[a] != indexes[b] ? indexes[a] < indexes[b] : a < b;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (indexes[order[k]] == indexes[order[k - 1]]) {
      fail("record " + std::to_string(order[k] + 1) + ": run index " +
           std::to_string(indexes[order[k]]) + " again (record " +
           std::to_string(order[k - 1] + 1) + " has it)");
    }
  }
  return shard;
}

}  // namespace kvsweep::driver
