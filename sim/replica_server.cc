// One simulated vLLM replica's HTTP surface: OpenAI chat completions, models, health, metrics.
#include "sim/replica_server.h"

#include <chrono>

#include "sim/metrics_exposition.h"
#include "sim/openai_api.h"

namespace kvsweep::sim {
namespace {

std::int64_t unix_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void reply_error(Exchange& exchange, const ApiError& error, HttpHeaders headers = {}) {
  exchange.respond(json_response(error.status, error_body(error), std::move(headers)));
}

// What one completion carries from submit() to its last engine update.
struct Completion {
  CompletionId id;
  std::uint64_t piece_seed = 0;  // generated_piece(piece_seed, i) is output token i
  bool stream = false;
  bool include_usage = false;
  HttpHeaders headers;
  std::string text;  // non-streaming: the whole reply so far
};

void on_update(Exchange& exchange, Completion& completion, const TokenUpdate& update) {
  if (exchange.ended()) return;  // the client left; the engine was told to cancel
  for (int i = update.output_tokens - update.new_tokens; i < update.output_tokens; ++i) {
    const std::string piece = generated_piece(completion.piece_seed, i);
    if (!completion.stream) {
      completion.text += piece;
      continue;
    }
    // vLLM sends the role chunk with the first token, not before it.
    if (i == 0) exchange.write_chunk(sse_role_chunk(completion.id));
    const bool last = update.finished && i == update.output_tokens - 1;
    exchange.write_chunk(
        sse_content_chunk(completion.id, piece, last ? update.finish_reason : ""));
  }
  if (!update.finished) return;
  const Usage usage{update.prompt_tokens, update.output_tokens, update.cached_tokens};
  if (!completion.stream) {
    exchange.respond(json_response(
        200, completion_body(completion.id, completion.text, update.finish_reason, usage),
        completion.headers));
    return;
  }
  if (update.new_tokens == 0) {  // the finish came in an update of its own
    exchange.write_chunk(sse_content_chunk(completion.id, "", update.finish_reason));
  }
  if (completion.include_usage) exchange.write_chunk(sse_usage_chunk(completion.id, usage));
  exchange.write_chunk(kSseDone);
  exchange.finish();
}

}  // namespace

ReplicaServer::ReplicaServer(boost::asio::io_context& io, TimingProfile profile,
                             ReplicaOptions options)
    : engine_(io, std::move(profile), options.seed),
      options_(std::move(options)),
      started_unix_s_(unix_now_s()) {}

ReplicaServer::~ReplicaServer() = default;

void ReplicaServer::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if (path == "/v1/chat/completions" && post) {
    chat_completions(request, std::move(exchange));
  } else if (path == "/v1/models" && get) {
    exchange->respond(json_response(200, models_body(options_.model, started_unix_s_)));
  } else if (path == "/health" && get) {
    exchange->respond(HttpResponse{200, "", "", {}});
  } else if (path == "/metrics" && get) {
    exchange->respond(HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                                   replica_metrics_text(options_.model, engine_.metrics()),
                                   {}});
  } else if (path == "/reset_prefix_cache" && post) {
    reset_prefix_cache();
    exchange->respond(HttpResponse{200, "", "", {}});
  } else {
    reply_error(*exchange, not_found_error("Not Found: " + request.method + " " + path));
  }
}

void ReplicaServer::reset_prefix_cache() { engine_.reset_prefix_cache(); }

void ReplicaServer::chat_completions(const HttpRequest& request,
                                     std::shared_ptr<Exchange> exchange) {
  HttpHeaders headers{{"x-kvsweep-replica", std::to_string(options_.index)}};
  ChatRequest chat;
  if (auto error = parse_chat_request(request.body, &chat)) {
    return reply_error(*exchange, *error, headers);
  }
  if (!chat.model.empty() && chat.model != options_.model) {
    return reply_error(*exchange,
                       not_found_error("The model `" + chat.model + "` does not exist."), headers);
  }
  const TimingProfile& profile = engine_.profile();
  const int max_tokens = chat.max_tokens.value_or(profile.default_max_tokens);
  std::vector<TokenId> prompt = tokenize(render_prompt(chat.messages));
  const auto prompt_tokens = static_cast<std::int64_t>(prompt.size());
  if (prompt_tokens + max_tokens > profile.max_model_len) {
    // vLLM's wording, so clients that match on it behave the same.
    return reply_error(
        *exchange,
        ApiError{400, "BadRequestError",
                 "This model's maximum context length is " +
                     std::to_string(profile.max_model_len) + " tokens. However, you requested " +
                     std::to_string(prompt_tokens + max_tokens) + " tokens (" +
                     std::to_string(prompt_tokens) + " in the messages, " +
                     std::to_string(max_tokens) +
                     " in the completion). Please reduce the length of the messages or "
                     "completion.",
                 "messages"},
        headers);
  }

  const std::uint64_t id = next_request_id_++;
  auto completion = std::make_shared<Completion>();
  completion->id = CompletionId{"chatcmpl-" + std::to_string(options_.index) + "-" +
                                    std::to_string(id),
                                unix_now_s(), options_.model};
  // Distinct text per request, yet a fixed function of (replica seed, request number).
  completion->piece_seed = options_.seed * 0x9E3779B97F4A7C15ull + id;
  completion->stream = chat.stream;
  completion->include_usage = chat.stream && chat.include_usage;
  completion->headers = headers;
  if (chat.stream) exchange->begin_stream(200, "text/event-stream", headers);

  exchange->on_end([engine = &engine_, id](bool aborted) {
    if (aborted) engine->cancel(id);
  });
  engine_.submit(EngineRequest{id, std::move(prompt), max_tokens},
                 [exchange, completion](const TokenUpdate& update) {
                   on_update(*exchange, *completion, update);
                 });
}

}  // namespace kvsweep::sim
