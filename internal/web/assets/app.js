// packs web app: plain JavaScript, no build step. Everything that comes from
// a pack, a tool or the model is put on the page as text (textContent),
// never as HTML.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

async function api(method, path, body) {
  const opt = { method, headers: {} };
  if (body instanceof FormData) opt.body = body;
  else if (body !== undefined) {
    opt.headers["Content-Type"] = "application/json";
    opt.body = JSON.stringify(body);
  }
  const res = await fetch(path, opt);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error((data.error && data.error.message) || res.statusText);
    err.body = data.error;
    throw err;
  }
  return data;
}

function pretty(v) {
  if (typeof v === "string") {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

const state = { status: null, chat: null, source: null, cards: new Map(), bubble: null, packs: [], running: false };

// setRunning is the one place that says whether a turn runs: Send is
// disabled and Stop shown exactly while one does. A turn starts when the
// person sends (before the request returns: its end may arrive first) and
// ends at turn_done, turn_error, a refused send, or a Stop that finds
// nothing running.
function setRunning(on) {
  state.running = on;
  $("#send").disabled = on || !(state.status && state.status.model.configured);
  $("#stop").hidden = !on;
}

// ---- navigation ----

function route() {
  const view = (location.hash.replace(/^#\//, "") || "chat").split("/")[0];
  for (const v of ["chat", "packs", "audit"]) {
    $("#view-" + v).hidden = v !== view;
    $("#nav-" + v).classList.toggle("active", v === view);
  }
  if (view === "packs") loadPacks();
  if (view === "audit") loadAudit();
  if (view === "chat") refreshPackChoices();
}

// ---- status ----

// loadStatus shows the model, and returns false when the page has no token:
// it was opened at an address other than the one packs serve printed.
async function loadStatus() {
  state.status = await api("GET", "/v1/status");
  if (!state.status.authenticated) {
    const banner = $("#banner");
    banner.hidden = false;
    banner.replaceChildren(
      el("strong", {}, "This page needs the server's token. "),
      "Open the address packs serve printed when it started (it ends in ?token=...), ",
      "or set PACKS_TOKEN before starting packs serve to choose the token yourself.");
    $("#send").disabled = true;
    return false;
  }
  const m = state.status.model;
  $("#model").textContent = m.configured ? "model: " + m.describe : "no model configured";
  const banner = $("#banner");
  if (!m.configured) {
    // The exact commands for this server's home and executable: a bare
    // "packs serve" may not be on PATH, and would open another home.
    const cmds = m.commands || [];
    banner.hidden = false;
    banner.replaceChildren(
      el("strong", {}, "No model is configured. "),
      cmds.length ? "Stop this server (Ctrl-C) and start it with a model, from the same folder. For a local Ollama:" : m.how_to_configure || "",
      cmds.length ? el("pre", { class: "cmd" }, cmds[0]) : null,
      cmds.length > 1 ? "For Anthropic:" : null,
      cmds.length > 1 ? el("pre", { class: "cmd" }, cmds[1]) : null,
      cmds.length ? el("details", {}, el("summary", {}, "Other ways"), m.how_to_configure || "") : null,
      "Meanwhile you can run pack tools by hand from the ",
      el("a", { href: "#/packs" }, "Packs page"), ".");
    $("#send").disabled = true;
  }
  return true;
}

// ---- chat ----

function logAppend(node) {
  $("#log").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

function notice(text, cls = "notice") { logAppend(el("div", { class: cls }, text)); }

async function refreshChats(selectID) {
  const list = await api("GET", "/v1/chats");
  const sel = $("#chat-select");
  sel.replaceChildren(...list.items.map(c => el("option", { value: c.id }, c.title)));
  if (selectID) sel.value = selectID;
}

async function newChat() {
  const c = await api("POST", "/v1/chats", {});
  await refreshChats(c.id);
  openChat(c);
}

function openChat(c) {
  state.chat = c.id;
  state.cards.clear();
  state.bubble = null;
  $("#log").replaceChildren();
  if (state.source) state.source.close();
  renderHistory(c);
  renderChatSide(c);
  renderArtifacts(c.artifacts || []);
  setRunning(!!c.running);
  const src = new EventSource("/v1/chats/" + encodeURIComponent(c.id) + "/events?after=" + (c.last_event || 0));
  state.source = src;
  const on = (kind, fn) => src.addEventListener(kind, ev => fn(JSON.parse(ev.data)));
  on("text", d => {
    if (!state.bubble) state.bubble = logAppend(el("div", { class: "msg assistant" }));
    state.bubble.textContent += d.delta;
  });
  on("tool_start", d => { state.bubble = null; toolCard(d.call_id, d.name, d.arguments); });
  on("pending", d => pendingCard(d));
  on("decided", d => decidedCard(d));
  on("tool_done", d => doneCard(d));
  on("notice", d => notice(d.message));
  on("files", () => loadFiles());
  on("turn_done", () => turnEnded());
  on("turn_error", d => { notice("The turn failed: " + d.error, "error"); turnEnded(); });
}

function renderHistory(c) {
  const results = new Map();
  for (const m of c.messages || []) if (m.role === "tool") results.set(m.tool_call_id, m);
  for (const m of c.messages || []) {
    if (m.role === "user") logAppend(el("div", { class: "msg user" }, m.content));
    if (m.role === "assistant") {
      if (m.content) logAppend(el("div", { class: "msg assistant" }, m.content));
      for (const tc of m.tool_calls || []) {
        const card = toolCard(tc.id, tc.name, tc.arguments);
        const r = results.get(tc.id);
        if (r) showResult(card, r.content, r.is_error, []);
      }
    }
  }
}

function renderChatSide(c) {
  const ul = $("#attached");
  ul.replaceChildren(...c.packs.map(p => el("li", {},
    el("span", { title: p.description }, p.name + (p.enabled ? " (tools on)" : "")),
    p.mandated ? el("span", { class: "muted" }, "mandated") :
      el("button", { class: "detach", onclick: () => detach(p.name) }, "Detach"))));
  if (!c.packs.length) ul.append(el("li", { class: "muted" }, "none: attach a pack below"));
}

async function refreshChat() {
  if (!state.chat) return;
  const c = await api("GET", "/v1/chats/" + encodeURIComponent(state.chat));
  renderChatSide(c);
  renderArtifacts(c.artifacts || []);
}

async function refreshPackChoices() {
  const list = await api("GET", "/v1/packs");
  state.packs = list.items;
  $("#attach-select").replaceChildren(...list.items.filter(p => p.status === "ok").map(p => el("option", { value: p.name }, p.name)));
}

async function attach() {
  const name = $("#attach-select").value;
  if (!name) return;
  if (!state.chat) await newChat();
  try {
    const c = await api("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/packs", { pack: name });
    renderChatSide(c);
  } catch (e) { notice(e.message, "error"); }
}

async function detach(name) {
  try {
    const c = await api("DELETE", "/v1/chats/" + encodeURIComponent(state.chat) + "/packs/" + encodeURIComponent(name));
    renderChatSide(c);
  } catch (e) { notice(e.message, "error"); }
}

async function send(ev) {
  ev.preventDefault();
  const text = $("#composer").value.trim();
  if (!text) return;
  if (!state.chat) await newChat();
  state.bubble = null;
  const mine = logAppend(el("div", { class: "msg user" }, text));
  $("#composer").value = "";
  setRunning(true);
  try {
    await api("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/messages", { text });
  } catch (e) {
    mine.remove();
    $("#composer").value = text;
    notice(e.message, "error");
    setRunning(false);
  }
}

function turnEnded() {
  state.bubble = null;
  setRunning(false);
  refreshChat();
}

async function stop() {
  try {
    const r = await api("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/stop", {});
    if (!r.stopped) turnEnded(); // it had ended already
  } catch (e) { notice(e.message, "error"); }
}

// ---- tool cards ----

function toolCard(callID, name, args) {
  const card = el("div", { class: "tool-card", "data-call": callID || "" },
    el("div", { class: "title" }, "Tool call: ", el("code", {}, name)),
    el("pre", { class: "args" }, pretty(args)),
    el("div", { class: "caps" }),
    el("div", { class: "actions" }),
    el("div", { class: "status muted" }));
  if (callID) state.cards.set(callID, card);
  return logAppend(card);
}

function cardFor(d) {
  return (d.call_id && state.cards.get(d.call_id)) || $(`.tool-card[data-invocation="${CSS.escape(d.invocation)}"]`) ||
    toolCard(d.call_id, d.name || d.class, d.arguments);
}

function pendingCard(d) {
  const card = cardFor(d);
  card.dataset.invocation = d.invocation;
  const caps = $(".caps", card);
  caps.replaceChildren(
    el("span", { class: "muted" }, d.capabilities.length ? "Capabilities at stake: " : "Uses no capability beyond the defaults. "),
    ...d.capabilities.map(c => el("span", { class: "cap" }, c)));
  if (d.touches.length) caps.append(el("div", { class: "muted" }, "Touches: " + d.touches.join(", ")));
  const decide = async (verb, always) => {
    for (const b of card.querySelectorAll(".actions button")) b.disabled = true;
    try {
      await api("POST", "/v1/invocations/" + encodeURIComponent(d.invocation) + "/" + verb, verb === "approve" ? { always } : undefined);
    } catch (e) { $(".status", card).textContent = e.message; }
  };
  $(".actions", card).replaceChildren(
    el("button", { class: "run", onclick: () => decide("approve", false) }, "Run"),
    el("button", { class: "deny", onclick: () => decide("deny") }, "Deny"),
    el("button", { class: "always", onclick: () => decide("approve", true) }, "Always for this chat"));
  $(".status", card).textContent = "Waiting for your approval.";
}

function decidedCard(d) {
  const card = $(`.tool-card[data-invocation="${CSS.escape(d.invocation)}"]`);
  if (!card) return;
  $(".actions", card).replaceChildren();
  $(".status", card).textContent = d.verdict === "deny" ? "Denied" + (d.reason ? ": " + d.reason : ".") :
    d.verdict === "allow_chat" ? "Allowed for this chat." : "Approved.";
}

function doneCard(d) {
  const card = cardFor(d);
  card.dataset.invocation = d.invocation;
  $(".actions", card).replaceChildren();
  showResult(card, d.content, d.is_error, d.artifacts, d);
  if (d.artifacts && d.artifacts.length) refreshChat();
}

// errorMessage is the message of a tool result {"error": {"message"}}.
function errorMessage(content) {
  try { return JSON.parse(content).error.message || ""; } catch { return ""; }
}

// resultLabel says who decided and how the call ended, blaming the right
// party: a call the person approved and a capability refused afterwards is
// "approved by web; then refused: ...", not "denied by web".
function resultLabel(d, isError, content) {
  if (!d) return isError ? "Failed" : "Result";
  if (!d.approved) return "Denied" + (d.reason ? ": " + d.reason : "");
  const by = "approved by " + d.approver + (d.remembered ? ", allowed for this chat earlier" : d.verdict === "allow_chat" ? ", allowed for this chat" : "");
  if (d.error_kind === "denied") return "Refused after it was " + by + ": " + errorMessage(content);
  return (isError ? "Failed" : "Result") + " (" + by + ")" + (d.duration_ms !== undefined ? " in " + d.duration_ms + " ms" : "");
}

function showResult(card, content, isError, artifacts, d) {
  const denied = d ? !d.approved || d.error_kind === "denied" : false;
  card.classList.add(denied ? "denied" : isError ? "failed" : "done");
  const label = resultLabel(d, isError, content);
  const body = el("details", { class: "result", open: true }, el("summary", {}, label), el("pre", {}, pretty(content)));
  if (d) $(".status", card).textContent = denied ? "Denied." : isError ? "The tool failed." : "Done.";
  card.append(body);
  if (artifacts && artifacts.length) card.append(artifactList(artifacts));
}

function fileURL(chat, path, download) {
  return "/v1/chats/" + encodeURIComponent(chat) + "/files/" + path.split("/").map(encodeURIComponent).join("/") + (download ? "?download=1" : "");
}

function artifactList(arts, chat = state.chat) {
  return el("ul", { class: "plain artifacts" }, ...arts.map(a => el("li", { class: "artifact" },
    el("span", {}, a.path + " (" + a.mime + ", " + a.size_bytes + " bytes)"),
    el("span", {},
      el("a", { class: "open", href: fileURL(chat, a.path), target: "_blank", rel: "noopener" }, "Open"), " ",
      el("a", { class: "download", href: fileURL(chat, a.path, true) }, "Download")))));
}

// renderArtifacts refreshes the chat's file list: artifacts are files in
// its workspace too.
function renderArtifacts() { loadFiles(); }

function humanSize(n) {
  return n < 1024 ? n + " B" : n < 1 << 20 ? (n / 1024).toFixed(1) + " KB" : (n / (1 << 20)).toFixed(1) + " MB";
}

async function loadFiles() {
  const ul = $("#files");
  if (!state.chat) { ul.replaceChildren(el("li", { class: "muted" }, "Start a chat to give it files.")); return; }
  let list;
  try { list = await api("GET", "/v1/chats/" + encodeURIComponent(state.chat) + "/files"); } catch (e) {
    ul.replaceChildren(el("li", { class: "error" }, e.message)); return;
  }
  if (!list.items.length) {
    ul.replaceChildren(el("li", { class: "muted" }, "No files yet. Upload logs or data for the chat's tools: they see them at /workspace."));
    return;
  }
  ul.replaceChildren(...list.items.map(f => el("li", { class: "file" },
    el("a", { class: "open", href: fileURL(state.chat, f.path), target: "_blank", rel: "noopener", title: f.mime }, f.path),
    el("span", {}, el("span", { class: "muted small" }, humanSize(f.size_bytes)), " ",
      el("a", { class: "download", href: fileURL(state.chat, f.path, true), title: "Download " + f.path, "aria-label": "Download " + f.path }, "⤓")))));
  if (list.truncated) ul.append(el("li", { class: "muted" }, "… more files than are listed"));
}

async function uploadFiles(files) {
  const out = $("#upload-result");
  if (!files || !files.length) return;
  if (!state.chat) await newChat();
  const fd = new FormData();
  for (const f of files) fd.append("file", f, f.name);
  out.textContent = "Uploading " + files.length + " file(s)…";
  try {
    const r = await api("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/files", fd);
    out.textContent = "Uploaded " + r.items.map(f => f.path).join(", ") + ".";
  } catch (e) { out.textContent = e.message; out.className = "error small"; return; }
  out.className = "muted small";
  $("#upload-input").value = "";
  loadFiles();
}

// ---- packs ----

async function loadPacks() {
  const list = await api("GET", "/v1/packs");
  const root = $("#packs");
  root.replaceChildren();
  if (!list.items.length) root.append(el("p", { class: "muted" }, "No packs installed. Install one above, or run make run."));
  for (const p of list.items) {
    let info = p;
    try { info = await api("GET", "/v1/packs/" + encodeURIComponent(p.name)); } catch { /* the listing is enough */ }
    root.append(packCard(info));
  }
}

function packCard(p) {
  const caps = el("table", { class: "caps-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "capability"), el("th", {}, "requested"), el("th", {}, "granted"), el("th", {}, "a call holds"), el("th", {}, ""))),
    el("tbody", {}, ...p.capabilities.map(c => el("tr", {},
      el("td", {}, c.capability),
      el("td", {}, c.requested.join(", ") || "(unknown: the pack does not load)"),
      el("td", { class: c.granted ? "ok" : "bad" }, c.granted ? (c.granted_resources.join(", ") || "yes") + (c.scope ? " (" + c.scope + ")" : "") : "no"),
      el("td", {}, c.held === undefined ? "" : c.held ? (c.effective || []).join(", ") || "yes" : c.reason || "nothing"),
      el("td", {}, c.granted ?
        el("button", { onclick: () => changeGrant(p.name, c.capability, false) }, "Revoke") :
        el("button", { onclick: () => changeGrant(p.name, c.capability, true) }, "Grant"))))));
  return el("div", { class: "pack", "data-pack": p.name },
    el("h3", {}, p.name + " ", el("span", { class: "muted" }, p.version || "")),
    el("p", {}, p.description || ""),
    p.status !== "ok" ? el("p", { class: "error" }, "Status: " + p.status + (p.error ? ": " + p.error : "") + ". Reinstall it.") : null,
    p.blocked ? el("p", { class: "error" }, p.blocked) : null,
    p.capabilities.length ? caps : el("p", { class: "muted" }, "Asks for no capability beyond the defaults (its own folder, read-only; the chat's workspace)."),
    el("h4", {}, "Tools"),
    ...p.tools.map(t => toolForm(p.name, t)));
}

async function changeGrant(pack, cap, on) {
  try {
    if (on) await api("POST", "/v1/packs/" + encodeURIComponent(pack) + "/grants", { capability: cap });
    else await api("DELETE", "/v1/packs/" + encodeURIComponent(pack) + "/grants/" + encodeURIComponent(cap));
  } catch (e) { alert(e.message); }
  loadPacks();
}

function toolForm(pack, t) {
  const args = el("textarea", { class: "tool-args", rows: 3, cols: 60, "aria-label": "Arguments (JSON)" }, "{}");
  const out = el("div", { class: "tool-out" });
  const run = async () => {
    // The arguments are checked here first: a typo starts no chat and
    // writes no audit row.
    let parsed;
    try { parsed = JSON.parse(args.value.trim() || "{}"); } catch (e) {
      out.replaceChildren(el("span", { class: "error" }, "The arguments are not JSON: " + e.message));
      return;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      out.replaceChildren(el("span", { class: "error" }, "The arguments must be a JSON object: {...}"));
      return;
    }
    out.replaceChildren(el("span", { class: "muted" }, "Running…"));
    try {
      const r = await api("POST", "/v1/packs/" + encodeURIComponent(pack) + "/calls", { tool: t.name, arguments: parsed });
      out.replaceChildren(el("div", { class: "muted" }, "Ran in the chat ", el("a", { href: "#/chat/" + r.chat }, "by hand: " + pack), "."),
        el("pre", { class: r.is_error ? "error" : "" }, pretty(r.content)), r.artifacts.length ? artifactList(r.artifacts, r.chat) : "");
    } catch (e) { out.replaceChildren(el("span", { class: "error" }, e.message)); }
  };
  return el("details", { class: "tool" },
    el("summary", {}, el("code", {}, t.name), " — ", t.description),
    el("div", { class: "muted" }, "Input schema:"), el("pre", {}, pretty(t.input_schema)),
    el("div", { class: "row" }, args, el("button", { class: "run-by-hand", onclick: run }, "Run by hand")),
    out);
}

async function install(ev) {
  ev.preventDefault();
  const out = $("#install-result");
  const all = $("#install-grant-all").checked;
  try {
    let p;
    const file = $("#install-file").files[0];
    if (file) {
      const fd = new FormData();
      fd.append("archive", file, file.name);
      if (all) fd.append("grant", "all");
      p = await api("POST", "/v1/packs", fd);
    } else {
      p = await api("POST", "/v1/packs", { path: $("#install-path").value.trim(), grant: all ? ["all"] : [] });
    }
    out.replaceChildren(el("p", { class: "ok" }, "Installed " + p.name + " " + (p.version || "") + "."));
    loadPacks();
    refreshPackChoices();
  } catch (e) {
    out.replaceChildren(el("p", { class: "error" }, e.message),
      ...((e.body && e.body.findings) || []).map(f => el("div", { class: "error" }, `${f.file}:${f.line}: ${f.severity}: ${f.rule}: ${f.message}`)));
  }
}

// ---- audit ----

async function loadAudit(ev) {
  if (ev) ev.preventDefault();
  const q = new URLSearchParams();
  for (const [k, id] of [["pack", "#audit-pack"], ["kind", "#audit-kind"], ["since", "#audit-since"], ["limit", "#audit-limit"]]) {
    const v = $(id).value.trim();
    if (v) q.set(k, v);
  }
  const tbody = $("#audit-table tbody");
  try {
    const list = await api("GET", "/v1/audit?" + q);
    tbody.replaceChildren(...list.items.slice().reverse().map(e => el("tr", { "data-kind": e.kind },
      el("td", {}, e.seq), el("td", {}, e.at), el("td", {}, e.kind), el("td", {}, e.pack), el("td", {}, e.tool),
      el("td", {}, e.invocation), el("td", {}, el("details", {}, el("summary", {}, summary(e)), el("pre", {}, pretty(e.body)))))));
  } catch (e) {
    tbody.replaceChildren(el("tr", {}, el("td", { colspan: 7, class: "error" }, e.message)));
  }
}

function summary(e) {
  const b = e.body || {};
  if (e.kind === "invocation") return e.summary || b.status || "";
  return [b.capability, b.resource, b.allowed === false ? "denied" : b.allowed ? "allowed" : ""].filter(Boolean).join(" ");
}

async function verify() {
  const out = $("#verify-result");
  try {
    const r = await api("GET", "/v1/audit/verify");
    out.replaceChildren(el("p", { class: r.ok ? "ok" : "error" },
      r.ok ? `The chain holds: ${r.rows} rows, head ${r.head_seq}.` : `The chain is broken in ${r.breaks.length} place(s):`),
      ...r.breaks.map(b => el("div", { class: "error" }, `seq ${b.seq}: ${b.kind}: ${b.detail}`)));
  } catch (e) { out.replaceChildren(el("p", { class: "error" }, e.message)); }
}

// ---- start ----

async function start() {
  $("#new-chat").addEventListener("click", newChat);
  $("#chat-select").addEventListener("change", async ev => openChat(await api("GET", "/v1/chats/" + encodeURIComponent(ev.target.value))));
  $("#attach-btn").addEventListener("click", attach);
  $("#composer-form").addEventListener("submit", send);
  $("#stop").addEventListener("click", stop);
  $("#install-form").addEventListener("submit", install);
  $("#upload-input").addEventListener("change", ev => uploadFiles(ev.target.files));
  const drop = $("#drop");
  drop.addEventListener("dragover", ev => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", ev => { ev.preventDefault(); drop.classList.remove("over"); uploadFiles(ev.dataTransfer.files); });
  $("#audit-form").addEventListener("submit", loadAudit);
  $("#verify").addEventListener("click", verify);
  window.addEventListener("hashchange", route);
  if (!(await loadStatus())) return;
  await refreshChats();
  const first = $("#chat-select").value;
  if (first) openChat(await api("GET", "/v1/chats/" + encodeURIComponent(first)));
  route();
}

start().catch(e => notice("packs: the app failed to start: " + e.message, "error"));
