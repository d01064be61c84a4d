// The MCP Inspector's CLI mode (`mcp-inspector --cli`) lists and calls the
// tools of `packs mcp`, over stdio and over Streamable HTTP. It cannot answer
// elicitation, so the calls it makes are approved by an enterprise policy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { inspectorEnv, makeHome, nodeModules, pack, packsBin, startHTTP } from "../lib.mjs";

const run = promisify(execFile);
const inspector = join(nodeModules, "@modelcontextprotocol", "inspector", "cli", "build", "cli.js");

// inspect runs one Inspector CLI command and returns its parsed JSON output.
async function inspect(args) {
  const { stdout } = await run(process.execPath, [inspector, "--cli", ...args], { timeout: 120000, maxBuffer: 16 << 20 });
  return JSON.parse(stdout);
}

// stdio runs packs mcp as the Inspector's child, with env's PACKS_HOME and policy.
// A call nobody approves waits 1 s in the approval queue, not the default
// 2 minutes (the Inspector cannot elicit).
const stdio = (env) => [...inspectorEnv(env), packsBin, "mcp", "--approval-timeout", "1s"];

const policy = `[approval]\nauto_approve = ["open_docs", "read_file"]\n`;

test("Inspector CLI lists the tools over stdio", async (t) => {
  const { env } = makeHome(t);
  const out = await inspect([...stdio(env), "--method", "tools/list"]);
  assert.deepEqual(out.tools.map((x) => x.name).sort(), ["enable_tools", "open_docs", "read_file"]);
});

test("Inspector CLI calls a tool the policy approves", async (t) => {
  const { env } = makeHome(t, policy);
  const out = await inspect([...stdio(env), "--method", "tools/call", "--tool-name", "open_docs", "--tool-arg", `pack_id=${pack}`]);
  assert.ok(!out.isError, `open_docs failed: ${JSON.stringify(out)}`);
  assert.match(out.content[0].text, /json-tools/);
});

test("Inspector CLI call without an approver is denied", async (t) => {
  const { env } = makeHome(t);
  const out = await inspect([...stdio(env), "--method", "tools/call", "--tool-name", "open_docs", "--tool-arg", `pack_id=${pack}`]);
  assert.ok(out.isError, "the call ran with nobody approving it");
  assert.match(out.content[0].text, /auto_approve/);
});

test("Inspector CLI over Streamable HTTP: tools, call, resource", async (t) => {
  const { env } = makeHome(t, policy);
  const { url, headers } = await startHTTP(t, env, ["--approval-timeout", "1s"]);
  const auth = ["--header", `Authorization: ${headers.Authorization}`];
  await assert.rejects(inspect([url, "--transport", "http", "--method", "tools/list"]), "without the bearer token the server refuses");
  const tools = await inspect([url, "--transport", "http", ...auth, "--method", "tools/list"]);
  assert.ok(tools.tools.some((x) => x.name === "read_file"));
  const call = await inspect([url, "--transport", "http", ...auth, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", `pack_id=${pack}`, "path=SKILL.md"]);
  assert.ok(!call.isError, `read_file failed: ${JSON.stringify(call)}`);
  const res = await inspect([url, "--transport", "http", ...auth, "--method", "resources/read", "--uri", `pack://${pack}/SKILL.md`]);
  assert.match(res.contents[0].text, new RegExp(`name: ${pack}`));
});
