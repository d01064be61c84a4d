// packs web app: the approval queue. Calls of another process (packs mcp
// serving a client that cannot ask the person itself) wait in packs.db;
// GET /v1/queue lists them. This panel, under the header on every page,
// shows them with Approve and Deny, and, once the person opts in with a
// click, raises a desktop notification (the Notification API) for each new
// one. Loaded before app.js, whose helpers (el, $, api) it uses once the
// page runs.
"use strict";

const queueState = { timer: null, shown: "", seen: new Set(), first: true };

// queueEvery is how often the panel asks for waiting calls.
const queueEvery = 2000;

const notifyKey = "packs.queue.notify";

function queuePanel() {
  let p = document.getElementById("queue-panel");
  if (!p) {
    p = el("section", { id: "queue-panel", class: "queue-panel", hidden: true, "aria-label": "Calls waiting for your approval" });
    document.getElementById("banner").after(p);
  }
  return p;
}

// notifyWanted: the person opted in, and the browser allows it.
function notifyWanted() {
  return !!window.Notification && window.Notification.permission === "granted" && localStorage.getItem(notifyKey) === "on";
}

async function optInNotify() {
  if (!window.Notification) return;
  const answer = await window.Notification.requestPermission();
  localStorage.setItem(notifyKey, answer === "granted" ? "on" : "off");
  queueState.shown = ""; // draw the panel again, with or without the button
  pollQueue();
}

function queueItem(q) {
  const decide = async (verb, always) => {
    for (const b of item.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", "/v1/queue/" + encodeURIComponent(q.id) + "/" + verb, verb === "approve" ? { always } : undefined);
      item.classList.add(verb === "deny" ? "denied" : "done");
      $(".queue-state", item).textContent = verb === "deny" ? "Denied." : always ? "Approved, and allowed for this client's session." : "Approved.";
    } catch (e) { $(".queue-state", item).textContent = e.message; }
  };
  const item = el("div", { class: "queue-item tool-card pending", "data-queue": q.id },
    el("div", { class: "title" }, el("code", {}, q.class), el("span", { class: "muted small" }, " from " + q.client + (q.pack ? " · pack " + q.pack : ""))),
    el("pre", { class: "args" }, pretty(q.arguments)),
    q.capabilities.length ? el("div", {}, ...q.capabilities.map(c => el("span", { class: "cap" }, c))) : null,
    q.touches.length ? el("div", { class: "muted small" }, "touches: " + q.touches.join(", ")) : null,
    el("div", { class: "actions" },
      el("button", { class: "run", onclick: () => decide("approve", false) }, "Approve"),
      el("button", { class: "deny", onclick: () => decide("deny") }, "Deny"),
      el("button", { class: "always", onclick: () => decide("approve", true), title: "Approve calls of " + q.class + " for the rest of this client's session" }, "Always for this session")),
    el("div", { class: "queue-state muted small" }, "Waits until " + new Date(q.expires).toLocaleTimeString() + ", then it is denied."));
  return item;
}

function renderQueue(items) {
  const p = queuePanel();
  const key = items.map(q => q.id).join(" ");
  const fresh = items.filter(q => !queueState.seen.has(q.id));
  for (const q of items) queueState.seen.add(q.id);
  if (fresh.length && notifyWanted() && !queueState.first) {
    for (const q of fresh) {
      const n = new window.Notification("packs: a call waits for your approval", { body: q.class + " from " + q.client, tag: "packs-queue-" + q.id });
      n.onclick = () => { window.focus(); p.scrollIntoView(); };
    }
  }
  queueState.first = false;
  if (key === queueState.shown) return;
  queueState.shown = key;
  p.hidden = !items.length;
  if (!items.length) { p.replaceChildren(); return; }
  const canAsk = window.Notification && window.Notification.permission !== "denied" && !notifyWanted();
  p.replaceChildren(
    el("div", { class: "queue-head" },
      el("strong", {}, items.length === 1 ? "1 call from another app waits for your approval" : items.length + " calls from other apps wait for your approval"),
      el("span", { class: "muted small" }, " (an MCP client that cannot ask you itself; packs approve decides them too)"),
      canAsk ? el("button", { class: "notify small-btn", onclick: optInNotify }, "Notify me on this desktop") : null),
    ...items.map(queueItem));
}

async function pollQueue() {
  let list;
  try { list = await api("GET", "/v1/queue"); } catch (e) {
    // Without the token (or after the server stopped) there is nothing to show.
    clearInterval(queueState.timer);
    queueState.timer = null;
    return;
  }
  renderQueue(list.items);
}

function startQueue() {
  if (queueState.timer) return;
  pollQueue();
  queueState.timer = setInterval(pollQueue, queueEvery);
}

document.addEventListener("DOMContentLoaded", startQueue);
