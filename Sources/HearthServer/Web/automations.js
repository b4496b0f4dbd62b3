// The scenes and automations view: every scene with Recall (members too) and whether it is
// active; every automation with its state, Enable/Disable (admins), Run (admins; members when
// it has a manual starter) and its last run or near-miss from the trace ring.
import { el, call, attempt, isAdmin, toast, seg, $ } from "/web/core.js";

const outcomeClass = { completed: "ok", running: "", simulated: "", conditionFailed: "warn", skipped: "warn", suppressed: "warn",
  stopped: "warn", failed: "bad", dropped: "bad", interrupted: "bad", abandoned: "bad" };

/// One line for a trace: outcome, why, and what started it.
export function describeRun(run) {
  if (!run) return "never ran";
  const why = run.reason ? ` — ${run.reason}` : "";
  return `${run.outcome}${why} (${run.cause && run.cause.description ? run.cause.description : "no cause"})`;
}

const hasManual = (a) => (a.automation.starters || []).some((s) => "manual" in s);

function sceneRow(s) {
  return el("li", { class: "card", "data-scene": s.id },
    el("strong", { text: s.name }), " ",
    el("span", { class: `state ${s.isActive ? "ok" : ""}`, "data-active": String(!!s.isActive), text: s.isActive ? "active" : "not active" }), " ",
    el("span", { class: "hint", text: `${s.targets.length} target(s)` + (s.source === "config" ? ` · ${s.configRef || "hearth.yaml"}` : "") }), " ",
    el("button", { type: "button", "data-action": "recall", onclick: async () => {
      const r = await attempt(`Recalling ${s.name}`, () => call("POST", `/scenes/${seg(s.id)}/recall`));
      if (r) toast(r.failed ? `${s.name}: ${r.failed} step(s) failed` : `${s.name} recalled`, r.failed ? "error" : "info");
      renderAutomations();
    } }, "Recall"));
}

function automationRow(a, last) {
  const id = a.automation.id;
  const enabled = a.state === "enabled";
  const mayRun = isAdmin() || hasManual(a);
  return el("tr", { "data-automation": id },
    el("td", {}, el("strong", { text: a.automation.name }), el("br"), el("code", { text: id })),
    el("td", {}, el("span", { class: `state ${enabled ? "ok" : "warn"}`, "data-state": a.state, text: a.state + (a.suspendedReason ? ` (${a.suspendedReason})` : "") })),
    el("td", { text: a.source === "config" ? (a.configRef || "hearth.yaml") : "API" }),
    el("td", { class: `last ${outcomeClass[last && last.outcome] || ""}`, "data-outcome": last ? last.outcome : "", text: describeRun(last) }),
    el("td", {},
      isAdmin() ? el("button", { type: "button", "data-action": enabled ? "disable" : "enable", onclick: async () => {
        await attempt(enabled ? "Disabling" : "Enabling", () => call("POST", `/automations/${seg(id)}/${enabled ? "disable" : "enable"}`));
        renderAutomations();
      } }, enabled ? "Disable" : "Enable") : null, " ",
      mayRun ? el("button", { type: "button", "data-action": "run", disabled: !enabled, onclick: async () => {
        const r = await attempt(`Running ${a.automation.name}`, () => call("POST", `/automations/${seg(id)}/run`));
        if (r) toast(`${a.automation.name}: started`);
        // The run finishes on its own; show its trace once it has.
        setTimeout(renderAutomations, 300);
      } }, "Run") : null));
}

export async function renderAutomations() {
  const [scenes, automations] = await Promise.all([
    attempt("Loading scenes", () => call("GET", "/scenes")),
    attempt("Loading automations", () => call("GET", "/automations")),
  ]);
  const list = automations || [];
  const runs = await Promise.all(list.map((a) => call("GET", `/automations/${seg(a.automation.id)}/runs`).catch(() => [])));
  $("#automations-body").replaceChildren(
    el("h3", { text: "Scenes" }),
    (scenes || []).length ? el("ul", { class: "scenes" }, scenes.map(sceneRow)) : el("p", { class: "hint", text: "No scenes yet (hearth.yaml scenes:, or POST /api/v1/scenes)." }),
    el("h3", { text: "Automations" }),
    list.length
      ? el("table", { class: "grid" },
        el("thead", {}, el("tr", {}, ["Automation", "State", "Defined in", "Last run", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, list.map((a, i) => automationRow(a, (runs[i] || [])[0]))))
      : el("p", { class: "hint", text: "No automations yet (hearth.yaml automations:, or POST /api/v1/automations)." }),
    el("button", { type: "button", onclick: renderAutomations }, "Refresh"));
}
