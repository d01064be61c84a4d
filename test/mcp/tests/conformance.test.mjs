// The server scenarios of the official conformance suite run against
// `packs mcp --http --tools mcp-conformance`: the conformance pack
// (test/mcp-conformance, a WASM pack built from source here) provides the
// suite's fixture tools, resources and prompts, served in flat mode under
// a test policy that approves its calls. The scenarios that cannot apply
// are listed in conformance-baseline.yaml with their reasons; any other
// failure fails the test, and so does a listed scenario that passes.
// The suite's client cannot send the bearer token, so it talks to packs
// through a loopback proxy that adds it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buildConformance, conformanceDir, conformancePack, makeHome, nodeModules, repo, startAuthProxy, startHTTP } from "../lib.mjs";

const run = promisify(execFile);
const conformance = join(nodeModules, "@modelcontextprotocol", "conformance", "dist", "index.js");
const baseline = join(repo, "test", "mcp", "conformance-baseline.yaml");

// The test policy: every call of the conformance session runs without a
// person (the suite's client answers elicitation with its own fixture
// data, which is no approval), and the pack holds ask_person, so its
// elicitation tools' questions reach the suite's client.
const policy = `[approval]
auto_approve = ["open_docs", "read_file", "enable_tools", "${conformancePack}__*"]

[[preapprove]]
pack = "${conformancePack}"
grants = ["ask_person"]
`;

test("conformance server scenarios", async (t) => {
  buildConformance();
  const { env } = makeHome(t, policy, [conformanceDir]);
  // The suite's client sends no headers: a proxy adds the bearer token.
  const url = await startAuthProxy(t, await startHTTP(t, env, ["--tools", conformancePack, "--approval-timeout", "1s"]));
  const out = mkdtempSync(join(tmpdir(), "packs-conformance-"));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  let stdout = "";
  let code = 0;
  try {
    ({ stdout } = await run(process.execPath, [conformance, "server", "--url", url, "--expected-failures", baseline, "-o", out], {
      timeout: 600000,
      maxBuffer: 64 << 20,
    }));
  } catch (err) {
    stdout = `${err.stdout}\n${err.stderr}`;
    code = err.code ?? 1;
  }
  const m = /Total: (\d+) passed, (\d+) failed/.exec(stdout);
  assert.ok(m, `no summary in the conformance output:\n${stdout}`);
  t.diagnostic(`conformance checks: ${m[1]} pass; ${m[2]} fail, all of them in the baseline`);
  assert.equal(code, 0, `failures beyond conformance-baseline.yaml, or stale entries in it:\n${stdout}`);
  assert.ok(Number(m[1]) >= 10, `only ${m[1]} checks passed`);
});
