// packs web app: plain JavaScript, no build step. Everything that comes from
// a pack, a tool or the model is put on the page as text (textContent),
// never as HTML, with one exception: Markdown the server rendered with raw
// HTML escaped and unsafe links dropped (internal/web/markdown.go): a
// finished reply, and a pack's docs on its page (packs.js).
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
    if (c === null || c === undefined || c === false) continue;
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

function parseJSON(s) {
  if (typeof s !== "string") return { ok: true, value: s };
  try { return { ok: true, value: JSON.parse(s) }; } catch { return { ok: false, value: s }; }
}

function humanSize(n) {
  return n < 1024 ? n + " B" : n < 1 << 20 ? (n / 1024).toFixed(1) + " KB" : (n / (1 << 20)).toFixed(1) + " MB";
}

// ago says when, in words: "just now", "5 min ago", "yesterday 14:03".
function ago(iso) {
  if (!iso) return "";
  const t = new Date(iso), s = (Date.now() - t.getTime()) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return t.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " " + t.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
}

const state = { status: null, chat: null, source: null, cards: new Map(), bubble: null, packs: [], running: false, agents: [], capabilities: [] };

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
  setDrawer(false);
  for (const v of ["chat", "agents", "packs", "audit", "settings"]) {
    $("#view-" + v).hidden = v !== view;
    $("#nav-" + v).classList.toggle("active", v === view);
  }
  if (view === "packs") showPacks(); // packs.js
  if (view === "agents") loadAgents();
  if (view === "audit") loadAudit();
  if (view === "settings") loadSettings();
  if (view === "chat") {
    refreshPackChoices();
    const id = location.hash.split("/")[2];
    if (id && id !== state.chat) selectChat(id);
  }
}

// ---- status ----

// loadStatus shows the model, and returns false when the page has no token:
// it was opened at an address other than the one packs serve printed.
async function loadStatus() {
  state.status = await api("GET", "/v1/status");
  const banner = $("#banner");
  if (!state.status.authenticated && state.status.sign_in) {
    banner.hidden = false;
    banner.replaceChildren(
      el("strong", {}, "Sign in to use packs. "),
      el("a", { href: state.status.sign_in, id: "sign-in" }, "Sign in"),
      " with your organization's account, or open the address packs serve printed.");
    $("#send").disabled = true;
    return false;
  }
  if (!state.status.authenticated) {
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
  // Signed in with OIDC: who, and in which roles (the token holder is not named).
  const who = state.status.person;
  $("#person").textContent = who && who.subject ? "signed in as " + who.name + " (" + who.roles.join(", ") + ")" : "";
  // Show only the pages the person's roles open (the server refuses the rest).
  const roles = (who && who.roles) || [];
  const can = (...want) => want.some(r => roles.includes(r));
  $("#nav-audit").hidden = !can("admin", "auditor");
  for (const v of ["chat", "agents", "packs", "settings"]) $("#nav-" + v).hidden = !can("admin", "member");
  // Listening beyond loopback: whoever reaches the port with the token acts as you.
  const l = state.status.listen;
  $("#exposed").hidden = !l.beyond_loopback;
  $("#exposed").textContent = l.beyond_loopback ? "open to the network at " + l.address : "";
  $("#exposed").title = l.beyond_loopback ? "packs serve listens beyond this machine: anyone who reaches " + l.address + " and holds the token acts as you. Restart it with --addr 127.0.0.1:PORT to keep it on this machine." : "";
  // New agents start with the configured limit written out, not 0; an
  // empty field follows the limit configured when the chat runs.
  const mt = $("#agent-max-tokens");
  mt.defaultValue = m.max_tokens || "";
  mt.placeholder = "the configured limit" + (m.max_tokens ? " (" + m.max_tokens + ")" : "");
  banner.hidden = m.configured;
  if (!m.configured) {
    // Set it up here; or, for those who prefer it, the exact commands for
    // this server's home and executable (a bare "packs serve" may not be
    // on PATH, and would open another home).
    const cmds = m.commands || [];
    banner.replaceChildren(
      el("strong", {}, "No model is configured. "),
      el("a", { href: "#/settings", class: "set-up-model" }, "Set one up in Settings"),
      " (a local Ollama, any OpenAI-compatible server, or Anthropic): it applies at once, no restart. ",
      "Meanwhile you can run pack tools by hand from the ", el("a", { href: "#/packs" }, "Packs page"), ".",
      el("details", { class: "serve-flags" }, el("summary", {}, "Or start packs serve with a model"),
        cmds.length ? "Stop this server (Ctrl-C) and start it from the same folder. For a local Ollama:" : null,
        cmds.length ? el("pre", { class: "cmd" }, cmds[0]) : null,
        cmds.length > 1 ? "For Anthropic:" : null,
        cmds.length > 1 ? el("pre", { class: "cmd" }, cmds[1]) : null,
        m.how_to_configure || ""));
  }
  setRunning(false);
  return true;
}

// ---- chats ----

function logAppend(node) {
  $("#log").append(node);
  $("#empty-chat").hidden = true;
  node.scrollIntoView({ block: "end" });
  return node;
}

function notice(text, cls = "notice") { logAppend(el("div", { class: cls }, text)); }

async function refreshChats() {
  const list = await api("GET", "/v1/chats");
  const ul = $("#chat-list");
  if (!list.items.length) {
    ul.replaceChildren(el("li", { class: "muted empty-item" }, "No chats yet. Send a message to start one."));
    return list.items;
  }
  ul.replaceChildren(...list.items.map(c => el("li", {},
    el("a", { class: "chat-item" + (c.id === state.chat ? " active" : ""), href: "#/chat/" + c.id, "data-chat": c.id, title: c.id },
      el("span", { class: "chat-name" }, c.title),
      // An MCP session: the packs it enabled.
      c.via === "mcp" && c.packs.length ? el("span", { class: "chat-packs muted small" }, c.packs.map(p => p.name).join(", ")) : null,
      el("span", { class: "muted small" }, (c.running ? "running · " : "") + ago(c.updated || c.created))))));
  return list.items;
}

async function newChat() {
  const agent = $("#agent-select").value;
  let c;
  try { c = await api("POST", "/v1/chats", agent ? { agent } : {}); } catch (e) { notice(e.message, "error"); throw e; }
  openChat(c);
  await refreshChats();
  history.replaceState(null, "", "#/chat/" + c.id);
}

async function selectChat(id) {
  try { openChat(await api("GET", "/v1/chats/" + encodeURIComponent(id))); } catch (e) { notice(e.message, "error"); return; }
  refreshChats();
}

function openChat(c) {
  state.chat = c.id;
  document.body.dataset.chat = c.id;
  state.cards.clear();
  state.bubble = null;
  $("#log").replaceChildren();
  $("#empty-chat").hidden = false;
  $("#chat-title").textContent = c.title || "New chat";
  showChatAgent(c);
  for (const a of document.querySelectorAll("#chat-list .chat-item")) a.classList.toggle("active", a.dataset.chat === c.id);
  if (state.source) state.source.close();
  renderHistory(c);
  renderChatSide(c);
  loadFiles();
  setRunning(!!c.running);
  const src = new EventSource("/v1/chats/" + encodeURIComponent(c.id) + "/events?after=" + (c.last_event || 0));
  state.source = src;
  const on = (kind, fn) => src.addEventListener(kind, ev => fn(JSON.parse(ev.data)));
  on("text", d => {
    if (!state.bubble) state.bubble = logAppend(el("div", { class: "msg assistant streaming" }));
    state.bubble.textContent += d.delta;
  });
  on("tool_start", d => { state.bubble = null; toolCard(d.call_id, d.name, d.arguments); });
  on("pending", d => pendingCard(d));
  on("decided", d => decidedCard(d));
  on("question", d => questionCard(d));
  on("answered", d => answeredCard(d));
  on("tool_done", d => doneCard(d));
  on("notice", d => notice(d.message));
  on("files", () => loadFiles());
  on("turn_done", d => {
    if (d.text) {
      const b = state.bubble || logAppend(el("div", { class: "msg assistant" }));
      setMarkdown(b, d.html, d.text);
    }
    turnEnded();
  });
  on("turn_error", d => { notice("The turn failed: " + d.error, "error"); turnEnded(); });
  recipeEvents(on); // recipes.js
}

// setMarkdown shows a reply as the HTML the server rendered from its
// Markdown (safe: see the top of this file), else as text.
function setMarkdown(node, html, text) {
  node.classList.remove("streaming");
  if (html) { node.innerHTML = html; node.classList.add("md"); } else node.textContent = text;
}

function renderHistory(c) {
  const results = new Map();
  for (const m of c.messages || []) if (m.role === "tool") results.set(m.tool_call_id, m);
  for (const m of c.messages || []) {
    if (m.role === "user") logAppend(el("div", { class: "msg user" }, m.content));
    if (m.role === "assistant") {
      if (m.content) setMarkdown(logAppend(el("div", { class: "msg assistant" })), m.html, m.content);
      for (const tc of m.tool_calls || []) {
        const card = toolCard(tc.id, tc.name, tc.arguments);
        const r = results.get(tc.id);
        if (r) showResult(card, r.content, r.is_error, []);
        if (r && tc.name === "run_recipe") recipeFromResult(tc.id, r.content); // recipes.js
      }
    }
  }
}

function renderChatSide(c) {
  const ul = $("#attached");
  ul.replaceChildren(...c.packs.map(p => el("li", {},
    el("span", { title: p.description }, p.name, p.enabled ? el("span", { class: "badge" }, "tools on") : null),
    p.mandated ? el("span", { class: "muted" }, "mandated") :
      el("button", { class: "detach small-btn", onclick: () => detach(p.name) }, "Detach"))));
  if (!c.packs.length) ul.append(el("li", { class: "muted" }, "None yet. Attach a pack so the model can use it."));
  $("#context-count").textContent = c.packs.length || "";
}

// On a phone the chat's packs and files are a drawer over the chat, so
// that the conversation and the composer have the screen.
function setDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  $("#context-open").setAttribute("aria-expanded", String(open));
}

// The chat side is drawn from whole answers (every attached pack), so
// the requests that draw it go one at a time: two quick attaches whose
// answers crossed on the network would otherwise draw the older list last.
let sideQueue = Promise.resolve();
function chatSide(method, path, body) {
  const run = sideQueue.then(() => api(method, path, body)).then(c => {
    if (c.id === state.chat) renderChatSide(c);
    return c;
  });
  sideQueue = run.catch(() => {});
  return run;
}

async function refreshChat() {
  if (!state.chat) return;
  const c = await chatSide("GET", "/v1/chats/" + encodeURIComponent(state.chat));
  $("#chat-title").textContent = c.title;
  loadFiles();
  refreshChats();
}

async function refreshPackChoices() {
  const list = await api("GET", "/v1/packs");
  state.packs = list.items;
  // A disabled pack (packs disable) cannot be attached: it is not offered.
  // A pack used in place (found in a skills folder) is, when attachable.
  const ok = list.items.filter(p => (p.status === "ok" && !p.disabled) || (p.status === "in_place" && p.in_place && p.in_place.attachable));
  // The person's choice survives a redraw of the list.
  const sel = $("#attach-select"), chosen = sel.value;
  sel.replaceChildren(...(ok.length ? ok.map(p => el("option", { value: p.name }, p.status === "in_place" ? p.name + " (in place)" : p.name)) : [el("option", { value: "" }, "no packs installed")]));
  if (ok.some(p => p.name === chosen)) sel.value = chosen;
}

async function attach() {
  const name = $("#attach-select").value;
  if (!name) return;
  if (!state.chat) await newChat();
  try {
    await chatSide("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/packs", { pack: name });
  } catch (e) { notice(e.message, "error"); }
}

async function detach(name) {
  try {
    await chatSide("DELETE", "/v1/chats/" + encodeURIComponent(state.chat) + "/packs/" + encodeURIComponent(name));
  } catch (e) { notice(e.message, "error"); }
}

async function send(ev) {
  ev.preventDefault();
  const text = $("#composer").value.trim();
  if (!text || state.running) return;
  if (!state.chat) await newChat();
  state.bubble = null;
  const mine = logAppend(el("div", { class: "msg user" }, text));
  $("#composer").value = "";
  setRunning(true);
  try {
    await api("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/messages", { text });
    refreshChats();
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

// ---- tool results: tables, JSON trees, images ----

// jsonTree shows a JSON value with its structure: objects and arrays fold,
// strings, numbers, booleans and null have their own colours.
function jsonTree(v, depth = 0) {
  if (v === null) return el("span", { class: "j-null" }, "null");
  if (typeof v === "string") return el("span", { class: "j-str" }, JSON.stringify(v));
  if (typeof v === "number") return el("span", { class: "j-num" }, String(v));
  if (typeof v === "boolean") return el("span", { class: "j-bool" }, String(v));
  const isArr = Array.isArray(v);
  const entries = isArr ? v.map((x, i) => [i, x]) : Object.entries(v);
  if (!entries.length) return el("span", { class: "j-punct" }, isArr ? "[]" : "{}");
  const list = el("ul", { class: "j-list" }, ...entries.map(([k, x]) => el("li", {},
    isArr ? null : el("span", { class: "j-key" }, JSON.stringify(k)), isArr ? null : ": ", jsonTree(x, depth + 1))));
  return el("details", { class: "j-node", open: depth < 2 },
    el("summary", { class: "j-punct" }, isArr ? `[ ${entries.length} item${entries.length === 1 ? "" : "s"} ]` : `{ ${entries.length} key${entries.length === 1 ? "" : "s"} }`), list);
}

// isRecords: a non-empty array of plain objects, which reads best as a
// table.
function isRecords(v) {
  return Array.isArray(v) && v.length > 0 && v.every(x => x && typeof x === "object" && !Array.isArray(x));
}

function cell(v) {
  if (v === null || v === undefined) return el("td", { class: "muted" }, "");
  if (typeof v === "object") {
    const s = JSON.stringify(v);
    return el("td", { class: "mono", title: s.length > 120 ? s : null }, s.length > 120 ? s.slice(0, 117) + "…" : s);
  }
  return el("td", { class: typeof v === "number" ? "num" : "" }, String(v));
}

function recordTable(rows) {
  const max = 200, keys = [];
  for (const r of rows.slice(0, max)) for (const k of Object.keys(r)) if (!keys.includes(k) && keys.length < 30) keys.push(k);
  return el("div", { class: "table-wrap" },
    el("table", { class: "records" },
      el("thead", {}, el("tr", {}, ...keys.map(k => el("th", {}, k)))),
      el("tbody", {}, ...rows.slice(0, max).map(r => el("tr", {}, ...keys.map(k => cell(r[k])))))),
    rows.length > max ? el("div", { class: "muted small" }, `first ${max} of ${rows.length} rows; the raw JSON has them all`) : null);
}

// richView shows a tool's result for reading: tables for lists of records,
// a short key/value list for the other fields, a JSON tree for the rest.
function richView(v) {
  if (isRecords(v)) return recordTable(v);
  if (!v || typeof v !== "object" || Array.isArray(v)) return jsonTree(v);
  const scalars = [], blocks = [];
  for (const [k, x] of Object.entries(v)) {
    if (x === null || typeof x !== "object") scalars.push(el("div", { class: "kv" }, el("span", { class: "j-key" }, k), " ", jsonTree(x)));
    else blocks.push(el("div", { class: "block" }, el("div", { class: "block-title" }, k + (Array.isArray(x) ? ` (${x.length})` : "")), isRecords(x) ? recordTable(x) : jsonTree(x, 1)));
  }
  return el("div", { class: "rich" }, scalars.length ? el("div", { class: "kvs" }, ...scalars) : null, ...blocks);
}

// resultView is a result's readable view with its raw JSON one click away.
function resultView(content) {
  const p = parseJSON(content);
  const raw = el("pre", { class: "raw", hidden: true }, pretty(content));
  if (!p.ok) return el("div", {}, el("pre", {}, content));
  let v = p.value;
  if (v && typeof v === "object" && !Array.isArray(v) && "result" in v && Object.keys(v).length <= 2) v = v.result;
  if (v && typeof v === "object" && v.error && v.error.message && Object.keys(v).length === 1) {
    return el("div", {}, el("p", { class: "error" }, v.error.kind ? v.error.kind + ": " : "", v.error.message), raw);
  }
  const rich = el("div", { class: "rich-wrap" }, richView(v));
  const toggle = el("button", { type: "button", class: "raw-toggle small-btn", onclick: () => {
    raw.hidden = !raw.hidden; rich.hidden = !raw.hidden;
    toggle.textContent = raw.hidden ? "Raw JSON" : "Readable view";
  } }, "Raw JSON");
  return el("div", {}, el("div", { class: "view-tools" }, toggle), rich, raw);
}

// blocksView shows a content tool's blocks (docs/abi.md §1.4), which the
// server checked: text as text, images inline, audio with a player, and
// resources as files to download (a text one shown too). Nothing is ever
// rendered as HTML: a file's link is application/octet-stream.
function blocksView(blocks) {
  const fileName = uri => {
    const last = uri.split(/[?#]/)[0].split("/").pop() || "file";
    try { return decodeURIComponent(last); } catch { return last; } // "%E0" is not UTF-8
  };
  const dataURL = (type, b64) => "data:" + type + ";base64," + b64;
  return el("div", { class: "blocks" }, ...blocks.map(b => {
    switch (b.type) {
      case "text": return el("pre", { class: "block-text" }, b.text);
      case "image": return el("img", { class: "inline-img", src: dataURL(b.mimeType, b.data), alt: "image (" + b.mimeType + ") from the tool" });
      case "audio": return el("audio", { class: "block-audio", controls: true, src: dataURL(b.mimeType, b.data) });
      case "resource": {
        const r = b.resource;
        const bytes = r.blob !== undefined ? null : new TextEncoder().encode(r.text);
        let b64 = r.blob;
        if (bytes) {
          let bin = "";
          for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
          b64 = btoa(bin);
        }
        const size = bytes ? bytes.length : Math.floor(r.blob.length * 3 / 4) - (r.blob.match(/=*$/)[0].length);
        return el("div", { class: "block-resource" },
          el("span", {}, r.uri + " (" + (r.mimeType || "no type") + ", " + humanSize(size) + ") "),
          el("a", { class: "download", href: dataURL("application/octet-stream", b64), download: fileName(r.uri) }, "Download"),
          r.text !== undefined ? el("pre", { class: "block-text" }, r.text) : null);
      }
    }
    return null;
  }));
}

// ---- tool cards ----

function toolCard(callID, name, args) {
  const parsed = parseJSON(args);
  const card = el("div", { class: "tool-card", "data-call": callID || "" },
    el("div", { class: "title" }, el("span", { class: "muted small" }, "Tool call "), el("code", {}, name)),
    el("details", { class: "args-box" }, el("summary", { class: "small" }, "Arguments"),
      el("pre", { class: "args" }, pretty(parsed.value))),
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

// what a capability means, in plain words, for the approval card.
const capWords = {
  filesystem_read: "read files", filesystem_write: "write files", network: "reach the network",
  env_read: "see environment variables", terminal_exec: "run a command on this machine", secrets_access: "read secrets",
  ask_person: "ask you questions while it runs",
};

function pendingCard(d) {
  if (isRecipeCall(d.invocation)) return recipePending(d); // a row of a recipe's card (recipes.js)
  const card = cardFor(d);
  card.dataset.invocation = d.invocation;
  card.classList.add("pending");
  $(".args-box", card).open = true;
  const caps = $(".caps", card);
  const who = d.pack ? d.pack : "packs";
  if (!d.capabilities.length) {
    caps.replaceChildren(el("p", {}, "Uses no capability beyond the defaults: ",
      el("span", { class: "muted" }, "it reads its own pack folder and this chat's workspace, and writes only the workspace.")));
  } else {
    const grants = new Map((d.grants || []).map(g => [g.capability, g]));
    caps.replaceChildren(el("p", {}, el("strong", {}, who), " asks to:"),
      el("ul", { class: "stake" }, ...d.capabilities.map(c => {
        const g = grants.get(c);
        const touch = d.touches.filter(t => t.startsWith(c + " ")).map(t => t.slice(c.length + 1));
        const res = (g && g.resources.length ? g.resources : touch);
        return el("li", {},
          el("span", { class: "cap" }, c), " ", capWords[c] || "",
          res.length ? el("span", {}, ": ", el("code", {}, res.join(", "))) : null,
          g ? el("div", { class: "muted small" }, "allowed by " + g.by) : null);
      })));
  }
  const decide = async (verb, always) => {
    for (const b of card.querySelectorAll(".actions button")) b.disabled = true;
    try {
      await api("POST", "/v1/invocations/" + encodeURIComponent(d.invocation) + "/" + verb, verb === "approve" ? { always } : undefined);
    } catch (e) { $(".status", card).textContent = e.message; }
  };
  $(".actions", card).replaceChildren(
    el("button", { class: "run", onclick: () => decide("approve", false) }, "Run"),
    el("button", { class: "deny", onclick: () => decide("deny") }, "Deny"),
    el("button", { class: "always", onclick: () => decide("approve", true), title: "Run calls of " + d.class + " in this chat without asking again" }, "Always for this chat"));
  $(".status", card).textContent = "Waiting for your approval.";
}

// questionCard shows a tool's question (ask_person) inside its tool card:
// one input per field, Answer and Decline. The host checks the answer.
function questionCard(d) {
  const card = cardFor(d);
  card.dataset.invocation = d.invocation;
  const inputs = d.fields.map(f => {
    let input;
    if (f.enum) input = el("select", { name: f.name }, f.required ? null : el("option", { value: "" }, ""), ...f.enum.map(v => el("option", { value: v }, v)));
    else if (f.type === "boolean") input = el("input", { type: "checkbox", name: f.name });
    else input = el("input", { type: f.type === "string" ? "text" : "number", step: f.type === "integer" ? "1" : "any", name: f.name, required: f.required });
    return { f, input };
  });
  const status = el("div", { class: "status muted small" });
  const send = async (action) => {
    const body = { action };
    if (action === "accept") {
      body.content = {};
      for (const { f, input } of inputs) {
        if (f.type === "boolean") body.content[f.name] = input.checked;
        else if (input.value === "") continue;
        else body.content[f.name] = f.type === "string" ? input.value : Number(input.value);
      }
    }
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    try { await api("POST", "/v1/questions/" + encodeURIComponent(d.id) + "/answer", body); } catch (e) { status.textContent = e.message; }
  };
  const box = el("form", { class: "question", "data-question": d.id, onsubmit: ev => { ev.preventDefault(); send("accept"); } },
    el("p", {}, el("strong", {}, d.pack), " asks you: ", el("span", { class: "message" }, d.message)),
    ...inputs.map(({ f, input }) => el("label", { class: "field" }, (f.title || f.name) + (f.required ? " *" : "") + " ", input,
      f.description ? el("span", { class: "muted small" }, " " + f.description) : null)),
    el("div", { class: "actions" },
      el("button", { type: "submit", class: "run answer" }, "Answer"),
      el("button", { type: "button", class: "deny decline", onclick: () => send("decline") }, "Decline")),
    status);
  card.append(box);
}

function answeredCard(d) {
  const box = $(`form.question[data-question="${CSS.escape(d.id)}"]`);
  if (!box) return;
  for (const e of box.querySelectorAll("input, select, button")) e.disabled = true;
  $(".status", box).textContent = d.action === "accept" ? "Answered." : d.action === "decline" ? "Declined." : "Cancelled" + (d.reason ? ": " + d.reason : ".");
}

function decidedCard(d) {
  if (isRecipeCall(d.invocation)) return recipeDecided(d);
  const card = $(`.tool-card[data-invocation="${CSS.escape(d.invocation)}"]`);
  if (!card) return;
  card.classList.remove("pending");
  $(".actions", card).replaceChildren();
  $(".status", card).textContent = d.verdict === "deny" ? "Denied" + (d.reason ? ": " + d.reason : ".") :
    d.verdict === "allow_chat" ? "Allowed for this chat." : "Approved.";
}

function doneCard(d) {
  const card = cardFor(d);
  card.dataset.invocation = d.invocation;
  card.classList.remove("pending");
  $(".actions", card).replaceChildren();
  $(".args-box", card).open = false;
  showResult(card, d.content, d.is_error, d.artifacts, d);
  if (d.artifacts && d.artifacts.length) loadFiles();
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
  if (!d.approved) {
    // "capability: denied by gate: denied by web" says it twice.
    const why = (d.reason || "").replace(/^capability: denied by gate: /, "");
    return why.startsWith("denied by ") ? "Denied by " + why.slice(10) : "Denied" + (why ? ": " + why : "");
  }
  const by = "approved by " + d.approver + (d.by_attach ? ", by attaching the pack to this chat" : d.remembered ? ", allowed for this chat earlier" : d.verdict === "allow_chat" ? ", allowed for this chat" : "");
  if (d.error_kind === "denied") return "Refused after it was " + by + ": " + errorMessage(content);
  // "waited 12 s for you, ran 41 ms": the server says where the time went.
  return (isError ? "Failed" : "Result") + " (" + by + ")" + (d.timing ? ", " + d.timing : "");
}

function showResult(card, content, isError, artifacts, d) {
  const denied = d ? !d.approved || d.error_kind === "denied" : false;
  card.classList.add(denied ? "denied" : isError ? "failed" : "done");
  const label = resultLabel(d, isError, content);
  const view = d && d.blocks && d.blocks.length ? blocksView(d.blocks) : resultView(content);
  const body = el("details", { class: "result", open: true }, el("summary", {}, label), view);
  if (d) $(".status", card).textContent = denied ? "Denied." : isError ? "The tool failed." : "Done.";
  card.append(body);
  if (artifacts && artifacts.length) card.append(artifactList(artifacts));
}

function fileURL(chat, path, download) {
  return "/v1/chats/" + encodeURIComponent(chat) + "/files/" + path.split("/").map(encodeURIComponent).join("/") + (download ? "?download=1" : "");
}

function artifactList(arts, chat = state.chat) {
  return el("ul", { class: "plain artifacts" }, ...arts.map(a => el("li", { class: "artifact" },
    el("span", {}, a.path + " (" + a.mime + ", " + humanSize(a.size_bytes) + ")"),
    el("span", {},
      el("a", { class: "open", href: fileURL(chat, a.path), target: "_blank", rel: "noopener" }, "Open"), " ",
      el("a", { class: "download", href: fileURL(chat, a.path, true) }, "Download")),
    /^image\/(png|jpeg|gif|webp)$/.test(a.mime) ? el("img", { class: "inline-img", src: fileURL(chat, a.path), alt: a.path, loading: "lazy" }) : null)));
}

// ---- files of the chat's workspace ----

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
    el("span", { class: "nowrap" }, el("span", { class: "muted small" }, humanSize(f.size_bytes)), " ",
      el("a", { class: "download", href: fileURL(state.chat, f.path, true), title: "Download " + f.path, "aria-label": "Download " + f.path }, "⤓")))));
  if (list.truncated) ul.append(el("li", { class: "muted" }, "… more files than are listed"));
}

async function uploadFiles(files) {
  const out = $("#upload-result");
  if (!files || !files.length) return;
  if (!state.chat) await newChat();
  const fd = new FormData();
  for (const f of files) fd.append("file", f, f.name);
  out.className = "muted small";
  out.textContent = "Uploading " + files.length + " file(s)…";
  try {
    const r = await api("POST", "/v1/chats/" + encodeURIComponent(state.chat) + "/files", fd);
    out.textContent = "Uploaded " + r.items.map(f => f.path).join(", ") + ".";
  } catch (e) { out.textContent = e.message; out.className = "error small"; return; }
  $("#upload-input").value = "";
  loadFiles();
}

// ---- agents ----

// agentForm holds the capability list being edited, in order.
const agentForm = { caps: [] };

function showChatAgent(c) {
  const p = $("#chat-agent");
  p.hidden = !c.agent;
  if (!c.agent) return;
  const a = state.agents.find(a => a.id === c.agent);
  p.textContent = "Agent: " + (a ? a.name : "(deleted; this chat keeps its prompt and model settings)");
}

function capLabel(c) {
  return c.name + (c.status === "deprecated" ? " (deprecated)" : c.status === "coming_soon" ? " (coming soon)" : "");
}

function capBadge(id) {
  const c = state.capabilities.find(c => c.id === id);
  if (!c) return el("span", { class: "badge missing", title: "not installed" }, id + " (not installed)");
  return el("span", { class: "badge " + c.status, title: c.description }, capLabel(c));
}

// loadAgentChoices refreshes the agents and the capabilities, and the
// picker of the chat page.
async function loadAgentChoices() {
  const [agents, caps] = await Promise.all([api("GET", "/v1/agents"), api("GET", "/v1/capabilities")]);
  state.agents = agents.items;
  state.capabilities = caps.items;
  const sel = $("#agent-select");
  const was = sel.value;
  sel.replaceChildren(el("option", { value: "" }, "no agent"), ...state.agents.map(a => el("option", { value: a.id }, a.name)));
  if (state.agents.some(a => a.id === was)) sel.value = was;
}

async function loadAgents() {
  await loadAgentChoices();
  renderCapChoices();
  $("#agents").replaceChildren(...(state.agents.length ? state.agents.map(agentCard) : [el("div", { class: "empty" },
    el("p", {}, el("strong", {}, "No agents yet.")),
    el("p", { class: "muted" }, "Create one above, or from a terminal: ", el("code", {}, "packs agent create NAME --capability PACK")))]));
}

function agentCard(a) {
  const del = el("button", { class: "small-btn delete-agent" }, "Delete");
  del.addEventListener("click", async () => {
    // Two clicks: the first asks, the second deletes.
    if (!del.classList.contains("confirm")) { del.classList.add("confirm"); del.textContent = "Really delete?"; return; }
    try { await api("DELETE", "/v1/agents/" + encodeURIComponent(a.id)); } catch (e) { $("#agent-result").replaceChildren(el("p", { class: "error" }, e.message)); }
    loadAgents();
  });
  return el("div", { class: "pack agent", "data-agent": a.name },
    el("h3", {}, a.name + " ", el("span", { class: "muted small" }, a.model || "the configured model", " · " + (a.max_tokens ? a.max_tokens + " tokens" : "tokens: the configured limit"))),
    a.system_prompt ? el("p", { class: "prompt" }, a.system_prompt) : el("p", { class: "muted" }, "No system prompt."),
    el("p", {}, "Capabilities: ", a.capabilities.length ? a.capabilities.map(capBadge) : el("span", { class: "muted" }, "none")),
    el("div", { class: "row wrap" },
      el("button", { class: "primary small-btn start-agent", onclick: () => startFromAgent(a.id) }, "Start a chat"),
      el("button", { class: "small-btn edit-agent", onclick: () => editAgent(a) }, "Edit"),
      del));
}

function renderCapChoices() {
  const left = state.capabilities.filter(c => !agentForm.caps.includes(c.id));
  $("#agent-cap-select").replaceChildren(...(left.length ?
    left.map(c => el("option", { value: c.id, disabled: c.status === "coming_soon" }, capLabel(c) + (c.category ? " · " + c.category : ""))) :
    [el("option", { value: "" }, state.capabilities.length ? "nothing more to add" : "no packs installed")]));
  const ol = $("#agent-caps");
  ol.replaceChildren(...agentForm.caps.map((id, i) => el("li", { "data-cap": id }, capBadge(id),
    el("span", { class: "row" },
      el("button", { type: "button", class: "small-btn up", "aria-label": "Move " + id + " up", disabled: i === 0,
        onclick: () => { [agentForm.caps[i - 1], agentForm.caps[i]] = [agentForm.caps[i], agentForm.caps[i - 1]]; renderCapChoices(); } }, "↑"),
      el("button", { type: "button", class: "small-btn remove", "aria-label": "Remove " + id,
        onclick: () => { agentForm.caps.splice(i, 1); renderCapChoices(); } }, "Remove")))));
  if (!agentForm.caps.length) ol.append(el("li", { class: "muted" }, "None yet: add built-ins or installed packs below."));
}

function addCap() {
  const id = $("#agent-cap-select").value;
  if (id && !agentForm.caps.includes(id)) { agentForm.caps.push(id); renderCapChoices(); }
}

function editAgent(a) {
  $("#agent-id").value = a.id;
  $("#agent-name").value = a.name;
  $("#agent-prompt").value = a.system_prompt;
  $("#agent-model").value = a.model;
  $("#agent-max-tokens").value = a.max_tokens || ""; // 0: the configured limit, the placeholder says
  agentForm.caps = [...a.capabilities];
  $("#agent-form-title").textContent = "Edit " + a.name;
  $("#agent-save").textContent = "Save changes";
  $("#agent-cancel").hidden = false;
  renderCapChoices();
  $("#agent-form").scrollIntoView({ block: "start" });
}

function resetAgentForm() {
  $("#agent-form").reset();
  $("#agent-id").value = "";
  agentForm.caps = [];
  $("#agent-form-title").textContent = "New agent";
  $("#agent-save").textContent = "Create agent";
  $("#agent-cancel").hidden = true;
  renderCapChoices();
}

async function saveAgent(ev) {
  ev.preventDefault();
  const id = $("#agent-id").value;
  const body = { name: $("#agent-name").value, system_prompt: $("#agent-prompt").value, model: $("#agent-model").value,
    capabilities: agentForm.caps };
  // An empty field: a new agent gets the configured limit written out (the
  // server's default); an edited one follows the configured limit (0).
  const mt = $("#agent-max-tokens").value;
  if (mt !== "") body.max_tokens = Number(mt);
  else if (id) body.max_tokens = 0;
  const out = $("#agent-result");
  try {
    const a = await api(id ? "PATCH" : "POST", id ? "/v1/agents/" + encodeURIComponent(id) : "/v1/agents", body);
    out.replaceChildren(el("p", { class: "ok" }, (id ? "Saved " : "Created ") + a.name + "."),
      ...(a.warnings || []).map(w => el("p", { class: "notice" }, w)));
    resetAgentForm();
    await loadAgents();
  } catch (e) { out.replaceChildren(el("p", { class: "error" }, e.message)); }
}

async function startFromAgent(id) {
  $("#agent-select").value = id;
  location.hash = "#/chat";
  await newChat();
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
    if (!list.items.length) {
      tbody.replaceChildren(el("tr", { class: "empty-row" }, el("td", { colspan: 7, class: "muted" },
        q.toString().replace(/limit=\d+&?/, "") ? "No rows match the filter." : "Nothing recorded yet: every tool call and every capability it uses will be listed here.")));
      return;
    }
    tbody.replaceChildren(...list.items.slice().reverse().map(e => el("tr", { "data-kind": e.kind },
      el("td", { class: "narrow" }, e.seq), el("td", { class: "nowrap", title: e.at }, ago(e.at)), el("td", { class: "narrow" }, e.kind), el("td", {}, e.pack), el("td", {}, e.tool),
      el("td", { class: "narrow mono small" }, e.invocation), el("td", {}, el("details", {}, el("summary", {}, summary(e)), el("pre", {}, pretty(e.body)))))));
  } catch (e) {
    tbody.replaceChildren(el("tr", {}, el("td", { colspan: 7, class: "error" }, e.message)));
  }
}

function summary(e) {
  const b = e.body || {};
  if (e.summary) return e.summary; // invocations and installs have one
  if (e.kind === "invocation") return b.status || "";
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
  $("#attach-btn").addEventListener("click", attach);
  $("#composer-form").addEventListener("submit", send);
  $("#composer").addEventListener("keydown", ev => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("#composer-form").requestSubmit(); }
  });
  $("#stop").addEventListener("click", stop);
  $("#agent-form").addEventListener("submit", saveAgent);
  $("#agent-cap-add").addEventListener("click", addCap);
  $("#agent-cancel").addEventListener("click", resetAgentForm);
  startPacks(); // packs.js
  $("#audit-form").addEventListener("submit", loadAudit);
  $("#verify").addEventListener("click", verify);
  startSettings();
  $("#upload-input").addEventListener("change", ev => uploadFiles(ev.target.files));
  const drop = $("#drop");
  drop.addEventListener("dragover", ev => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", ev => { ev.preventDefault(); drop.classList.remove("over"); uploadFiles(ev.dataTransfer.files); });
  if (window.matchMedia("(max-width: 700px)").matches) {
    for (const d of document.querySelectorAll("aside.chats details.fold")) d.open = false;
    $("#composer").placeholder = "Message the model"; // the long hint does not fit a phone's composer
  }
  $("#context-open").addEventListener("click", () => setDrawer(true));
  $("#context-close").addEventListener("click", () => setDrawer(false));
  document.addEventListener("keydown", ev => { if (ev.key === "Escape") setDrawer(false); });
  window.addEventListener("hashchange", route);
  if (!(await loadStatus())) return;
  // The chat works without agents: a failure here is shown, not fatal.
  await loadAgentChoices().catch(e => notice("Agents could not be loaded: " + e.message, "error"));
  const chats = await refreshChats();
  const wanted = location.hash.split("/")[2];
  const first = wanted || (chats.length ? chats[0].id : "");
  if (first) await selectChat(first);
  else loadFiles();
  route();
}

start().catch(e => notice("packs: the app failed to start: " + e.message, "error"));
