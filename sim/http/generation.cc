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
  Choice choice;
  choice.piece_seed = piece_seed;
  choices_.push_back(std::move(choice));
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
    total.completion_tokens += choice.written;
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
    // output processor records them (when the engine makes it, not when the client reads it).
    if (choice.output_tokens == 0) {
      latencies_->ttft_s.observe(seconds(now - arrival_));
    } else {
      latencies_->itl_s.observe(seconds(now - choice.last_token));
    }
    choice.last_token = now;
  }
  choice.output_tokens = update.output_tokens;
  if (update.finished) {
    choice.finished = true;
    choice.finished_with_token = update.new_tokens > 0;
    choice.finish_reason = update.finish_reason;
    --remaining_;
    latencies_->e2e_s.observe(seconds(now - arrival_));
  }
  if (!waiting_for_drain_) flush();
}

// Streaming: one chunk per token, in order; the last token's chunk carries the finish reason
// when the finish came with it, else a chunk of its own follows. Returns false when writing
// must stop here: the exchange is backlogged (a drain resumes it) or the stream was cut.
bool Generation::write_pending(int index, Choice& choice) {
  const ApiKind kind = options_.kind;
  while (choice.written < choice.output_tokens) {
    if (exchange_->backlogged()) return false;
    const int i = choice.written;
    const std::string piece = generated_piece(choice.piece_seed, i);
    choice.written = i + 1;
    const Usage running = usage();
    const Usage* usage_ptr = options_.continuous_usage ? &running : nullptr;
    // vLLM sends the chat role chunk with the first token, not before it.
    if (i == 0 && kind == ApiKind::kChat) {
      exchange_->write_chunk(sse_role_chunk(options_.id, index, usage_ptr));
    }
    const bool last =
        choice.finished && choice.finished_with_token && choice.written == choice.output_tokens;
    exchange_->write_chunk(sse_token_chunk(kind, options_.id, index, piece,
                                           last ? choice.finish_reason : "", usage_ptr));
    if (last) choice.finish_written = true;
    ++tokens_sent_;
    if (options_.cut_after_tokens >= 0 && tokens_sent_ >= options_.cut_after_tokens) {
      ended_ = true;
      exchange_->sever();  // injected fault: the stream stops here, mid-way, with a reset
      return false;
    }
  }
  if (choice.finished && !choice.finish_written) {
    if (exchange_->backlogged()) return false;
    // The finish came in an update of its own.
    const Usage running = usage();
    exchange_->write_chunk(sse_token_chunk(kind, options_.id, index, "", choice.finish_reason,
                                           options_.continuous_usage ? &running : nullptr));
    choice.finish_written = true;
  }
  return true;
}

void Generation::flush() {
  waiting_for_drain_ = false;
  if (ended_ || exchange_->ended()) return;  // the client left; the engine was told to cancel
  if (!options_.stream) {
    // A whole reply: the text is kept until the last choice finishes.
    for (Choice& c : choices_) {
      for (; c.written < c.output_tokens; ++c.written)
        c.text += generated_piece(c.piece_seed, c.written);
    }
    if (remaining_ == 0) write_end();
    return;
  }
  for (std::size_t index = 0; index < choices_.size(); ++index) {
    if (write_pending(static_cast<int>(index), choices_[index])) continue;
    if (ended_) return;
    // Backlogged: the engine's next tokens are only counted until the client catches up.
    waiting_for_drain_ = true;
    exchange_->on_drained([self = shared_from_this()] { self->flush(); });
    return;
  }
  if (remaining_ == 0) write_end();
}

void Generation::write_end() {
  ended_ = true;
  const ApiKind kind = options_.kind;
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
