// packs web app: the Settings page. The model every chat talks to:
// provider, base URL, model, API key and max tokens. GET /v1/settings/model
// never returns the key, only whether one is set; the key field is sent
// only when the person typed in it, so saving other settings keeps the key.
// Loaded before app.js, whose helpers (el, $, api) it uses once the page
// runs.
"use strict";

const settingsState = { data: null };

const settingNames = { provider: "Provider", base_url: "Base URL", model: "Model", api_key: "API key" };

// loadSettings fills the form: the saved settings, else the model chats
// use now, else the provider's defaults.
async function loadSettings() {
  const out = $("#settings-result");
  let d;
  try { d = await api("GET", "/v1/settings/model"); } catch (e) { out.replaceChildren(el("p", { class: "error" }, e.message)); return; }
  settingsState.data = d;
  const v = d.saved || d.effective || d.defaults.openai;
  $("#set-provider").value = v.provider;
  $("#set-base-url").value = v.base_url;
  $("#set-model").value = v.model;
  $("#set-max-tokens").value = v.max_tokens;
  $("#set-api-key").value = "";
  showKeyState(!!(d.saved && d.saved.api_key_set));
  const over = $("#settings-overrides");
  over.hidden = !d.overrides.length;
  over.replaceChildren(...(d.overrides.length ? [
    el("strong", {}, "packs serve was started with settings of its own, which win over what you save here: "),
    d.overrides.map(o => (settingNames[o.setting] || o.setting) + " from " + o.from).join(", ") + ". ",
    "Start packs serve without them to use the saved ones."] : []));
  if (d.error) out.replaceChildren(el("p", { class: "error" }, "The saved settings make no model: " + d.error));
  const home = (state.status && state.status.home) || "the state directory";
  $("#settings-where").textContent = "Saved in " + home + "/model.json; the API key is kept encrypted in the secret store " +
    "(packs secret list shows it as PACKS_MODEL_API_KEY), never in packs.db, and is never shown again.";
}

function showKeyState(set) {
  $("#set-key-state").textContent = set ? "A key is set." : "No key is set.";
  $("#set-key-remove").hidden = !set;
  $("#set-api-key").placeholder = set ? "a key is set: leave empty to keep it" : "none set (a local Ollama needs none)";
}

// settingsBody is the form as the API takes it.
function settingsBody(removeKey) {
  const b = { provider: $("#set-provider").value, base_url: $("#set-base-url").value.trim(), model: $("#set-model").value.trim(),
    max_tokens: Number($("#set-max-tokens").value) || 0 };
  const key = $("#set-api-key").value.trim();
  if (removeKey) b.api_key = "";
  else if (key) b.api_key = key;
  return b;
}

// switchProvider moves the base URL and model to the new provider's
// defaults, unless the person typed their own.
function switchProvider() {
  const d = settingsState.data;
  if (!d) return;
  const p = $("#set-provider").value;
  const other = p === "openai" ? d.defaults.anthropic : d.defaults.openai;
  const mine = d.defaults[p];
  for (const [sel, k] of [["#set-base-url", "base_url"], ["#set-model", "model"]]) {
    const input = $(sel);
    if (!input.value.trim() || input.value.trim() === other[k]) input.value = mine[k];
  }
}

async function testSettings() {
  const out = $("#settings-result");
  out.replaceChildren(el("p", { class: "muted" }, "Asking the model…"));
  $("#set-test").disabled = true;
  try {
    const r = await api("POST", "/v1/settings/model/test", settingsBody(false));
    out.replaceChildren(r.ok ?
      el("p", { class: "ok test-ok" }, "Connected: " + r.describe + " answered in " + r.duration_ms + " ms: “" + r.reply + "”") :
      el("p", { class: "error test-error" }, "The test failed: " + r.error));
  } catch (e) { out.replaceChildren(el("p", { class: "error test-error" }, e.message)); }
  finally { $("#set-test").disabled = false; }
}

async function saveSettings(ev, removeKey = false) {
  if (ev) ev.preventDefault();
  const out = $("#settings-result");
  try {
    const d = await api("PUT", "/v1/settings/model", settingsBody(removeKey));
    await loadSettings();
    out.replaceChildren(el("p", { class: "ok saved" }, removeKey ? "The key was removed. " : "Saved. ",
      d.describe ? "The next message uses " + d.describe + "." : ""));
    await loadStatus();
  } catch (e) { out.replaceChildren(el("p", { class: "error" }, e.message)); }
}

function startSettings() {
  $("#settings-form").addEventListener("submit", saveSettings);
  $("#set-test").addEventListener("click", testSettings);
  $("#set-provider").addEventListener("change", switchProvider);
  $("#set-key-remove").addEventListener("click", () => saveSettings(null, true));
}
