// packs web app: a recipe run (the model's run_recipe call) as one card.
// The run_recipe tool card holds a row per call of the run: the planned
// preconditions, steps and checks (recipe_start), each with its own Run and
// Deny when its approval asks (a pending event whose invocation is
// "<run>.<phase>.<id>"), its outcome (recipe_call), and the rollback's rows
// when a failure starts it. A run that lacks a required parameter asks for
// it with a form on the card (params). Loaded before app.js, whose helpers
// (el, $, api, cardFor) it uses once the page runs. Everything from a pack
// or the model is put on the page as text.
"use strict";

const recipeCallRE = /^rcp_[0-9a-f]{16}\.(precondition|step|verification|rollback)\./;

// isRecipeCall: the invocation is a call of a recipe run.
function isRecipeCall(inv) { return recipeCallRE.test(inv || ""); }

const phaseWords = { precondition: "check before", step: "step", verification: "check after", rollback: "rollback" };

// recipeCard returns the run_recipe card of the call d names, with its
// recipe box.
function recipeCard(d) {
  const card = cardFor({ call_id: d.call_id, invocation: d.run_invocation || "", name: "run_recipe", arguments: "{}" });
  card.classList.add("recipe-card");
  let box = $(".recipe", card);
  if (!box) {
    box = el("div", { class: "recipe" },
      el("div", { class: "recipe-head" }),
      el("ol", { class: "recipe-steps plain" }),
      el("div", { class: "recipe-rollback", hidden: true },
        el("div", { class: "block-title" }, "Rollback (a step or check failed: undoing, last first)"),
        el("ol", { class: "recipe-rollback-steps plain" })));
    $(".caps", card).before(box);
  }
  return { card, box };
}

function stepRow(s) {
  return el("li", { class: "recipe-step waiting", "data-invocation": s.invocation, "data-phase": s.phase },
    el("div", { class: "step-line" },
      el("span", { class: "phase muted small" }, phaseWords[s.phase] || s.phase), " ",
      el("strong", {}, s.name || s.id), " ",
      s.what ? el("code", {}, s.what) : null, " ",
      s.confirmation ? el("span", { class: "cap" }, "confirmation " + s.confirmation) : null,
      s.risk_level ? el("span", { class: "cap risk risk-" + s.risk_level }, "risk " + s.risk_level) : null),
    el("div", { class: "step-state muted small" }, "not yet run"),
    el("div", { class: "actions" }));
}

// rowFor finds the row of a run's call, adding it (a rollback step, or a
// call the plan did not list) when it is not there.
function rowFor(card, inv, phase, id, name) {
  let li = card.querySelector(`.recipe-step[data-invocation="${CSS.escape(inv)}"]`);
  if (li) return li;
  li = stepRow({ invocation: inv, phase, id, name });
  if (phase === "rollback") {
    $(".recipe-rollback", card).hidden = false;
    $(".recipe-rollback-steps", card).append(li);
  } else $(".recipe-steps", card).append(li);
  return li;
}

function recipeStart(d) {
  const { box } = recipeCard(d);
  $(".recipe-head", box).replaceChildren(el("span", { class: "muted small" }, "Recipe "), el("strong", {}, d.name || d.recipe),
    el("span", { class: "muted small" }, " of " + d.pack + " · run " + d.run + " · each call asks on its own row"));
  $(".recipe-steps", box).replaceChildren(...(d.steps || []).map(stepRow));
}

function recipePending(d) {
  const [run, phase, ...rest] = d.invocation.split(".");
  const { card } = recipeCard(d);
  const li = rowFor(card, d.invocation, phase, rest.join("."));
  li.classList.remove("waiting");
  li.classList.add("pending");
  if (d.risk_level && !li.querySelector(".risk")) $(".step-line", li).append(el("span", { class: "cap risk risk-" + d.risk_level }, "risk " + d.risk_level));
  const decide = async (verb, always) => {
    for (const b of li.querySelectorAll(".actions button")) b.disabled = true;
    try {
      await api("POST", "/v1/invocations/" + encodeURIComponent(d.invocation) + "/" + verb, verb === "approve" ? { always } : undefined);
    } catch (e) { $(".step-state", li).textContent = e.message; }
  };
  $(".actions", li).replaceChildren(
    el("button", { class: "run", onclick: () => decide("approve", false) }, "Run"),
    el("button", { class: "deny", onclick: () => decide("deny") }, "Deny"),
    el("button", { class: "always", onclick: () => decide("approve", true), title: "Run the calls of " + d.class + " in this chat without asking again (steps marked always still ask)" }, "Always for this chat"));
  $(".step-state", li).textContent = "Waiting for your approval: " + (d.touches || []).join("; ") + " (run " + run + ")";
}

function recipeDecided(d) {
  const li = document.querySelector(`.recipe-step[data-invocation="${CSS.escape(d.invocation)}"]`);
  if (!li) return;
  li.classList.remove("pending");
  $(".actions", li).replaceChildren();
  $(".step-state", li).textContent = d.verdict === "deny" ? "Denied" + (d.reason ? ": " + d.reason : ".") :
    d.verdict === "allow_chat" ? "Approved, and allowed for this chat; running." : "Approved; running.";
}

function recipeCall(d) {
  const c = d.call;
  const { card } = recipeCard(d);
  const inv = c.invocation || d.run + "." + c.phase + "." + c.id;
  const li = rowFor(card, inv, c.phase, c.id, c.name);
  li.classList.remove("waiting", "pending");
  li.classList.add(c.skipped ? "skipped" : c.ok ? "ok" : "failed");
  $(".actions", li).replaceChildren();
  $(".step-state", li).textContent = c.skipped ? "Skipped: the step it undoes never completed." :
    c.ok ? "Done (exit " + c.exit_code + ")." : "Failed" + (c.status && c.status !== "ok" ? " (" + c.status + ")" : "") + ": " + c.error;
}

// paramsForm asks for the parameters the model did not give.
function paramsForm(d) {
  const { card } = recipeCard(d);
  const inputs = d.params.map(p => el("input", { name: p.name, required: true, "aria-label": p.name, placeholder: p.type + (p.validation ? " matching " + p.validation : "") }));
  const status = el("div", { class: "muted small" });
  const form = el("form", { class: "recipe-params", "data-invocation": d.invocation },
    el("p", {}, el("strong", {}, "The recipe " + (d.name || d.recipe) + " needs values the model did not give."),
      el("span", { class: "muted" }, " Nothing runs until you give them; each step still asks you.")),
    ...d.params.map((p, i) => el("label", { class: "param" }, el("code", {}, p.name), p.description ? el("span", { class: "muted small" }, " " + p.description) : null, inputs[i])),
    el("div", { class: "row" },
      el("button", { type: "submit", class: "run" }, "Start the run"),
      el("button", { type: "button", class: "deny", onclick: () => answer({ cancel: true }) }, "Cancel")),
    status);
  const answer = async body => {
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    try { await api("POST", "/v1/invocations/" + encodeURIComponent(d.invocation) + "/parameters", body); } catch (e) {
      status.textContent = e.message;
      for (const b of form.querySelectorAll("button")) b.disabled = false;
    }
  };
  form.addEventListener("submit", ev => {
    ev.preventDefault();
    answer({ values: Object.fromEntries(inputs.map(i => [i.name, i.value])) });
  });
  $(".recipe", card).before(form);
  inputs[0]?.focus();
}

function paramsDone(d) {
  const form = document.querySelector(`form.recipe-params[data-invocation="${CSS.escape(d.invocation)}"]`);
  if (form) form.replaceWith(el("p", { class: "muted small" }, d.cancelled ? "The parameters were not given: the run did not start." : "Parameters given."));
}

// recipeFromResult draws a finished run's rows from its RecipeResult (the
// run_recipe result, or the output of its failure), for a chat read again.
function recipeFromResult(callID, content) {
  const p = parseJSON(content);
  const res = p.ok && p.value && (p.value.calls ? p.value : p.value.output);
  if (!res || !Array.isArray(res.calls)) return;
  recipeStart({ call_id: callID, run: res.run, pack: res.pack, recipe: res.recipe, steps: [] });
  for (const c of res.calls) recipeCall({ call_id: callID, run: res.run, call: c });
}

// recipeEvents subscribes a chat's event stream to the recipe cards.
function recipeEvents(on) {
  on("recipe_start", recipeStart);
  on("recipe_call", recipeCall);
  on("params", paramsForm);
  on("params_done", paramsDone);
}
