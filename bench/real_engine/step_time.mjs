// Times llama.cpp steps of known composition on the bench's model: what one engine step costs.
//
// usage: taskset -c 1 node step_time.mjs --model models/bench.gguf [--threads 1] [--repeats 5]
//                                        [--slots 4] [--context 1024] [--batch 512] [--json]
//
// The context is made as server.mjs makes it (same slots, context, batch, threads). Two kinds
// of step, each timed --repeats times (the median is printed):
//  - decode: k sequences (1..slots) each holding L tokens decode one token each in one step;
//  - generate: the same through the generator server.mjs uses (16 tokens sampled, time / 16);
//  - mixed: k sequences decoding and one prompt of P tokens after R reused, in one step;
//  - prefill: one sequence holding R reused tokens evaluates P new prompt tokens in one step.
// Rows go to stdout as a table (or JSON lines with --json) for step_fit.py to fit the step
// model's terms to. Token ids are random: a random-weight model costs the same for any ids.

import {parseArgs} from "node:util";
import {getLlama} from "node-llama-cpp";

const {values: args} = parseArgs({
  options: {
    "model": {type: "string"},
    "threads": {type: "string", default: "1"},
    "repeats": {type: "string", default: "5"},
    "slots": {type: "string", default: "4"},
    "context": {type: "string", default: "1024"},
    "batch": {type: "string", default: "512"},
    "json": {type: "boolean", default: false},
  },
  strict: true,
});
if (!args.model) {
  console.error("step_time.mjs: error: --model FILE is required");
  process.exit(2);
}
const threads = Number(args.threads);
const repeats = Number(args.repeats);
const numSlots = Number(args.slots);
const contextSize = Number(args.context);
const batchSize = Number(args.batch);
const kDecodeSteps = 16;

const llama = await getLlama({gpu: false, build: "never", maxThreads: threads, logLevel: "error",
                              progressLogs: false});
const model = await llama.loadModel({modelPath: args.model});
const vocab = model.tokens.count ?? 512;
const context = await model.createContext({contextSize, sequences: numSlots, batchSize, threads,
                                           flashAttention: false});
const sequences = [];
for (let i = 0; i < numSlots; ++i) sequences.push(context.getSequence());

let seed = 12345;
function randomTokens(n) {
  const out = [];
  for (let i = 0; i < n; ++i) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out.push(3 + (seed % (vocab - 3)));
  }
  return out;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function fill(sequence, n) {
  await sequence.clearHistory();
  if (n > 0) await sequence.evaluateWithoutGeneratingNewTokens(randomTokens(n));
}

// One step of `decodes` sequences each holding `length` tokens and decoding one, plus (when
// prompt > 0) the last sequence, holding `reused` tokens, evaluating `prompt` new ones: every
// evaluation is queued in the same tick, so node-llama-cpp runs them as one batch (its
// "nextCycle" dispatch). The sequences are refilled before each repeat, outside the timing.
// Microseconds, the median of --repeats.
async function step(decodes, length, prompt, reused) {
  const times = [];
  for (let r = 0; r < repeats; ++r) {
    for (let i = 0; i < decodes; ++i) await fill(sequences[i], length);
    if (prompt > 0) await fill(sequences[numSlots - 1], reused);
    const work = [];
    const start = performance.now();
    for (let i = 0; i < decodes; ++i) {
      work.push(sequences[i].evaluateWithoutGeneratingNewTokens(randomTokens(1)));
    }
    if (prompt > 0) {
      work.push(sequences[numSlots - 1].evaluateWithoutGeneratingNewTokens(randomTokens(prompt)));
    }
    await Promise.all(work);
    times.push((performance.now() - start) * 1000);
  }
  return median(times);
}

// k sequences at L tokens decode 16 tokens through the generator server.mjs uses (sampling
// each token, as a request does); microseconds a step.
async function generatedDecodeStep(k, length) {
  const times = [];
  for (let r = 0; r < repeats; ++r) {
    for (let i = 0; i < k; ++i) await fill(sequences[i], length);
    const start = performance.now();
    await Promise.all(sequences.slice(0, k).map(async (sequence) => {
      let produced = 0;
      for await (const token of sequence.evaluate(randomTokens(1), {temperature: 0,
                                                                  yieldEogToken: true})) {
        void token;
        if (++produced >= kDecodeSteps) break;
      }
    }));
    times.push((performance.now() - start) * 1000 / kDecodeSteps);
  }
  return median(times);
}

const rows = [];
function emit(row) {
  rows.push(row);
  if (args.json) {
    console.log(JSON.stringify(row));
  } else {
    console.log(`${row.kind.padEnd(9)} k=${String(row.decodes).padStart(1)} ` +
                `P=${String(row.prefill).padStart(3)} R=${String(row.reused).padStart(3)} ` +
                `L=${String(row.context).padStart(4)}  ${row.step_us.toFixed(0).padStart(6)} us`);
  }
}

const lengths = [16, 128, 256, 384, 512, 768];
for (const k of [1, 2, 3, 4].filter((k) => k <= numSlots)) {
  for (const length of lengths) {
    emit({kind: "decode", decodes: k, prefill: 0, reused: 0, context: length,
          step_us: await step(k, length, 0, 0)});
  }
}
for (const k of [1, 4].filter((k) => k <= numSlots)) {
  for (const length of [16, 384, 768]) {
    if (length + kDecodeSteps + 1 > contextSize) continue;
    // Attention per decode reads the sequence's tokens: L held + 1..16 decoded, about L + 8.
    emit({kind: "generate", decodes: k, prefill: 0, reused: 0, context: length + kDecodeSteps / 2,
          step_us: await generatedDecodeStep(k, length)});
  }
}
for (const reused of [0, 128, 256, 512]) {
  for (const prompt of [16, 64, 128, 256, 448]) {
    if (reused + prompt > contextSize || prompt > batchSize) continue;
    emit({kind: "prefill", decodes: 0, prefill: prompt, reused, context: 0,
          step_us: await step(0, 0, prompt, reused)});
  }
}
// Mixed steps: a prompt joining sequences that decode, as at a busy replica.
for (const k of [1, 3].filter((k) => k < numSlots)) {
  for (const [length, prompt, reused] of [[384, 64, 256], [384, 128, 0], [768, 128, 256],
                                          [128, 256, 128]]) {
    emit({kind: "mixed", decodes: k, prefill: prompt, reused, context: length,
          step_us: await step(k, length, prompt, reused)});
  }
}
await context.dispose();
await model.dispose();
