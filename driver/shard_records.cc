// A shard's records file: header, records, trailer (count and checksum).
#include "driver/shard_records.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/json_text.h"

namespace kvsweep::driver {
namespace {

using nlohmann::json;

constexpr int kRecordsVersion = 1;

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

DriverSelf parse_driver(const json& j) {
  DriverSelf d;
  d.measured = j.at("measured").get<bool>();
  d.threads = j.at("threads").get<int>();
  d.cores = j.at("cores").get<int>();
  d.wall_s = j.at("wall_s").get<double>();
  d.cpu_s = j.at("cpu_s").get<double>();
  d.send_delay_count = j.at("send_delay_count").get<std::int64_t>();
  d.send_delay_p50_ms = j.at("send_delay_p50_ms").get<double>();
  d.send_delay_p99_ms = j.at("send_delay_p99_ms").get<double>();
  d.send_delay_max_ms = j.at("send_delay_max_ms").get<double>();
  d.ready_span_s = j.at("ready_span_s").get<double>();
  d.sent_span_s = j.at("sent_span_s").get<double>();
  d.first_ready_s = j.at("first_ready_s").get<double>();
  d.first_sent_s = j.at("first_sent_s").get<double>();
  d.stopped_over_capacity = j.at("stopped_over_capacity").get<bool>();
  d.stop_reason = j.at("stop_reason").get<std::string>();
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

RequestRecord parse_record(const json& j) {
  RequestRecord r;
  r.index = j.at("i").get<std::int64_t>();
  r.worker = j.at("worker").get<int>();
  r.conversation = j.at("conversation").get<int>();
  r.turn = j.at("turn").get<int>();
  r.prompt_hash = j.at("prompt_hash").get<std::uint64_t>();
  r.warmup = j.at("warmup").get<bool>();
  r.ok = j.at("ok").get<bool>();
  r.http_status = j.at("http_status").get<int>();
  r.scheduled_s = j.at("scheduled_s").get<double>();
  r.sent_s = j.at("sent_s").get<double>();
  r.schedule_lag_ms = j.at("schedule_lag_ms").get<double>();
  r.first_token_s = j.at("first_token_s").get<double>();
  r.last_token_s = j.at("last_token_s").get<double>();
  r.ended_s = j.at("ended_s").get<double>();
  r.ttft_ms = j.at("ttft_ms").get<double>();
  r.e2e_ms = j.at("e2e_ms").get<double>();
  r.tpot_ms = j.at("tpot_ms").get<double>();
  r.itl_ms = j.at("itl_ms").get<std::vector<double>>();
  r.prompt_tokens = j.at("prompt_tokens").get<int>();
  r.output_tokens = j.at("output_tokens").get<int>();
  r.cached_tokens = j.at("cached_tokens").get<int>();
  r.tokens_estimated = j.at("tokens_estimated").get<bool>();
  r.error_kind = j.value("error_kind", "");
  r.error = j.value("error", "");
  r.replica = j.value("replica", "");
  r.response_text = j.value("response_text", "");
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

ShardResult parse_shard_records(const std::string& text, const std::string& where) {
  const auto fail = [&](const std::string& problem) -> void {
    throw std::runtime_error(where + ": " + problem);
  };
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
  std::string line;
  if (!next_line(line)) fail("empty or cut short before its header");
  ShardResult shard;
  std::size_t expected = 0;
  try {
    const json header = json::parse(line);
    if (header.value("kvsweep_shard_records", 0) != kRecordsVersion) {
      fail("not a kvsweep shard records file (version " + std::to_string(kRecordsVersion) + ")");
    }
    shard.index = header.at("shard").get<int>();
    shard.count = header.at("shards").get<int>();
    expected = header.at("records").get<std::size_t>();
    shard.start_at_wall_s = header.at("start_at_wall_s").get<double>();
    shard.result.epoch_wall_s = header.at("epoch_wall_s").get<double>();
    shard.result.epoch_steady_ns = header.at("epoch_steady_ns").get<std::int64_t>();
    shard.result.interrupted = header.at("interrupted").get<bool>();
    shard.result.driver = parse_driver(header.at("driver"));
  } catch (const json::exception& e) {
    fail("line 1 (header): " + std::string(e.what()));
  }
  shard.result.records.reserve(expected);
  while (true) {
    const std::size_t line_start = at;
    if (!next_line(line)) {
      fail("cut short: " + std::to_string(shard.result.records.size()) + " of " +
           std::to_string(expected) + " records and no trailer");
    }
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      fail("line " + std::to_string(line_number) + ": " + e.what());
    }
    if (j.contains("end")) {
      const std::size_t end = j.value("end", std::size_t{0});
      const std::string sum = j.value("fnv1a64", "");
      if (end != expected || shard.result.records.size() != expected) {
        fail("the trailer counts " + std::to_string(end) + " records, the header " +
             std::to_string(expected) + ", and " + std::to_string(shard.result.records.size()) +
             " were read");
      }
      if (sum != hex64(fnv1a64(text.substr(0, line_start)))) {
        fail("checksum mismatch: the records were changed or garbled on the way");
      }
      if (at != text.size()) fail("bytes after the trailer");
      return shard;
    }
    try {
      shard.result.records.push_back(parse_record(j));
    } catch (const json::exception& e) {
      fail("line " + std::to_string(line_number) + ": " + e.what());
    }
  }
}

}  // namespace kvsweep::driver
