// The server scenarios of the official conformance suite run against
// `packs mcp --http`. Scenarios that need the suite's own fixture tools are
// listed in conformance-baseline.yaml; any other failure fails the test.
// The suite's client cannot send the bearer token, so it talks to packs
// through a loopback proxy that adds it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { makeHome, nodeModules, repo, startAuthProxy, startHTTP } from "../lib.mjs";

const run = promisify(execFile);
const conformance = join(nodeModules, "@modelcontextprotocol", "conformance", "dist", "index.js");
const baseline = join(repo, "test", "mcp", "conformance-baseline.yaml");

test("conformance server scenarios", async (t) => {
  const { env } = makeHome(t);
  // The suite's client sends no headers: a proxy adds the bearer token.
  const url = await startAuthProxy(t, await startHTTP(t, env, ["--approval-timeout", "1s"]));
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
