// Rich results and notifications with the official TypeScript SDK: a tool
// that returns an image (and audio and files) as MCP content blocks, and a
// tool whose guest logs and reports progress while the client listens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { makeHome, packsBin, repo } from "../lib.mjs";

// The test packs: media's show returns the content blocks it is given;
// notify-pack's work logs at debug, info and warn and reports progress 1/2
// then 2/2.
const packs = {
  media: join(repo, "internal", "web", "testdata", "media"),
  "notify-pack": join(repo, "internal", "mcpserver", "testdata", "notify-pack"),
};

async function connect(t) {
  const { home, env } = makeHome(t, `[approval]\nauto_approve = ["media__show", "notify-pack__work"]\n`);
  for (const dir of Object.values(packs)) {
    execFileSync(packsBin, ["--home", home, "add", dir, "--grant", "none", "--yes"], { stdio: ["ignore", "ignore", "inherit"] });
  }
  const client = new Client({ name: "rich-client", version: "1.0.0" });
  await client.connect(new StdioClientTransport({
    command: packsBin, args: ["mcp", "--tools", Object.keys(packs).join(","), "--approval-timeout", "1s"], env, stderr: "ignore",
  }));
  t.after(() => client.close());
  return client;
}

test("a tool returns an image, audio and files as content blocks", async (t) => {
  const client = await connect(t);
  const png = readFileSync(join(repo, "internal", "web", "testdata", "notes", "assets", "pixel.png")).toString("base64");
  const wav = Buffer.concat([Buffer.from("RIFF\x04\x00\x00\x00WAVE", "latin1"), Buffer.alloc(8)]).toString("base64");
  const res = await client.callTool({ name: "show", arguments: { content: [
    { type: "text", text: "a pixel" },
    { type: "image", data: png, mimeType: "image/png" },
    { type: "audio", data: wav, mimeType: "audio/wav" },
    { type: "resource", resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# notes" } },
  ] } });
  assert.ok(!res.isError, `show failed: ${JSON.stringify(res)}`);
  assert.deepEqual(res.content.map((c) => c.type), ["text", "image", "audio", "resource"]);
  assert.equal(res.content[1].mimeType, "image/png");
  assert.equal(res.content[1].data, png, "the image's bytes come back as they were");
  assert.equal(res.content[2].mimeType, "audio/wav");
  assert.equal(res.content[3].resource.text, "# notes");

  const bad = await client.callTool({ name: "show", arguments: { content: [
    { type: "image", data: Buffer.from("<svg onload=alert(1)>").toString("base64"), mimeType: "image/svg+xml" },
  ] } });
  assert.ok(bad.isError, "an SVG image is a tool error");
  assert.match(bad.content[0].text, /content block 1/);
});

test("a guest's log lines and progress reach the client", async (t) => {
  const client = await connect(t);
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(`${n.params.level} ${n.params.logger} ${n.params.data}`);
  });
  // Progress is recorded as it arrives on the wire. The SDK's onprogress
  // callback is not the place to count it: the SDK forgets a request's
  // progress handler as soon as the response is read, and runs notification
  // handlers a microtask later, so a notification the server wrote before
  // its response is dropped when both come in one read.
  const progress = [];
  const transport = client.transport;
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method === "notifications/progress") {
      progress.push(`${msg.params.progress}/${msg.params.total} ${msg.params.message ?? ""}`);
    }
    onmessage(msg, extra);
  };
  const call = () => client.callTool({ name: "work", arguments: {} }, undefined, { onprogress: () => {} });

  let res = await call();
  assert.ok(!res.isError, `work failed: ${JSON.stringify(res)}`);
  assert.deepEqual(res.structuredContent, { done: true }, "the result follows the tool's output_schema");
  assert.deepEqual(logs, [], "no log line before the client sets a level");
  assert.deepEqual(progress, ["1/2 half way", "2/2 "]);

  await client.setLoggingLevel("info");
  progress.length = 0;
  res = await call();
  assert.ok(!res.isError, `work failed: ${JSON.stringify(res)}`);
  assert.deepEqual(logs, ["info work info: step one", "warning work warn: almost done"], "log lines at and above info");
  assert.deepEqual(progress, ["1/2 half way", "2/2 "]);
});
