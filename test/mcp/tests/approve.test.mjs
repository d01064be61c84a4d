// A client that cannot elicit (like Claude Desktop) calls a tool: the call
// waits in the approval queue until a person decides it in another process
// on the same state directory: `packs approve`, or the web app (`packs
// serve`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeHome, pack, packsBin, withTimeout } from "../lib.mjs";

const run = promisify(execFile);
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

// approve runs bin/packs approve with args against env's home.
async function approve(env, ...args) {
  const { stdout } = await run(packsBin, ["approve", ...args], { env, timeout: 30000 });
  return stdout;
}

// waiting polls packs approve --json until a call waits, and returns it.
async function waiting(env) {
  for (let i = 0; i < 200; i++) {
    const calls = JSON.parse(await approve(env, "--json"));
    if (calls.length > 0) return calls[0];
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no call waits for approval");
}

async function plainClient(t, env, timeout) {
  const client = new Client({ name: "no-elicitation", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: packsBin, args: ["mcp", "--approval-timeout", timeout], env, stderr: "ignore" }));
  t.after(() => client.close());
  return client;
}

test("a call waits until packs approve approves it, then runs", async (t) => {
  const { env } = makeHome(t);
  const client = await plainClient(t, env, "60s");
  let settled = false;
  const call = client.callTool({ name: "open_docs", arguments: { pack_id: pack } }).finally(() => (settled = true));
  const queued = await waiting(env);
  assert.equal(queued.class, "open_docs");
  assert.equal(queued.client, "mcp:no-elicitation");
  assert.ok(queued.touches.length > 0, "the queue shows what the call touches");
  assert.ok(!settled, "the call returned before anyone approved it");
  const listed = await approve(env);
  assert.match(listed, new RegExp(queued.id), "packs approve lists the waiting call");
  assert.match(await approve(env, queued.id), /approved/);
  const res = await withTimeout(call, 20000, "the call after packs approve");
  assert.ok(!res.isError, `open_docs failed after approval: ${text(res)}`);
  assert.match(text(res), new RegExp(pack));
});

test("packs approve --deny refuses a waiting call", async (t) => {
  const { env } = makeHome(t);
  const client = await plainClient(t, env, "60s");
  const call = client.callTool({ name: "open_docs", arguments: { pack_id: pack } });
  const queued = await waiting(env);
  await approve(env, queued.id, "--deny");
  const res = await withTimeout(call, 20000, "the call after packs approve --deny");
  assert.ok(res.isError, "a denied call must not run");
  assert.equal(JSON.parse(text(res)).error.kind, "denied");
});

// startServe runs the web app (`packs serve`) on env's home and resolves
// with its base URL and the headers its API needs.
function startServe(t, env) {
  const e = { ...env };
  delete e.PACKS_TOKEN;
  const child = spawn(packsBin, ["serve", "--addr", "127.0.0.1:0"], { env: e, stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => child.kill("SIGTERM"));
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`packs serve did not start: ${err}`)), 20000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /web app at (http:\/\/[^/\s]+)\/\?token=(\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ base: m[1], headers: { Authorization: `Bearer ${decodeURIComponent(m[2])}` } });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`packs serve exited with ${code}: ${err}`));
    });
  });
}

test("a call waits until the person approves it in the web app's queue", async (t) => {
  const { env } = makeHome(t);
  const web = await startServe(t, env);
  const client = await plainClient(t, env, "60s");
  const call = client.callTool({ name: "open_docs", arguments: { pack_id: pack } });
  let items = [];
  for (let i = 0; i < 200 && items.length === 0; i++) {
    const res = await fetch(`${web.base}/v1/queue`, { headers: web.headers });
    assert.equal(res.status, 200);
    ({ items } = await res.json());
    if (items.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(items.length, 1, "GET /v1/queue lists the waiting call");
  assert.equal(items[0].class, "open_docs");
  const decided = await fetch(`${web.base}/v1/queue/${items[0].id}/approve`, { method: "POST", headers: web.headers });
  assert.equal(decided.status, 200);
  const res = await withTimeout(call, 20000, "the call after the web app approved it");
  assert.ok(!res.isError, `open_docs failed after approval: ${text(res)}`);
});
