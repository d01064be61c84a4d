// The official MCP TypeScript SDK client drives `packs mcp` over stdio and
// over Streamable HTTP: list tools, enable a pack, see list_changed, call a
// WASM tool (approved through elicitation), read a resource, get a prompt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { makeHome, pack, packsBin, startHTTP, withTimeout } from "../lib.mjs";

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

async function scenario(t, transport) {
  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const forms = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    forms.push(req.params.message);
    return { action: "accept", content: { decision: "run_once" } };
  });
  let changed = 0;
  let onChanged;
  const listChanged = new Promise((resolve) => (onChanged = resolve));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
    onChanged();
  });
  await client.connect(transport);
  t.after(() => client.close());

  const before = (await client.listTools()).tools.map((x) => x.name).sort();
  assert.deepEqual(before, ["enable_tools", "open_docs", "read_file"], "only the base tools before enable_tools");
  assert.equal(changed, 0, "no list_changed before anything changed");

  const enabled = await client.callTool({ name: "enable_tools", arguments: { pack_id: pack } });
  assert.ok(!enabled.isError, `enable_tools failed: ${text(enabled)}`);
  await withTimeout(listChanged, 10000, "notifications/tools/list_changed after enable_tools");

  const after = (await client.listTools()).tools;
  const query = after.find((x) => x.name === `${pack}__query`);
  assert.ok(query, `${pack}__query listed after enable_tools: ${after.map((x) => x.name)}`);
  assert.ok(query.description.split("\n").length <= 4, "tool description stays brief (spec 004)");

  const res = await client.callTool({
    name: `${pack}__query`,
    arguments: { data: { users: [{ name: "ada" }, { name: "bob" }] }, path: ".users[1].name" },
  });
  assert.ok(!res.isError, `query failed: ${text(res)}`);
  assert.match(text(res), /"bob"/, "the WASM tool's result comes back");
  assert.equal(forms.length, 2, "the person was asked once per call (enable_tools, query)");
  assert.match(forms[1], new RegExp(`${pack}__query`), "the approval form names the call");

  const doc = await client.readResource({ uri: `pack://${pack}/SKILL.md` });
  assert.match(doc.contents[0].text, new RegExp(`name: ${pack}`), "the resource is the pack's SKILL.md");
  await assert.rejects(client.readResource({ uri: `pack://${pack}/../../packs.lock` }), "a path out of the pack is refused");

  const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  assert.ok(prompts.includes(pack), `one prompt per pack: ${prompts}`);
  const prompt = await client.getPrompt({ name: pack, arguments: { request: "find the names" } });
  assert.match(prompt.messages.at(-1).content.text, /find the names/);
}

test("TypeScript SDK client over stdio", async (t) => {
  const { env } = makeHome(t);
  await scenario(t, new StdioClientTransport({ command: packsBin, args: ["mcp"], env, stderr: "inherit" }));
});

test("TypeScript SDK client over Streamable HTTP", async (t) => {
  const { env } = makeHome(t);
  const { url, headers } = await startHTTP(t, env);
  await scenario(t, new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
});

test("a client without elicitation waits, is denied when nobody approves in time, and is told how to approve", async (t) => {
  const { env } = makeHome(t);
  const client = new Client({ name: "no-elicitation", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: packsBin, args: ["mcp", "--approval-timeout", "1s"], env, stderr: "ignore" }));
  t.after(() => client.close());
  const res = await client.callTool({ name: "open_docs", arguments: { pack_id: pack } });
  assert.ok(res.isError, "nobody approved the call, so it must not run");
  const body = JSON.parse(text(res));
  assert.equal(body.error.kind, "denied");
  assert.match(body.error.approve, /auto_approve/);
  assert.match(body.error.approve, /no-elicitation/);
  assert.match(body.error.approve, /packs approve/);
});

test("forged Host and Origin headers, and a missing or wrong token, are refused over HTTP", async (t) => {
  const { env } = makeHome(t);
  const { url, headers: auth } = await startHTTP(t, env);
  const init = JSON.stringify({
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  const { request } = await import("node:http");
  const post = (headers) =>
    new Promise((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      });
      req.on("error", reject);
      req.end(init);
    });
  assert.equal(await post({ host: "evil.example.com", ...auth }), 403, "forged Host");
  assert.equal(await post({ origin: "http://evil.example.com", ...auth }), 403, "forged Origin");
  assert.equal(await post({}), 401, "no bearer token, on loopback");
  assert.equal(await post({ Authorization: "Bearer wrong" }), 401, "a wrong bearer token");
  assert.equal(await post({ ...auth }), 200, "the real Host with the token is served");
});
