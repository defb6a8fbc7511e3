// Streams a chat completion and a completion from a kvsweep fleet with the official openai
// package: a client no one here wrote must accept the sim's wire format.
import OpenAI from "openai";

const baseURL = process.argv[2] + "/v1";
const client = new OpenAI({ baseURL, apiKey: "unused" });

function check(cond, what) {
  if (!cond) {
    console.error("FAIL: " + what);
    process.exit(1);
  }
}

const chat = await client.chat.completions.create({
  model: "sim-model",
  messages: [{ role: "user", content: "Say something." }],
  max_tokens: 5,
  stream: true,
  stream_options: { include_usage: true },
});
let chatText = "";
let chatFinish = null;
let chatUsage = null;
for await (const chunk of chat) {
  if (chunk.choices.length > 0) {
    chatText += chunk.choices[0].delta.content ?? "";
    chatFinish = chunk.choices[0].finish_reason ?? chatFinish;
  }
  if (chunk.usage) chatUsage = chunk.usage;
}
check(chatText.length > 0, "chat text");
check(chatFinish === "length", "chat finish_reason " + chatFinish);
check(chatUsage && chatUsage.completion_tokens === 5, "chat usage");
check(chatUsage.prompt_tokens_details.cached_tokens >= 0, "cached_tokens");

const completion = await client.completions.create({
  model: "sim-model",
  prompt: "Once upon a time",
  max_tokens: 4,
  stream: true,
});
let text = "";
let finish = null;
for await (const chunk of completion) {
  text += chunk.choices[0].text;
  finish = chunk.choices[0].finish_reason ?? finish;
}
check(text.length > 0, "completion text");
check(finish === "length", "completion finish_reason " + finish);

const plain = await client.completions.create({ model: "sim-model", prompt: "Hi", max_tokens: 2 });
check(plain.usage.completion_tokens === 2, "non-streaming usage");

const models = await client.models.list();
check(models.data[0].id === "sim-model", "models");
console.log("openai npm client OK: chat '" + chatText + "', completion '" + text + "'");
