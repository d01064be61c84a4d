// Flat mode: `packs mcp --tools PACK` lists the pack's tools from the first
// tools/list under their own names, and a call runs through the same gate.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeHome, pack, packsBin } from "../lib.mjs";

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

test("packs mcp --tools lists a pack's tools at once under their own names", async (t) => {
  const { env } = makeHome(t, `[approval]\nauto_approve = ["${pack}__query"]\n`);
  const client = new Client({ name: "flat-client", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: packsBin, args: ["mcp", "--tools", pack, "--approval-timeout", "1s"], env, stderr: "ignore" }));
  t.after(() => client.close());
  const tools = (await client.listTools()).tools;
  const names = tools.map((x) => x.name);
  const query = tools.find((x) => x.name === "query");
  assert.equal(query?.annotations?.readOnlyHint, true, "a pack granted nothing is read-only");
  assert.equal(query?.annotations?.openWorldHint, false, "a pack without network is a closed world");
  assert.ok(tools.find((x) => x.name === "open_docs").title, "the base tools have titles");
  assert.ok(names.includes("query"), `query listed without enable_tools: ${names}`);
  assert.ok(names.includes("open_docs"), `the base tools stay: ${names}`);
  const res = await client.callTool({ name: "query", arguments: { data: { a: [1, 2] }, path: ".a[1]" } });
  assert.ok(!res.isError, `query failed: ${text(res)}`);
  assert.match(text(res), /2/);
});
