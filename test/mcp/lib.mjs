// Shared setup for the client tests: builds bin/packs, makes a temporary
// PACKS_HOME holding the json-tools example pack, and starts `packs mcp`.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const packsBin = join(repo, "bin", "packs");
export const nodeModules = join(repo, "test", "mcp", "node_modules");

// The pack every test uses: a real example pack whose tools are an Extism
// plugin built from Go.
export const pack = "json-tools";

// The conformance pack (test/mcp-conformance): the fixtures of the MCP
// conformance suite as a WASM pack built from source here.
export const conformancePack = "mcp-conformance";
export const conformanceDir = join(repo, "test", conformancePack);

let built = false;
let builtConformance = false;

// buildConformance compiles the conformance pack's module (go build is a
// no-op when nothing changed).
export function buildConformance() {
  if (builtConformance) return;
  execFileSync("go", ["build", "-trimpath", "-ldflags=-s -w", "-buildmode=c-shared", "-o", `bin/${conformancePack}.wasm`, "."], {
    cwd: conformanceDir,
    env: { ...process.env, GOOS: "wasip1", GOARCH: "wasm" },
    stdio: "inherit",
  });
  builtConformance = true;
}

// build compiles bin/packs and the example pack's module (both are no-ops
// when up to date).
export function build() {
  if (built) return;
  execFileSync("go", ["build", "-o", packsBin, "./cmd/packs"], { cwd: repo, stdio: "inherit" });
  execFileSync("make", ["-s", "-C", "wasm-examples", `${pack}/bin/${pack}.wasm`], { cwd: repo, stdio: "inherit" });
  built = true;
}

// makeHome returns a fresh PACKS_HOME with the example pack installed (no
// capabilities granted: json-tools asks for none), and a policy file.
// extraPacks are more pack folders to install the same way.
export function makeHome(t, policy, extraPacks = []) {
  build();
  const home = mkdtempSync(join(tmpdir(), "packs-mcp-"));
  // Removed when the test file's process exits, after every t.after hook
  // (clients closed, servers killed) has run: a packs process that is still
  // shutting down may write to its home, and a cleanup that failed here
  // would skip the hooks that stop it and leave the test file hanging.
  process.on("exit", () => {
    try {
      rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) {
      process.stderr.write(`warning: could not remove ${home}: ${e.message}\n`);
    }
  });
  for (const dir of [join(repo, "wasm-examples", pack), ...extraPacks]) {
    execFileSync(packsBin, ["--home", home, "add", dir, "--grant", "none", "--yes"], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  const env = { ...process.env, PACKS_HOME: home };
  delete env.PACKS_POLICY;
  if (policy) {
    const file = join(home, "policy.toml");
    writeFileSync(file, policy);
    env.PACKS_POLICY = file;
  }
  return { home, env };
}

// inspectorEnv is the Inspector CLI's -e flags that pass env's PACKS_HOME,
// PACKS_POLICY and PACKS_CACHE (the compiled modules the tests share) to the
// packs process it starts: the Inspector gives its child only what -e names.
export function inspectorEnv(env) {
  const e = ["-e", `PACKS_HOME=${env.PACKS_HOME}`];
  for (const name of ["PACKS_POLICY", "PACKS_CACHE"]) {
    if (env[name]) e.push("-e", `${name}=${env[name]}`);
  }
  return e;
}

// startHTTP runs `packs mcp --http 127.0.0.1:0` and resolves with its URL
// and the bearer token it made, read from the lines it prints on stderr.
// Every request needs the token, on loopback too.
export function startHTTP(t, env, extraArgs = []) {
  const e = { ...env };
  delete e.PACKS_TOKEN;
  delete e.PACKS_MCP_TOKEN;
  const child = spawn(packsBin, ["mcp", "--http", "127.0.0.1:0", ...extraArgs], { env: e, stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => child.kill("SIGTERM"));
  return new Promise((resolveURL, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`packs mcp --http did not start: ${err}`)), 20000);
    child.stderr.on("data", (d) => {
      err += d;
      const url = /over MCP at (http:\/\/\S+\/mcp)/.exec(err);
      const token = /header "Authorization: Bearer (\S+)"/.exec(err);
      if (url && token) {
        clearTimeout(timer);
        resolveURL({ url: url[1], token: token[1], headers: { Authorization: `Bearer ${token[1]}` } });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`packs mcp --http exited with ${code}: ${err}`));
    });
  });
}

// withTimeout rejects when p takes longer than ms.
export function withTimeout(p, ms, what) {
  return Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))]);
}

// startAuthProxy serves, on loopback, a proxy that adds the bearer token to
// every request it forwards to server (startHTTP's result), for clients
// that cannot send headers (the conformance suite). A Host or Origin that
// names the proxy is rewritten to name the server; any other is passed on
// as is, for the server to judge (DNS rebinding). It resolves with the
// proxy's MCP URL.
export function startAuthProxy(t, server) {
  const target = new URL(server.url);
  const proxy = createServer((req, res) => {
    const self = `127.0.0.1:${proxy.address().port}`;
    const headers = { ...req.headers, authorization: server.headers.Authorization };
    if (headers.host === self) headers.host = target.host;
    if (headers.origin === `http://${self}`) headers.origin = target.origin;
    const out = request({ hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    out.on("error", (e) => { res.destroy(e); });
    req.pipe(out);
  });
  t.after(() => proxy.close());
  return new Promise((resolveURL) => {
    proxy.listen(0, "127.0.0.1", () => resolveURL(`http://127.0.0.1:${proxy.address().port}${target.pathname}`));
  });
}
