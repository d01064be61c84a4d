// A client that asks server/discover first and falls back to initialize
// when discovery does not answer in time (as @ai-sdk/mcp does, with a 1 s
// timeout) connects to `packs mcp` on a fresh home, where the built-in
// packs are still being installed: discovery is answered at once, and
// initialize after it works whether the discovery was answered or not.
// No answer is an error with code 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeHome, packsBin } from "../lib.mjs";

const discoverID = "discover-1";

// DiscoveringTransport is the SDK's stdio transport with a discovery in
// front: start sends server/discover and waits up to timeoutMs for its
// answer, then hands the connection to the client, which initializes. The
// discovery's answer, in time or late, never reaches the client.
class DiscoveringTransport {
  constructor(inner, timeoutMs) {
    this.inner = inner;
    this.timeoutMs = timeoutMs;
    this.discovered = null; // the discovery's answer, once it arrives
    this.codeZero = []; // every error answered with code 0
  }

  async start() {
    let answered;
    const answer = new Promise((resolve) => (answered = resolve));
    this.inner.onmessage = (msg) => {
      if (msg.error && msg.error.code === 0) this.codeZero.push(msg);
      if (msg.id === discoverID) {
        this.discovered = msg;
        answered(msg);
        return;
      }
      this.onmessage?.(msg);
    };
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
    await this.inner.send({
      jsonrpc: "2.0", id: discoverID, method: "server/discover",
      params: { _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "discovering-client", version: "1.0.0" },
      } },
    });
    await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, this.timeoutMs))]);
  }

  send(msg, opts) { return this.inner.send(msg, opts); }
  close() { return this.inner.close(); }
  setProtocolVersion(v) { this.inner.setProtocolVersion?.(v); }
}

for (const [name, timeoutMs, mustAnswer] of [
  ["within a 1 s discovery timeout", 1000, true],
  ["after a discovery it did not wait for", 0, false],
]) {
  test(`a client that falls back from server/discover to initialize connects (${name})`, async (t) => {
    const { env } = makeHome(t); // fresh: no built-in pack installed yet
    const transport = new DiscoveringTransport(new StdioClientTransport({ command: packsBin, args: ["mcp"], env, stderr: "ignore" }), timeoutMs);
    const client = new Client({ name: "discovering-client", version: "1.0.0" });
    await client.connect(transport);
    t.after(() => client.close());
    if (mustAnswer) {
      assert.ok(transport.discovered, `server/discover was not answered within ${timeoutMs} ms`);
      assert.ok(transport.discovered.result?.supportedVersions?.length, `discovery: ${JSON.stringify(transport.discovered)}`);
    }
    const tools = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(tools.includes("enable_tools"), `tools after the fallback: ${tools}`);
    assert.deepEqual(transport.codeZero, [], "an error answered with code 0");
  });
}
