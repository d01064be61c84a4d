// packs web app: the Packs page. The list (#/packs) with search and
// filters, one page per pack (#/packs/NAME: its docs, tools, grants and
// audit rows), and the actions packs add, update, disable, enable and
// remove take in a terminal, each through the same API the CLI's code
// serves. Adding or updating shows what the pack asks for first (the
// server's preview runs every check and installs nothing); the install
// that follows is bound to the content reviewed (its integrity).
// Loaded before app.js, whose helpers (el, $, api, capWords, ...) it uses
// once the page runs.
"use strict";

const packsState = { items: [], offer: null, offerFor: null, file: null };

// showPacks draws the list, or the page of one pack for #/packs/NAME.
function showPacks() {
  const name = decodeURIComponent(location.hash.split("/")[2] || "");
  $("#packs-list-view").hidden = !!name;
  $("#pack-page").hidden = !name;
  if (name) loadPackPage(name);
  else {
    // A page left behind must not answer for the next one.
    $("#pack-page").replaceChildren();
    delete $("#pack-page").dataset.pack;
    loadPacks();
  }
}

// ---- the list ----

// origin says where a pack comes from, in words.
const originWords = { installed: "installed", built_in: "built in", in_place: "in place" };

async function loadPacks() {
  loadReview();
  let list;
  try { list = await api("GET", "/v1/packs"); } catch (e) { $("#packs").replaceChildren(el("p", { class: "error" }, e.message)); return; }
  packsState.items = list.items;
  renderPackList();
}

// isGranted: the person granted the pack at least one capability.
function isGranted(p) { return p.capabilities.some(c => c.granted); }

function packMatches(p) {
  const q = $("#packs-search").value.trim().toLowerCase();
  const status = $("#packs-status").value, origin = $("#packs-origin").value, granted = $("#packs-granted").value;
  if (q && !(p.name + " " + (p.description || "") + " " + p.tools.map(t => t.name).join(" ")).toLowerCase().includes(q)) return false;
  if (status === "enabled" && p.disabled || status === "disabled" && !p.disabled) return false;
  if (origin && p.origin !== origin) return false;
  if (granted === "granted" && !isGranted(p) || granted === "not_granted" && isGranted(p)) return false;
  return true;
}

function renderPackList() {
  const root = $("#packs"), all = packsState.items;
  if (!all.length) {
    root.replaceChildren(el("div", { class: "empty" },
      el("p", {}, el("strong", {}, "No packs installed yet.")),
      el("p", { class: "muted" }, "Add one with the button above, from a folder, a URL or a .tar.gz, or from a terminal: ",
        el("code", {}, "bin/packs add wasm-examples/json-tools"), ". make run installs the examples.")));
    $("#packs-count").textContent = "";
    return;
  }
  const shown = all.filter(packMatches);
  $("#packs-count").textContent = shown.length === all.length ? all.length + " packs" : shown.length + " of " + all.length + " packs";
  if (!shown.length) {
    root.replaceChildren(el("p", { class: "muted empty-item" }, "No pack matches: change the search or the filters."));
    return;
  }
  root.replaceChildren(el("ul", { class: "plain pack-list" }, ...shown.map(packRow)));
}

function packRow(p) {
  const granted = p.capabilities.filter(c => c.granted).map(c => c.capability);
  const asked = p.capabilities.filter(c => !c.granted).map(c => c.capability);
  return el("li", { class: "pack-row", "data-pack": p.name },
    el("div", { class: "pack-row-head" },
      el("a", { class: "pack-link", href: "#/packs/" + encodeURIComponent(p.name) }, p.name),
      el("span", { class: "muted small" }, p.version || ""),
      el("span", { class: "badge origin " + p.origin }, originWords[p.origin] || p.origin),
      p.disabled ? el("span", { class: "badge off" }, "disabled") : null,
      p.status !== "ok" && p.status !== "in_place" ? el("span", { class: "badge off" }, p.status) : null,
      p.capability_status ? el("span", { class: "badge " + p.capability_status }, p.capability_status === "deprecated" ? "deprecated" : "coming soon") : null),
    el("p", { class: "pack-desc" }, p.description || p.error || ""),
    el("p", { class: "muted small" },
      p.tools.length ? p.tools.length + (p.tools.length === 1 ? " tool" : " tools") : "docs only",
      granted.length ? el("span", {}, " · granted: ", ...granted.map(c => el("span", { class: "cap ok" }, c))) : null,
      asked.length ? el("span", {}, " · not granted: ", ...asked.map(c => el("span", { class: "cap" }, c))) : null));
}

// loadReview shows the grants the policy's [review] says are due, each
// with Keep (its age counts from today) and Revoke.
async function loadReview() {
  const root = $("#review");
  let due;
  try { due = await api("GET", "/v1/review"); } catch (e) { root.replaceChildren(el("p", { class: "error" }, e.message)); return; }
  if (!due.items.length) { root.replaceChildren(); return; }
  root.replaceChildren(el("div", { class: "pack review" },
    el("h3", {}, "Due for review"),
    el("p", { class: "muted" }, "The policy asks you to look again at these grants: keep each, or revoke it."),
    el("div", { class: "table-wrap" }, el("table", { class: "caps-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "pack"), el("th", {}, "capability"), el("th", {}, "granted"), el("th", {}, "since"), el("th", {}, ""))),
      el("tbody", {}, ...due.items.map(d => el("tr", { "data-review": d.pack + ":" + d.capability },
        el("td", { "data-label": "pack" }, d.pack),
        el("td", { "data-label": "capability" }, el("span", { class: "cap" }, d.capability)),
        el("td", { "data-label": "granted" }, (d.resources || []).join(", ") || "everything it asks for"),
        el("td", { "data-label": "since", class: d.lapsed ? "bad" : "" }, d.since.slice(0, 10) + (d.lapsed ? " (lapsed: it holds no more)" : "")),
        el("td", {},
          el("button", { class: "small-btn review-keep", onclick: () => reviewGrant(d.pack, d.capability, true) }, "Keep"), " ",
          el("button", { class: "small-btn review-revoke", onclick: () => reviewGrant(d.pack, d.capability, false) }, "Revoke")))))))));
}

async function reviewGrant(pack, cap, keep) {
  try {
    if (keep) await api("POST", "/v1/packs/" + encodeURIComponent(pack) + "/grants/" + encodeURIComponent(cap) + "/keep");
    else await api("DELETE", "/v1/packs/" + encodeURIComponent(pack) + "/grants/" + encodeURIComponent(cap));
  } catch (e) { $("#review").prepend(el("p", { class: "error" }, e.message)); return; }
  loadPacks();
}

// ---- one pack's page ----

async function loadPackPage(name) {
  const root = $("#pack-page");
  if (root.dataset.pack !== name) root.replaceChildren(backLink(), el("p", { class: "muted" }, "Loading…"));
  delete root.dataset.pack;
  $("#packs-notice").replaceChildren();
  let p;
  // A chat open in the page: the paths a call holds are shown in its
  // workspace.
  const q = state.chat ? "?chat=" + encodeURIComponent(state.chat) : "";
  try { p = await api("GET", "/v1/packs/" + encodeURIComponent(name) + q); } catch (e) {
    root.replaceChildren(backLink(), el("p", { class: "error" }, e.message));
    return;
  }
  root.dataset.pack = p.name;
  root.replaceChildren(...packPage(p));
  loadPackAudit(p.name);
}

function backLink() { return el("p", {}, el("a", { href: "#/packs", class: "back" }, "← All packs")); }

function packPage(p) {
  const installed = p.origin !== "in_place";
  const actions = el("div", { class: "row wrap pack-actions" },
    installed ? el("button", { id: "pack-toggle", onclick: () => togglePack(p) }, p.disabled ? "Enable" : "Disable") : null,
    p.origin === "installed" ? el("button", { id: "pack-update", onclick: () => reviewUpdate(p.name) }, "Check for update") : null,
    p.origin === "built_in" ? el("button", { id: "pack-update", onclick: () => updateBuiltin(p.name) }, "Update") : null,
    installed ? el("button", { id: "pack-remove", class: "danger", onclick: () => askRemove(p) }, "Remove") : null);
  return [
    backLink(),
    el("div", { class: "pack", "data-pack": p.name },
      el("h2", {}, p.name + " ", el("span", { class: "muted small" }, p.version || ""),
        el("span", { class: "badge origin " + p.origin }, originWords[p.origin] || p.origin),
        p.disabled ? el("span", { class: "badge off" }, "disabled") : null,
        p.capability_status ? el("span", { class: "badge " + p.capability_status }, p.capability_status === "deprecated" ? "deprecated" : "coming soon") : null),
      el("p", {}, p.description || ""),
      el("p", { class: "muted small source" }, "From ", el("span", { class: "mono" }, p.source || ""), p.integrity ? el("span", { class: "mono" }, " · " + p.integrity.slice(0, 19) + "…") : null),
      p.in_place ? inPlaceNote(p) : null,
      p.status !== "ok" && !p.in_place ? el("p", { class: "error" }, "Status: " + p.status + (p.error ? ": " + p.error : "") + ". Reinstall it.") : null,
      p.blocked ? el("p", { class: "error" }, p.blocked) : null,
      p.mandated ? el("p", { class: "muted" }, "The policy mandates this pack: it is attached to every chat and stays enabled.") : null,
      p.disabled ? el("p", { class: "error" }, "Disabled: it is never attached or run. Enable turns it back on.") : null,
      p.origin === "built_in" ? el("p", { class: "muted small builtin-note" }, "Built in: it comes with packs. Update brings it to the version this packs binary carries, as packs update does; your grants cover no more than before.") : null,
      actions,
      el("div", { id: "pack-action-result", "aria-live": "polite" })),
    el("div", { class: "pack", "data-pack": p.name }, el("h3", {}, "Grants"), grantsTable(p)),
    el("div", { class: "pack", "data-pack": p.name }, el("h3", {}, "Tools"),
      p.tools.length ? p.tools.map(t => toolForm(p.name, t)) : el("p", { class: "muted" }, "No tools: the pack is documentation the model reads.")),
    el("div", { class: "pack docs", "data-pack": p.name }, el("h3", {}, "Docs ", el("span", { class: "muted small" }, p.docs ? p.docs.file : "")), docsView(p.docs)),
    el("div", { class: "pack", "data-pack": p.name }, el("h3", {}, "Audit"), el("div", { id: "pack-audit" }, el("p", { class: "muted" }, "Loading…"))),
  ];
}

// docsView shows the entry doc as the HTML the server rendered from its
// Markdown (raw HTML escaped, unsafe links dropped: internal/web/markdown.go).
function docsView(d) {
  if (!d) return el("p", { class: "muted" }, "The docs could not be read.");
  const div = el("div", { class: "msg md doc-body" });
  div.innerHTML = d.html;
  return [div, d.truncated ? el("p", { class: "muted small" }, "Only the beginning is shown.") : null];
}

// where says where a path a call holds lives: "./data" is in the chat's
// workspace.
function where(r) { return r === "." ? "the chat's workspace" : r.startsWith("./") ? r + " in the chat's workspace" : r; }

function grantsTable(p) {
  if (!p.capabilities.length) return el("p", { class: "muted" }, "Asks for no capability beyond the defaults (its own folder, read-only; the chat's workspace).");
  return el("div", { class: "table-wrap" }, el("table", { class: "caps-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "capability"), el("th", {}, "asks for"), el("th", {}, "granted"), el("th", {}, "a call holds"), el("th", {}, ""))),
    el("tbody", {}, ...p.capabilities.map(c => el("tr", { "data-cap": c.capability },
      el("td", { "data-label": "capability" }, el("span", { class: "cap" }, c.capability), el("div", { class: "muted small" }, capWords[c.capability] || "")),
      el("td", { "data-label": "asks for" }, c.requested.join(", ") || "(unknown: the pack does not load)"),
      el("td", { "data-label": "granted", class: c.granted ? "ok" : "bad" }, c.granted ? (c.granted_resources.map(where).join(", ") || "yes") + (c.scope ? " (" + c.scope + ")" : "") : "no"),
      el("td", { "data-label": "a call holds" }, c.held === undefined ? "" : c.held ? (c.effective || []).map(where).join(", ") || "yes" : c.reason || "nothing"),
      el("td", {}, c.granted ?
        el("button", { class: "small-btn", onclick: () => changeGrant(p.name, c.capability, false) }, "Revoke") :
        el("button", { class: "small-btn", onclick: () => changeGrant(p.name, c.capability, true) }, "Grant")))))));
}

// inPlaceNote says where a pack used in place lives, whether it can be
// attached, and what changed in its folder since it was granted.
function inPlaceNote(p) {
  const ip = p.in_place;
  return el("div", { class: "in-place" },
    el("p", {}, el("span", { class: "badge in-place" }, "in place"), " ", ip.dir, el("span", { class: "muted small" }, " (" + ip.location + " folder, not installed)")),
    ip.attachable ? el("p", { class: "muted small" }, "Attach it to a chat: its docs are read at once; its tools and scripts need your grants, which hold for its files as they are now.")
      : el("p", { class: "error" }, "Not attachable: " + (ip.not_attachable || "")),
    ip.changed_since_grant ? el("p", { class: "error" }, "Changed since you granted it (" + ip.changed_since_grant + "): its grants no longer hold; grant again.") : null,
    p.error ? el("p", { class: "error" }, p.error) : null);
}

async function changeGrant(pack, cap, on) {
  try {
    if (on) await api("POST", "/v1/packs/" + encodeURIComponent(pack) + "/grants", { capability: cap });
    else await api("DELETE", "/v1/packs/" + encodeURIComponent(pack) + "/grants/" + encodeURIComponent(cap));
  } catch (e) { actionResult(e.message, "error"); return; }
  loadPackPage(pack);
}

function actionResult(text, cls) {
  const out = $("#pack-action-result");
  if (out) out.replaceChildren(el("p", { class: cls }, text));
}

async function loadPackAudit(name) {
  const root = $("#pack-audit");
  let list;
  try { list = await api("GET", "/v1/audit?pack=" + encodeURIComponent(name) + "&limit=50"); } catch (e) { root.replaceChildren(el("p", { class: "error" }, e.message)); return; }
  if (!list.items.length) {
    root.replaceChildren(el("p", { class: "muted" }, "Nothing recorded for this pack yet: its installs and each call of its tools will be listed here."));
    return;
  }
  root.replaceChildren(el("div", { class: "table-wrap" }, el("table", { class: "pack-audit" },
    el("thead", {}, el("tr", {}, el("th", {}, "time"), el("th", {}, "kind"), el("th", {}, "tool"), el("th", {}, "what happened"))),
    el("tbody", {}, ...list.items.slice().reverse().map(e => el("tr", { "data-kind": e.kind },
      el("td", { class: "nowrap", title: e.at }, ago(e.at)), el("td", {}, e.kind), el("td", {}, e.tool || ""),
      el("td", {}, el("details", {}, el("summary", {}, summary(e)), el("pre", {}, pretty(e.body))))))))),
  el("p", { class: "muted small" }, el("a", { href: "#/audit", onclick: () => { $("#audit-pack").value = name; } }, "All of its rows on the Audit page")));
}

function toolForm(pack, t) {
  const args = el("textarea", { class: "tool-args", rows: 3, "aria-label": "Arguments (JSON)" }, "{}");
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
      out.replaceChildren(
        el("div", { class: "muted small" }, resultLabel(r, r.is_error, r.content), " · in the chat ", el("a", { href: "#/chat/" + r.chat }, "by hand: " + pack)),
        r.blocks && r.blocks.length ? blocksView(r.blocks) : resultView(r.content),
        r.artifacts.length ? artifactList(r.artifacts, r.chat) : "");
    } catch (e) { out.replaceChildren(el("span", { class: "error" }, e.message)); }
  };
  return el("details", { class: "tool" },
    el("summary", {}, el("code", {}, t.name), " — ", t.description),
    el("details", { class: "schema" }, el("summary", { class: "muted small" }, "Input schema"), jsonTree(t.input_schema)),
    el("div", { class: "row tool-run" }, args, el("button", { class: "run-by-hand primary", onclick: run }, "Run by hand")),
    out);
}

// ---- disable, enable, remove ----

async function togglePack(p) {
  try {
    await api("POST", "/v1/packs/" + encodeURIComponent(p.name) + (p.disabled ? "/enable" : "/disable"));
  } catch (e) { actionResult(e.message, "error"); return; }
  await loadPackPage(p.name);
  actionResult(p.name + (p.disabled ? " is enabled: it can be attached and run again." : " is disabled: it stays installed, and is never attached or run."), "ok");
  refreshPackChoices();
}

// askRemove asks in the page (not a browser dialog) before removing.
function askRemove(p) {
  const out = $("#pack-action-result");
  out.replaceChildren(el("div", { class: "confirm" },
    el("p", {}, el("strong", {}, "Remove " + p.name + "? "), "Its folder, its packs.lock entry and its grants go. Chats that had it attached go on without it."),
    el("div", { class: "row wrap" },
      el("button", { id: "pack-remove-yes", class: "danger", onclick: () => removePack(p.name) }, "Remove " + p.name),
      el("button", { id: "pack-remove-no", onclick: () => out.replaceChildren() }, "Keep it"))));
}

async function removePack(name) {
  try { await api("DELETE", "/v1/packs/" + encodeURIComponent(name)); } catch (e) { actionResult(e.message, "error"); return; }
  location.hash = "#/packs";
  $("#packs-notice").replaceChildren(el("p", { class: "ok" }, "Removed " + name + "."));
  refreshPackChoices();
}

// ---- the consent dialog: add and update ----

function openAddDialog() {
  packsState.offer = null;
  packsState.offerFor = null;
  $("#add-form").reset();
  $("#add-step-source").hidden = false;
  $("#add-step-consent").hidden = true;
  $("#add-result").replaceChildren();
  $("#add-dialog").showModal();
  $("#add-source").focus();
}

function closeAddDialog() { $("#add-dialog").close(); packsState.offer = null; }

// addBody is the install request: an uploaded archive, else the path or
// URL typed; fields are added to it.
function addBody(fields) {
  const file = $("#add-file").files[0];
  if (file) {
    const fd = new FormData();
    fd.append("archive", file, file.name);
    for (const [k, v] of Object.entries(fields)) fd.append(k, Array.isArray(v) ? v.join(",") : String(v));
    return fd;
  }
  return { source: $("#add-source").value.trim(), ...fields };
}

function showError(root, e) {
  root.replaceChildren(el("p", { class: "error" }, e.message),
    ...((e.body && e.body.findings) || []).map(f => el("div", { class: "error small" }, `${f.file}:${f.line}: ${f.severity}: ${f.rule}: ${f.message}`)));
}

async function reviewAdd(ev) {
  ev.preventDefault();
  const out = $("#add-result");
  if (!$("#add-file").files[0] && !$("#add-source").value.trim()) {
    out.replaceChildren(el("p", { class: "error" }, "Give a folder or .tar.gz path, a URL, or choose an archive."));
    return;
  }
  out.replaceChildren(el("p", { class: "muted" }, "Checking the pack…"));
  let offer;
  try { offer = await api("POST", "/v1/packs", addBody({ preview: true })); } catch (e) { showError(out, e); return; }
  out.replaceChildren();
  showConsent(offer, null);
}

// showConsent fills the dialog's second step: what the pack is and asks
// for, each capability with a box the person ticks to grant it. For an
// update (update set), only its new requests have boxes; the grants
// that carry over are listed.
function showConsent(offer, update) {
  packsState.offer = offer;
  packsState.offerFor = update;
  $("#add-dialog-title").textContent = update ? "Update " + offer.name : "Add a pack";
  $("#add-step-source").hidden = true;
  $("#add-step-consent").hidden = false;
  $("#add-confirm").textContent = update ? "Update" : "Install";
  const caps = offer.capabilities.map(c => {
    const isNew = !update || (c.added !== undefined && c.added !== null);
    const box = el("input", { type: "checkbox", class: "consent-cap", value: c.capability, checked: c.pre_approved, disabled: c.pre_approved || !isNew });
    return el("li", { "data-cap": c.capability },
      el("label", {}, isNew ? box : null, " ", el("span", { class: "cap" }, c.capability), " ", capWords[c.capability] || "",
        el("div", { class: "muted small consent-res" }, (update && c.added ? "new: " + c.added.join(", ") : c.requested.join(", ")) || "everything it needs"),
        c.pre_approved ? el("div", { class: "ok small" }, "pre-approved by the policy") : null,
        update && !isNew ? el("div", { class: "muted small" }, (offer.carried || []).includes(c.capability) ? "your grant carries over" : "not granted") : null));
  });
  $("#consent").replaceChildren(...[
    el("p", {}, el("strong", {}, offer.name), " ", el("span", { class: "muted" }, update ? (offer.from || "–") + " → " + (offer.version || "–") : offer.version || ""),
      el("br"), offer.description),
    el("p", { class: "muted small source" }, "From ", el("span", { class: "mono" }, offer.source), el("br"), el("span", { class: "mono" }, offer.integrity),
      offer.signer ? el("span", {}, el("br"), "signed by ", el("span", { class: "mono" }, offer.signer)) : null),
    update && offer.changes && offer.changes.length ? el("pre", { class: "changes" }, offer.changes.join("\n")) : null,
    update && offer.dropped && offer.dropped.length ? el("p", { class: "muted small" }, "Grants dropped (no longer asked for): " + offer.dropped.join(", ")) : null,
    el("h4", {}, offer.capabilities.length ? "It asks for" : "It asks for nothing beyond the defaults"),
    offer.capabilities.length ? el("ul", { class: "plain consent-caps" }, ...caps) : el("p", { class: "muted small" }, "Its own folder, read-only, and the chat's workspace."),
    offer.capabilities.length ? el("p", { class: "muted small" }, "Tick what you grant. Nothing ticked is granted; every tool call still waits for your Run or Deny.") : null,
    el("h4", {}, offer.tools.length + (offer.tools.length === 1 ? " tool" : " tools")),
    el("ul", { class: "consent-tools" }, ...offer.tools.map(t => el("li", {}, el("code", {}, t.name), " — ", t.description))),
    ...(offer.warnings || []).map(f => el("div", { class: "notice small" }, `${f.file}:${f.line}: ${f.severity}: ${f.rule}: ${f.message}`)),
  ].filter(Boolean));
}

async function confirmConsent() {
  const offer = packsState.offer, update = packsState.offerFor, out = $("#add-result");
  if (!offer) return;
  const grant = [...document.querySelectorAll("#consent .consent-cap")].filter(b => b.checked && !b.disabled).map(b => b.value);
  try {
    if (update) {
      const r = await api("POST", "/v1/packs/" + encodeURIComponent(update) + "/update", { integrity: offer.integrity, grant });
      closeAddDialog();
      await loadPackPage(update);
      actionResult(r.status === "updated" ? "Updated " + update + " to " + (r.pack.version || "the new version") + "." : update + " is up to date.", "ok");
    } else {
      const p = await api("POST", "/v1/packs", addBody({ grant, integrity: offer.integrity }));
      closeAddDialog();
      $("#packs-notice").replaceChildren(el("p", { class: "ok" }, "Installed ", el("a", { href: "#/packs/" + encodeURIComponent(p.name) }, p.name), " " + (p.version || "") + "."));
      loadPacks();
    }
    refreshPackChoices();
  } catch (e) { showError(out, e); }
}

async function reviewUpdate(name) {
  actionResult("Fetching " + name + " from its source…", "muted");
  let r;
  try { r = await api("POST", "/v1/packs/" + encodeURIComponent(name) + "/update", { preview: true }); } catch (e) { actionResult(e.message, "error"); return; }
  if (r.status === "up_to_date") { actionResult(name + " is up to date: its source holds what is installed.", "ok"); return; }
  actionResult("", "muted");
  $("#add-result").replaceChildren();
  $("#add-dialog").showModal();
  showConsent(r.offer, name);
}

// updateBuiltin brings a built-in to the version this packs binary
// carries: nothing to review, as it grants nothing new.
async function updateBuiltin(name) {
  actionResult("Updating " + name + "…", "muted");
  let r;
  try { r = await api("POST", "/v1/packs/" + encodeURIComponent(name) + "/update", {}); } catch (e) { actionResult(e.message, "error"); return; }
  await loadPackPage(name);
  actionResult(r.status === "updated" ? "Updated " + name + " to the version this packs binary carries." : name + " is up to date: it is the version this packs binary carries.", "ok");
}

function startPacks() {
  for (const id of ["#packs-search", "#packs-status", "#packs-origin", "#packs-granted"]) $(id).addEventListener("input", renderPackList);
  $("#packs-filter").addEventListener("submit", ev => ev.preventDefault()); // Enter in the search filters; it goes nowhere
  $("#add-open").addEventListener("click", openAddDialog);
  $("#add-form").addEventListener("submit", reviewAdd);
  $("#add-cancel").addEventListener("click", closeAddDialog);
  $("#add-decline").addEventListener("click", closeAddDialog);
  $("#add-confirm").addEventListener("click", confirmConsent);
  $("#add-dialog").addEventListener("close", () => { packsState.offer = null; });
}
