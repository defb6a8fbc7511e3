// One completion request in flight on a replica: its choices, SSE or JSON output, latencies.
#include "sim/http/generation.h"

#include "sim/engine/tokenizer.h"

namespace kvsweep::sim {
namespace {

double seconds(Generation::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

Generation::Generation(Options options, std::shared_ptr<Exchange> exchange,
                       LatencyHistograms* latencies)
    : options_(std::move(options)), exchange_(std::move(exchange)), latencies_(latencies) {}

int Generation::add_choice(std::uint64_t engine_id, std::uint64_t piece_seed) {
  choices_.push_back(Choice{piece_seed, "", "", 0, 0, 0, {}, false});
  engine_ids_.push_back(engine_id);
  ++remaining_;
  return static_cast<int>(choices_.size()) - 1;
}

void Generation::begin() {
  if (options_.stream) exchange_->begin_stream(200, "text/event-stream", options_.headers);
}

Usage Generation::usage() const {
  Usage total;
  for (const Choice& choice : choices_) {
    total.prompt_tokens += choice.prompt_tokens;
    total.completion_tokens += choice.output_tokens;
    total.cached_tokens += choice.cached_tokens;
  }
  return total;
}

void Generation::on_update(int index, const TokenUpdate& update) {
  Choice& choice = choices_[static_cast<std::size_t>(index)];
  if (choice.finished) return;
  const Clock::time_point now = Clock::now();
  choice.prompt_tokens = update.prompt_tokens;
  choice.cached_tokens = update.cached_tokens;
  if (update.new_tokens > 0) {
    // One sample per token: the first is TTFT, each later one an inter-token gap, as vLLM's
    // output processor records them.
    if (choice.output_tokens == 0) {
      latencies_->ttft_s.observe(seconds(now - arrival_));
    } else {
      latencies_->itl_s.observe(seconds(now - choice.last_token));
    }
    choice.last_token = now;
  }
  if (update.finished) {
    choice.finished = true;
    choice.finish_reason = update.finish_reason;
    --remaining_;
    latencies_->e2e_s.observe(seconds(now - arrival_));
  }
  if (exchange_->ended()) return;  // the client left; the engine was told to cancel

  const ApiKind kind = options_.kind;
  for (int i = update.output_tokens - update.new_tokens; i < update.output_tokens; ++i) {
    const std::string piece = generated_piece(choice.piece_seed, i);
    choice.output_tokens = i + 1;
    if (!options_.stream) {
      choice.text += piece;
      continue;
    }
    const Usage running = usage();
    const Usage* usage_ptr = options_.continuous_usage ? &running : nullptr;
    // vLLM sends the chat role chunk with the first token, not before it.
    if (i == 0 && kind == ApiKind::kChat) {
      exchange_->write_chunk(sse_role_chunk(options_.id, index, usage_ptr));
    }
    const bool last = update.finished && i == update.output_tokens - 1;
    exchange_->write_chunk(sse_token_chunk(kind, options_.id, index, piece,
                                           last ? update.finish_reason : "", usage_ptr));
    ++tokens_sent_;
    if (options_.cut_after_tokens >= 0 && tokens_sent_ >= options_.cut_after_tokens) {
      exchange_->sever();  // injected fault: the stream stops here, mid-way, with a reset
      return;
    }
  }
  choice.output_tokens = update.output_tokens;
  if (options_.stream && update.finished && update.new_tokens == 0) {
    // The finish came in an update of its own.
    const Usage running = usage();
    exchange_->write_chunk(sse_token_chunk(kind, options_.id, index, "", update.finish_reason,
                                           options_.continuous_usage ? &running : nullptr));
  }
  if (remaining_ > 0) return;
  if (!options_.stream) {
    std::vector<ChoiceText> texts;
    for (const Choice& c : choices_) texts.push_back(ChoiceText{c.text, c.finish_reason});
    exchange_->respond(
        json_response(200, response_body(kind, options_.id, texts, usage()), options_.headers));
    return;
  }
  if (options_.include_usage) exchange_->write_chunk(sse_usage_chunk(kind, options_.id, usage()));
  exchange_->write_chunk(kSseDone);
  exchange_->finish();
}

}  // namespace kvsweep::sim
