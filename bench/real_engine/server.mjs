// One llama.cpp replica (node-llama-cpp) behind the OpenAI SSE surface kvsweep's driver speaks.
//
// usage: node server.mjs --model FILE --port N [--slots 4] [--threads 1] [--context 1024]
//                        [--batch 512] [--model-name bench-llama]
//
// The engine is a llama.cpp context with --slots sequences, evaluated together in one batch of
// at most --batch tokens a step (node-llama-cpp batches every sequence's pending tokens). Each
// sequence is a slot that keeps its tokens after a request ends, as llama.cpp's server keeps a
// prompt cache per slot: a new request takes the free slot whose tokens share the longest
// prefix with its prompt (ties: the slot used least recently), keeps that prefix, erases the
// rest and evaluates the remainder. kvsweep's `engine: slot` profiles model exactly this
// (docs/profiles.md). Requests beyond --slots wait in FIFO order. A new prompt joins the next
// batch beside the running decodes, as in llama.cpp's own server (holdDecodes says how).
//
// Tokens: the prompt is rendered with kvsweep's simulated chat template and cut into 4-byte
// pieces, each hashed to a token id, as sim/engine/tokenizer.cc does, so that this server and
// kvsweep's predictor count the same prompt tokens and find the same shared prefixes. The
// model's own SentencePiece vocabulary is never used; its random weights choose the output.
//
// Listens on 127.0.0.1 only: a bench server, with no authentication.

import http from "node:http";
import {parseArgs} from "node:util";
import {getLlama} from "node-llama-cpp";

const {values: args} = parseArgs({
  options: {
    "model": {type: "string"},
    "port": {type: "string"},
    "slots": {type: "string", default: "4"},
    "threads": {type: "string", default: "1"},
    "context": {type: "string", default: "1024"},
    "batch": {type: "string", default: "512"},
    "model-name": {type: "string", default: "bench-llama"},
  },
  strict: true,
});

function positiveInt(name) {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`server.mjs: error: --${name}: expected a whole number >= 1, got "${args[name]}"`);
    process.exit(2);
  }
  return value;
}
if (!args.model || !args.port) {
  console.error("server.mjs: error: --model FILE and --port N are required");
  process.exit(2);
}
const port = positiveInt("port");
const numSlots = positiveInt("slots");
const threads = positiveInt("threads");
const contextSize = positiveInt("context");
const batchSize = positiveInt("batch");
const modelName = args["model-name"];
const kBlockSize = 16;  // only to express the slots' capacity as vLLM's cache_config_info does

// ---- the engine ----

// build: "never": the bench runs on node-llama-cpp's prebuilt CPU binaries from npm; a missing
// binary must fail here, not start a compile that needs GitHub.
const llama = await getLlama({gpu: false, build: "never", maxThreads: threads, logLevel: "error",
                              progressLogs: false});
const model = await llama.loadModel({modelPath: args.model});
const vocabSize = model.tokens.count ?? model.fileInsights?.vocabularySize ?? 512;
const context = await model.createContext({
  contextSize,
  sequences: numSlots,
  batchSize,
  threads,
  flashAttention: false,
});
const slots = [];
for (let i = 0; i < numSlots; ++i) {
  slots.push({index: i, sequence: context.getSequence(), busy: false, lastUsed: 0,
              clearWhenFree: false});
}
const waiting = [];  // FIFO of {tokens, grant(slot, reused)}
let useClock = 0;

// Admissions hold the running sequences' next tokens back. node-llama-cpp runs its batches in a
// loop that keeps the context's lock while any evaluation is queued, and erasing a slot's
// tokens (which every admission but a cold one does) needs that lock: with a few sequences
// decoding, each re-queueing its next token as soon as it has its last, the queue is rarely
// empty, so a new prompt waited for the running requests to end while they decoded unstalled
// (measured: 3 users on one replica, mean TTFT 46 ms against 16 for one, and 39 of 3,300
// token gaps over 10 ms where each of 144 prompts should have stalled two sequences). llama.cpp's
// own server puts a new prompt in its next batch beside the decodes, and so does kvsweep's
// model (docs/profiles.md, `engine: slot`). So while an admission is erasing and queueing its
// prompt, running requests wait before asking for their next token; the dispatch loop finds
// its queue empty and lets the lock go, the erase runs, the prompt is queued, and the held
// tokens join it in the next batch.
let admissionsPending = 0;
let admissionsDone = null;  // resolves when admissionsPending returns to 0
let openGate = null;

function holdDecodes() {
  if (admissionsPending++ === 0) admissionsDone = new Promise((resolve) => { openGate = resolve; });
}

function releaseDecodes() {
  if (--admissionsPending === 0) {
    admissionsDone = null;
    openGate();
  }
}

const counters = {
  prefixQueries: 0, prefixHits: 0, promptTokens: 0, generationTokens: 0, finished: 0,
  aborted: 0, ttft: newHistogram(), itl: newHistogram(), e2e: newHistogram(),
};

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) ++i;
  return i;
}

// The free slot sharing the longest prefix with `tokens`; ties go to the least recently used,
// so that a prompt with nothing cached does not overwrite a slot another prompt could reuse.
function bestFreeSlot(tokens) {
  let best = null;
  let bestShared = -1;
  for (const slot of slots) {
    if (slot.busy) continue;
    const shared = commonPrefix(slot.sequence.contextTokens, tokens);
    if (shared > bestShared || (shared === bestShared && slot.lastUsed < best.lastUsed)) {
      best = slot;
      bestShared = shared;
    }
  }
  return best === null ? null : {slot: best, shared: bestShared};
}

// Takes a slot for `tokens` (waiting in FIFO order when none is free) and keeps the longest
// shared prefix the slot holds, at most all but the last prompt token: that one is always
// evaluated, so the step has logits to sample the first output token from.
async function acquireSlot(tokens) {
  const pick = await new Promise((grant) => {
    waiting.push({tokens, grant});
    dispatch();
  });
  const {slot} = pick;
  const reused = Math.min(pick.shared, tokens.length - 1);
  const held = slot.sequence.nextTokenIndex;
  holdDecodes();  // the caller releases them once its prompt is queued
  try {
    if (held > reused) await slot.sequence.eraseContextTokenRanges([{start: reused, end: held}]);
  } catch (e) {
    releaseDecodes();
    throw e;
  }
  return {slot, reused};
}

// Hands free slots to waiting requests, first come first served. A slot is marked busy here,
// synchronously, so that no two requests are ever granted the same one.
function dispatch() {
  while (waiting.length > 0) {
    const pick = bestFreeSlot(waiting[0].tokens);
    if (pick === null) return;
    const next = waiting.shift();
    pick.slot.busy = true;
    pick.slot.lastUsed = ++useClock;
    next.grant(pick);
  }
}

function releaseSlot(slot) {
  const clear = slot.clearWhenFree;
  slot.clearWhenFree = false;
  const done = () => {
    slot.busy = false;
    dispatch();
  };
  if (clear) slot.sequence.clearHistory().then(done, done);
  else done();
}

// ---- tokens ----

// 32-bit FNV-1a of one piece; ids 3.. (0-2 are <unk>, <s>, </s>).
function pieceToken(bytes, start, end) {
  let h = 0x811c9dc5;
  for (let i = start; i < end; ++i) {
    h ^= bytes[i];
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return 3 + (h % (vocabSize - 3));
}

function tokenize(text) {
  const bytes = Buffer.from(text, "utf8");
  const tokens = [];
  for (let at = 0; at < bytes.length; at += 4) {
    tokens.push(pieceToken(bytes, at, Math.min(at + 4, bytes.length)));
  }
  return tokens;
}

// The text of an output token: a short word with its space, about one 4-byte piece, so that a
// reply carried into the next turn's history counts about as many tokens as it had.
const kWords = ["the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with",
                "be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "an"];
function tokenText(token) { return " " + kWords[token % kWords.length]; }

function messageText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.filter((p) => p && p.type === "text").map((p) => String(p.text ?? "")).join("");
  }
  return "";
}

// kvsweep's simulated chat template (sim/engine/chat_template.cc).
function renderChat(messages) {
  let text = "";
  for (const m of messages) text += `<|${m.role}|>\n${messageText(m.content)}\n`;
  return text + "<|assistant|>\n";
}

// ---- histograms and /metrics ----

function newHistogram() {
  return {bounds: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
          counts: new Array(13).fill(0), sum: 0, count: 0};
}
function observe(h, seconds) {
  for (let i = 0; i < h.bounds.length; ++i) if (seconds <= h.bounds[i]) h.counts[i]++;
  h.sum += seconds;
  h.count++;
}

function metricsText() {
  const label = `{model_name="${modelName}"}`;
  const lines = [];
  const family = (name, type, help, value) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}${label} ${value}`);
  };
  const running = slots.filter((s) => s.busy).length;
  let held = 0;
  for (const s of slots) held += s.sequence.nextTokenIndex;
  const usage = held / (numSlots * contextSize);
  family("vllm:num_requests_running", "gauge", "Requests holding a slot.", running);
  family("vllm:num_requests_waiting", "gauge", "Requests waiting for a free slot.", waiting.length);
  family("vllm:kv_cache_usage_perc", "gauge", "Tokens held by the slots over their capacity.", usage);
  family("vllm:gpu_cache_usage_perc", "gauge", "Same as kv_cache_usage_perc (pre-0.10 name).", usage);
  family("vllm:prefix_cache_queries_total", "counter", "Prompt tokens looked up in a slot.",
         counters.prefixQueries);
  family("vllm:prefix_cache_hits_total", "counter", "Prompt tokens reused from a slot.",
         counters.prefixHits);
  family("vllm:prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
         counters.promptTokens);
  family("vllm:generation_tokens_total", "counter", "Output tokens generated.",
         counters.generationTokens);
  family("vllm:num_preemptions_total", "counter", "Always 0: a slot is never taken back.", 0);
  lines.push("# HELP vllm:request_success_total Requests finished, by reason.",
             "# TYPE vllm:request_success_total counter",
             `vllm:request_success_total{model_name="${modelName}",finished_reason="length"} ` +
                 counters.finished);
  // The slots' capacity in vLLM's terms: 16-token blocks, so kvsweep calibrate reads the pool.
  lines.push("# HELP vllm:cache_config_info The slots' capacity as vLLM's CacheConfig.",
             "# TYPE vllm:cache_config_info gauge",
             `vllm:cache_config_info{block_size="${kBlockSize}",enable_prefix_caching="True",` +
                 `num_gpu_blocks="${Math.floor(numSlots * contextSize / kBlockSize)}"} 1`);
  const histogram = (name, help, h) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    h.bounds.forEach((b, i) => {
      lines.push(`${name}_bucket{model_name="${modelName}",le="${b}"} ${h.counts[i]}`);
    });
    lines.push(`${name}_bucket{model_name="${modelName}",le="+Inf"} ${h.count}`,
               `${name}_sum${label} ${h.sum}`, `${name}_count${label} ${h.count}`);
  };
  histogram("vllm:time_to_first_token_seconds", "Arrival to first token.", counters.ttft);
  histogram("vllm:inter_token_latency_seconds", "Between consecutive tokens.", counters.itl);
  histogram("vllm:e2e_request_latency_seconds", "Arrival to last token.", counters.e2e);
  return lines.join("\n") + "\n";
}

// ---- HTTP ----

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {"content-type": "application/json", "content-length": Buffer.byteLength(text)});
  res.end(text);
}

function sendError(res, status, message, param) {
  sendJson(res, status, {error: {message, type: status === 404 ? "NotFoundError" : "BadRequestError",
                                 param: param ?? null, code: status}});
}

function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit} bytes`));
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

let nextId = 1;

async function complete(req, res, chat) {
  let body;
  try {
    body = JSON.parse(await readBody(req, 8 << 20));
  } catch (e) {
    return sendError(res, 400, `request body: ${e.message}`, "");
  }
  if (body === null || typeof body !== "object") return sendError(res, 400, "expected a JSON object");
  let text;
  if (chat) {
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return sendError(res, 400, "messages: expected a non-empty array", "messages");
    }
    text = renderChat(body.messages);
  } else {
    if (typeof body.prompt !== "string") return sendError(res, 400, "prompt: expected a string", "prompt");
    text = body.prompt;
  }
  const maxTokens = body.max_tokens ?? body.max_completion_tokens ?? 64;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    return sendError(res, 400, "max_tokens: expected a whole number >= 1", "max_tokens");
  }
  const prompt = tokenize(text);
  if (prompt.length === 0) return sendError(res, 400, "empty prompt", chat ? "messages" : "prompt");
  // The slot holds prompt + output - 1 tokens (the last sampled token is never evaluated).
  if (prompt.length + maxTokens - 1 > contextSize) {
    return sendError(res, 400, `prompt (${prompt.length} tokens) + max_tokens (${maxTokens}) ` +
                     `exceeds the slot's context of ${contextSize} tokens`, "max_tokens");
  }
  const stream = body.stream === true;
  const includeUsage = stream && body.stream_options?.include_usage === true;
  const id = `${chat ? "chatcmpl" : "cmpl"}-${nextId++}`;
  const created = Math.floor(Date.now() / 1000);
  const arrival = performance.now();
  let gone = false;
  res.on("close", () => { if (!res.writableFinished) gone = true; });

  const {slot, reused} = await acquireSlot(prompt);
  counters.prefixQueries += prompt.length;
  counters.prefixHits += reused;
  counters.promptTokens += prompt.length;
  const chunk = (choice, usage) => {
    const c = {id, object: chat ? "chat.completion.chunk" : "text_completion", created,
               model: modelName, choices: choice === null ? [] : [choice]};
    if (usage) c.usage = usage;
    return `data: ${JSON.stringify(c)}\n\n`;
  };
  if (stream) {
    res.writeHead(200, {"content-type": "text/event-stream", "cache-control": "no-cache"});
    if (chat) {
      res.write(chunk({index: 0, delta: {role: "assistant", content: ""}, logprobs: null,
                       finish_reason: null}));
    }
  }
  let produced = 0;
  let last = arrival;
  let output = "";
  let generator = null;
  let decodesHeld = true;  // by acquireSlot, until the prompt is queued
  try {
    // ignore_eos in effect whatever the request says: kvsweep's driver expects max_tokens
    // tokens, and a random model's end-of-generation token means nothing.
    generator = slot.sequence.evaluate(prompt.slice(reused), {temperature: 0,
                                                             yieldEogToken: true});
    // Asking for the first token queues the prompt; only then may the held decodes go on, so
    // that they and the prompt make one batch (see holdDecodes).
    let pending = generator.next();
    releaseDecodes();
    decodesHeld = false;
    for (;;) {
      const {value: token, done: finished} = await pending;
      if (finished || gone) break;
      const now = performance.now();
      observe(produced === 0 ? counters.ttft : counters.itl, (now - last) / 1000);
      last = now;
      ++produced;
      ++counters.generationTokens;
      const piece = tokenText(token);
      const done = produced >= maxTokens;
      if (stream) {
        const reason = done ? "length" : null;
        res.write(chunk(chat ? {index: 0, delta: {content: piece}, logprobs: null, finish_reason: reason}
                             : {index: 0, text: piece, logprobs: null, finish_reason: reason,
                                stop_reason: null}));
      } else {
        output += piece;
      }
      if (done) break;
      if (admissionsDone !== null) await admissionsDone;
      pending = generator.next();
    }
  } catch (e) {
    console.error(`server.mjs: ${id}: evaluation failed: ${e.message}`);
    if (decodesHeld) releaseDecodes();
    if (!stream) {
      if (generator !== null) await generator.return(undefined).catch(() => {});
      releaseSlot(slot);
      return sendError(res, 500, `evaluation failed: ${e.message}`);
    }
  }
  // What `for await` would do on leaving the loop early: end the generator, which frees the
  // sequence's evaluation lock.
  if (generator !== null) await generator.return(undefined).catch(() => {});
  releaseSlot(slot);
  if (gone || produced < maxTokens) {
    ++counters.aborted;
    if (!res.writableEnded) res.end();
    return;
  }
  ++counters.finished;
  observe(counters.e2e, (performance.now() - arrival) / 1000);
  const usage = {prompt_tokens: prompt.length, total_tokens: prompt.length + produced,
                 completion_tokens: produced, prompt_tokens_details: {cached_tokens: reused}};
  if (stream) {
    if (includeUsage) res.write(chunk(null, usage));
    res.end("data: [DONE]\n\n");
  } else {
    const choice = chat ? {index: 0, message: {role: "assistant", content: output}, logprobs: null,
                           finish_reason: "length"}
                        : {index: 0, text: output, logprobs: null, finish_reason: "length",
                           stop_reason: null};
    sendJson(res, 200, {id, object: chat ? "chat.completion" : "text_completion", created,
                        model: modelName, choices: [choice], usage});
  }
}

function resetPrefixCache(res) {
  // A busy slot is cleared when its request ends; every other one now.
  const clears = [];
  for (const slot of slots) {
    if (slot.busy) slot.clearWhenFree = true;
    else clears.push(slot.sequence.clearHistory());
  }
  Promise.all(clears).then(() => sendJson(res, 200, {status: "ok"}),
                           (e) => sendError(res, 500, `reset failed: ${e.message}`));
}

const server = http.createServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0];
  const route = `${req.method} ${path}`;
  const failed = (e) => {
    console.error(`server.mjs: ${route}: ${e.stack ?? e}`);
    if (!res.headersSent) sendError(res, 500, String(e.message ?? e));
    else res.end();
  };
  switch (route) {
    case "GET /health":
      return sendJson(res, 200, {status: "ok"});
    case "GET /v1/models":
      return sendJson(res, 200, {object: "list", data: [{id: modelName, object: "model",
                                                         created: 0, owned_by: "kvsweep-bench",
                                                         max_model_len: contextSize}]});
    case "GET /metrics": {
      const text = metricsText();
      res.writeHead(200, {"content-type": "text/plain; version=0.0.4"});
      return res.end(text);
    }
    case "POST /reset_prefix_cache":
      return resetPrefixCache(res);
    case "POST /v1/chat/completions":
      return complete(req, res, true).catch(failed);
    case "POST /v1/completions":
      return complete(req, res, false).catch(failed);
    default:
      return sendError(res, 404, `no route ${route}`);
  }
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => {
  console.log(`server.mjs: ${modelName} on http://127.0.0.1:${port}: ${numSlots} slots of ` +
              `${contextSize} tokens, batch ${batchSize}, ${threads} thread(s), vocabulary ${vocabSize}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
