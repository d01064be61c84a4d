// Resources and prompts a pack declares in resources.json, driven by the real
// clients: the official TypeScript SDK and the Inspector CLI against
// `packs mcp`, serving the conformance pack (test/mcp-conformance).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { buildConformance, conformanceDir, conformancePack, inspectorEnv, makeHome, nodeModules, packsBin, withTimeout } from "../lib.mjs";

const run = promisify(execFile);
const inspector = join(nodeModules, "@modelcontextprotocol", "inspector", "cli", "build", "cli.js");
const reads = `[approval]\nauto_approve = ["read_file"]\n`;

// connect starts packs mcp over stdio with the conformance pack installed.
async function connect(t, policy) {
  buildConformance();
  const { env, home } = makeHome(t, policy, [conformanceDir]);
  const client = new Client({ name: "resources-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: packsBin, args: ["mcp", "--approval-timeout", "1s"], env, stderr: "ignore" }));
  t.after(() => client.close());
  return { client, home, env };
}

test("TypeScript SDK: declared resources, a template and prompts with arguments", async (t) => {
  const { client } = await connect(t, reads);
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.includes("test://static-text"), `declared resources listed: ${uris}`);
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
  assert.ok(templates.includes("test://template/{id}/data"), `declared template listed: ${templates}`);

  const text = await client.readResource({ uri: "test://static-text" });
  assert.equal(text.contents[0].mimeType, "text/plain");
  assert.match(text.contents[0].text, /static text resource/);
  const bin = await client.readResource({ uri: "test://static-binary" });
  assert.equal(Buffer.from(bin.contents[0].blob, "base64").subarray(1, 4).toString(), "PNG");
  const data = await client.readResource({ uri: "test://template/123/data" });
  assert.match(data.contents[0].text, /123/);

  const prompt = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "alpha", arg2: "beta" } });
  assert.equal(prompt.messages[0].content.text, "Prompt with arguments: arg1='alpha', arg2='beta'");
  await assert.rejects(client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "alpha" } }), "a required argument is missing");
  const embedded = await client.getPrompt({ name: "test_prompt_with_embedded_resource", arguments: { resourceUri: "test://example-resource" } });
  assert.equal(embedded.messages[0].content.type, "resource");
  assert.match(embedded.messages[0].content.resource.text, /Embedded resource content/);
});

test("TypeScript SDK: nothing outside the pack is read", async (t) => {
  const { client } = await connect(t, reads);
  for (const uri of [
    "test://template/..%2F..%2F..%2Fpacks.lock/data", // a template value that is no file name
    "test://template/../data",
    `pack://${conformancePack}/../../packs.lock`,
    "test://not-declared",
  ]) {
    await assert.rejects(client.readResource({ uri }), `${uri} is refused`);
  }
  await assert.rejects(
    client.getPrompt({ name: "test_prompt_with_embedded_resource", arguments: { resourceUri: `pack://${conformancePack}/SKILL.md` } }),
    "a prompt embeds only the pack's declared resources",
  );
});

test("TypeScript SDK: a declared resource is read only when approved", async (t) => {
  const { client } = await connect(t); // no policy, no elicitation: the call waits 1 s, then is denied
  await assert.rejects(client.readResource({ uri: "test://static-text" }), /approv/);
});

test("TypeScript SDK: a subscription fires when the resource's file changes", async (t) => {
  const { client, home } = await connect(t, reads);
  let onUpdated;
  const updated = new Promise((resolve) => (onUpdated = resolve));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => onUpdated(n.params.uri));
  assert.equal(client.getServerCapabilities().resources?.subscribe, true, "the server offers subscriptions");
  await client.subscribeResource({ uri: "test://watched-resource" });
  writeFileSync(join(home, "packs", conformancePack, "resources", "watched.txt"), "changed\n");
  assert.equal(await withTimeout(updated, 20000, "notifications/resources/updated"), "test://watched-resource");
  await client.unsubscribeResource({ uri: "test://watched-resource" });
});

test("Inspector CLI: reads a declared resource and gets a prompt with arguments", async (t) => {
  buildConformance();
  const { env } = makeHome(t, reads, [conformanceDir]);
  const server = [...inspectorEnv(env), packsBin, "mcp", "--approval-timeout", "1s"];
  const inspect = async (args) => JSON.parse((await run(process.execPath, [inspector, "--cli", ...server, ...args], { timeout: 120000, maxBuffer: 16 << 20 })).stdout);
  const res = await inspect(["--method", "resources/read", "--uri", "test://static-text"]);
  assert.match(res.contents[0].text, /static text resource/);
  const prompt = await inspect(["--method", "prompts/get", "--prompt-name", "test_prompt_with_arguments", "--prompt-args", "arg1=one", "arg2=two"]);
  assert.equal(prompt.messages[0].content.text, "Prompt with arguments: arg1='one', arg2='two'");
  await assert.rejects(inspect(["--method", "resources/read", "--uri", `pack://${conformancePack}/../../packs.lock`]), "a path out of the pack is refused");
});
