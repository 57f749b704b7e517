// A Model Context Protocol client from another implementation (the official TypeScript SDK) that drives the
// deepresearch MCP server over stdio, for the Go tests. It prints one JSON object per line:
//   {"server": {...}}  {"tools": [...]}  {"progress": {...}}  {"result": {...}}  {"resources": [...]}  {"read": {...}}
//
// usage: node client.mjs QUESTION CORPUS_DIR -- COMMAND [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep !== 2 || argv.length < 4) {
  console.error("usage: node client.mjs QUESTION CORPUS_DIR -- COMMAND [ARGS...]");
  process.exit(2);
}
const [question, corpus] = argv;
const [command, ...args] = argv.slice(3);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "deepresearch-ts-test-client", version: "1.0.0" });
await client.connect(transport);
out({ server: client.getServerVersion() });

const tools = await client.listTools();
out({ tools: tools.tools.map((t) => ({ name: t.name, required: t.inputSchema.required || [], properties: Object.keys(t.inputSchema.properties || {}) })) });

const result = await client.callTool(
  { name: "deep_research", arguments: { question, sources: { corpus: [corpus] }, budget: { max_minutes: 5 } } },
  undefined,
  { onprogress: (p) => out({ progress: p }), timeout: 120000, resetTimeoutOnProgress: true },
);
out({ result });

const resources = await client.listResources();
out({ resources: resources.resources.map((r) => r.uri) });
const uri = result.structuredContent && result.structuredContent.report_uri;
if (uri) {
  const read = await client.readResource({ uri });
  out({ read: { uri, text: read.contents[0].text } });
}
await client.close();
