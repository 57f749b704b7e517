// Drives deepresearch's OpenAI-compatible API with the official OpenAI JavaScript client (the npm package
// "openai", pinned in testdata/install.sh). Usage: node openai_client.mjs BASE_URL API_KEY QUESTION
// Prints one JSON object a line: the model list, a non-streaming completion, a streaming one (its reasoning and
// content as they arrived), and the errors the client raises for a wrong key and an unknown model.
import OpenAI from "openai";

const [baseURL, apiKey, question] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const models = await client.models.list();
out({ models: models.data.map((m) => m.id) });

const done = await client.chat.completions.create({
  model: "deepresearch-quick",
  messages: [{ role: "user", content: question }],
});
out({
  completion: {
    id: done.id,
    content: done.choices[0].message.content,
    reasoning: done.choices[0].message.reasoning_content ?? "",
    finish: done.choices[0].finish_reason,
  },
});

const stream = await client.chat.completions.create({
  model: "deepresearch",
  messages: [{ role: "user", content: [{ type: "text", text: question }] }],
  stream: true,
  stream_options: { include_usage: true },
});
let reasoning = "", content = "", finish = null, usage = null, order = [];
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    if (c.delta.reasoning_content) { reasoning += c.delta.reasoning_content; order.push("r"); }
    if (c.delta.content) { content += c.delta.content; order.push("c"); }
    if (c.finish_reason) finish = c.finish_reason;
  }
}
out({ stream: { reasoning, content, finish, usage, order: order.join("") } });

for (const [name, fn] of [
  ["wrong-key", () => new OpenAI({ baseURL, apiKey: "wrong-key-000000", maxRetries: 0 }).models.list()],
  ["unknown-model", () => client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "q" }] })],
  ["tools", () => client.chat.completions.create({
    model: "deepresearch", messages: [{ role: "user", content: question }],
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
  })],
]) {
  try {
    await fn();
    out({ error: { name, status: 0 } });
  } catch (e) {
    out({ error: { name, status: e.status ?? -1, code: e.code ?? null, type: e.constructor.name } });
  }
}
