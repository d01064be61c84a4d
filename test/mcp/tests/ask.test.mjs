// A tool asks the person a question (ask_person): the official TypeScript
// SDK client gets it as an elicitation with the tool's own schema, and its
// answer comes back to the tool, checked against that schema.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { makeHome, packsBin, repo } from "../lib.mjs";

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const question = {
  message: "Deploy to which region?",
  schema: { type: "object", properties: { region: { type: "string", enum: ["eu", "us"] } }, required: ["region"] },
};

for (const tt of [
  { name: "granted: the client is asked and the tool gets the answer", grant: "ask_person", answer: { region: "eu" }, want: "accept", asked: 1 },
  { name: "granted: an answer off the schema never reaches the tool", grant: "ask_person", answer: { region: "mars" }, want: "cancel", asked: 1 },
  { name: "not granted: nobody is asked and the tool is told it was denied", grant: "none", answer: { region: "eu" }, want: "denied", asked: 0 },
]) {
  test(tt.name, async (t) => {
    const { home, env } = makeHome(t, `[approval]\nauto_approve = ["ask-pack__ask"]\n`);
    execFileSync(packsBin, ["--home", home, "add", join(repo, "internal", "mcpserver", "testdata", "ask-pack"), "--grant", tt.grant, "--yes"], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    const client = new Client({ name: "ts-sdk-ask", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: "accept", content: tt.answer };
    });
    await client.connect(new StdioClientTransport({ command: packsBin, args: ["mcp", "--tools", "ask-pack"], env, stderr: "ignore" }));
    t.after(() => client.close());
    const res = await client.callTool({ name: "ask", arguments: question });
    assert.ok(!res.isError, `ask failed: ${text(res)}`);
    const got = JSON.parse(text(res)).result;
    assert.equal(got.action, tt.want, `the tool got ${text(res)}`);
    if (tt.want === "accept") assert.deepEqual(got.content, { region: "eu" });
    assert.equal(asked.length, tt.asked, "questions the client was asked");
    if (tt.asked) {
      assert.match(asked[0].message, /ask-pack__ask.*Deploy to which region\?/);
      assert.deepEqual(asked[0].requestedSchema.properties.region.enum, ["eu", "us"]);
    }
  });
}
