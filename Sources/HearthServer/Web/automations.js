// The scenes and automations view: every scene with Recall (members too) and whether it is
// active; every automation with its state, Enable/Disable (admins), Run (admins; members when
// it has a manual starter) and its last run or near-miss; per automation the runs timeline
// (live over the `automationRuns` subscription) with a "Why didn't it run?" panel; for admins
// the "When / Only if / Do" editor fed by /candidates, validating on every edit, with Test
// (a dry run of the draft) and a JSON tab for what the form does not express.
import { state, el, call, attempt, isAdmin, toast, seg, hooks, $ } from "/web/core.js";
import {
  issuesByField, issueFromRefusal, parseValue, formatValue, kindOf, conditionRows, conditionsFrom, conditionRowPath,
  mergeRun, causeText, stepText, whyNot,
} from "/web/authoring.js";

const outcomeClass = { completed: "ok", running: "", simulated: "", conditionFailed: "warn", skipped: "warn", suppressed: "warn",
  stopped: "warn", failed: "bad", dropped: "bad", interrupted: "bad", abandoned: "bad" };

/// One line for a trace: outcome, why, and what started it.
export function describeRun(run) {
  if (!run) return "never ran";
  const why = run.reason ? ` — ${run.reason}` : "";
  return `${run.outcome}${why} (${run.cause && run.cause.description ? run.cause.description : "no cause"})`;
}

const hasManual = (a) => (a.automation.starters || []).some((s) => "manual" in s);
const when = (iso) => { const d = new Date(iso); return Number.isNaN(d.getTime()) ? "" : d.toLocaleString(); };

// What the view keeps between renders: the list, the open runs panel, the editor.
const view = { entries: [], scenes: [], runs: new Map(), selected: null, refreshTimer: null };

function containers() {
  const body = $("#automations-body");
  if (!$("#automations-list", body)) {
    body.replaceChildren(
      el("div", { id: "automations-list" }),
      el("section", { id: "automation-editor", class: "card editor", hidden: true }),
      el("section", { id: "automation-runs", class: "card", hidden: true }));
  }
  return body;
}

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
  return el("tr", { "data-automation": id, class: view.selected === id ? "selected" : null },
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
      } }, "Run") : null, " ",
      el("button", { type: "button", "data-action": "runs", onclick: () => openRuns(id) }, "Runs"), " ",
      isAdmin() ? el("button", { type: "button", "data-action": "edit", onclick: () => openEditor(a) }, "Edit") : null));
}

export async function renderAutomations() {
  containers();
  const [scenes, automations] = await Promise.all([
    attempt("Loading scenes", () => call("GET", "/scenes")),
    attempt("Loading automations", () => call("GET", "/automations")),
  ]);
  const list = automations || [];
  const runs = await Promise.all(list.map((a) => call("GET", `/automations/${seg(a.automation.id)}/runs`).catch(() => [])));
  view.entries = list;
  view.scenes = scenes || [];
  list.forEach((a, i) => view.runs.set(a.automation.id, runs[i] || []));
  drawList();
}

/// The scenes and the automations table from what the view holds (no request).
function drawList() {
  const scenes = view.scenes;
  const list = view.entries;
  const runs = list.map((a) => view.runs.get(a.automation.id) || []);
  $("#automations-list").replaceChildren(
    el("h3", { text: "Scenes" }),
    (scenes || []).length ? el("ul", { class: "scenes" }, scenes.map(sceneRow)) : el("p", { class: "hint", text: "No scenes yet (hearth.yaml scenes:, or POST /api/v1/scenes)." }),
    el("h3", { text: "Automations" }),
    list.length
      ? el("table", { class: "grid" },
        el("thead", {}, el("tr", {}, ["Automation", "State", "Defined in", "Last run", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, list.map((a, i) => automationRow(a, (runs[i] || [])[0]))))
      : el("p", { class: "hint", text: "No automations yet (hearth.yaml automations:, or POST /api/v1/automations)." }),
    el("div", { class: "actions" },
      el("button", { type: "button", "data-action": "refresh", onclick: renderAutomations }, "Refresh"), " ",
      isAdmin() ? el("button", { type: "button", "data-action": "new-automation", onclick: () => openEditor(null) }, "New automation") : null));
  if (view.selected) drawRuns();
}

/// Forgets what the view held (called at sign-out: the next person sees none of it).
export function resetAutomations() {
  clearTimeout(view.refreshTimer);
  clearTimeout(ed.timer);
  Object.assign(view, { entries: [], scenes: [], runs: new Map(), selected: null, refreshTimer: null });
  Object.assign(ed, { draft: null, entry: null, tab: "form", candidates: new Map(), seq: ed.seq + 1, timer: null, issues: [], scenes: [] });
  $("#automations-body").replaceChildren();
}

// ---------- runs timeline and "Why didn't it run?" ----------

async function openRuns(id) {
  view.selected = id;
  const runs = await attempt("Loading runs", () => call("GET", `/automations/${seg(id)}/runs`));
  if (runs) view.runs.set(id, runs);
  drawRuns();
  for (const tr of document.querySelectorAll("#automations-list tr[data-automation]")) tr.classList.toggle("selected", tr.dataset.automation === id);
  $("#automation-runs").scrollIntoView({ block: "nearest" });
}

function runItem(r) {
  const failed = (r.conditions || []).some((c) => !c.holds);
  return el("li", { class: `run ${outcomeClass[r.outcome] || ""}`, "data-run": r.id, "data-outcome": r.outcome },
    el("div", { class: "run-head" },
      el("time", { datetime: r.started, text: when(r.started) }), " ",
      el("strong", { class: "outcome", text: r.outcome }), " ",
      el("span", { class: "cause", text: causeText(r) }),
      typeof r.latencyMicroseconds === "number" ? el("span", { class: "hint", text: ` · ${(r.latencyMicroseconds / 1000).toFixed(1)} ms to the first command` }) : null),
    r.reason ? el("div", { class: "reason", text: r.reason }) : null,
    (r.conditions || []).length ? el("ul", { class: `conditions${failed ? " failed" : ""}` }, r.conditions.map((c) =>
      el("li", { "data-holds": String(c.holds), class: c.holds ? "ok" : "bad" }, `${c.holds ? "✓" : "✗"} ${c.path}: saw ${c.saw}`))) : null,
    (r.steps || []).length ? el("ol", { class: "steps" }, r.steps.map((s) =>
      el("li", { "data-result": s.result, class: s.result === "ok" || s.result.startsWith("would") ? "" : "bad" }, stepText(s)))) : null);
}

function drawRuns() {
  const box = $("#automation-runs");
  const id = view.selected;
  if (!box || !id) return;
  const entry = view.entries.find((e) => e.automation.id === id);
  const runs = view.runs.get(id) || [];
  const why = whyNot(entry, runs);
  box.hidden = false;
  box.dataset.automation = id;
  box.replaceChildren(
    el("h3", {}, `Runs of ${entry ? entry.automation.name : id} `, el("span", { class: "hint", text: "(newest first, live)" }), " ",
      el("button", { type: "button", class: "small", onclick: () => { view.selected = null; box.hidden = true; } }, "Close")),
    el("div", { class: "why", id: "why-not", "aria-live": "polite" },
      el("h4", { text: "Why didn't it run?" }),
      why.length ? el("ul", {}, why.map((w) => el("li", { "data-why": w.kind, text: w.text })))
        : el("p", { class: "hint", text: "It ran when last started; nothing kept it from running." })),
    runs.length ? el("ol", { class: "timeline feed" }, runs.map(runItem)) : el("p", { class: "hint", text: "No runs yet." }));
}

// A trace arrived over the socket: merged into its automation's timeline; the list's last-run
// column follows once the run has ended (drawn from what the view holds, no request).
hooks.run = (run) => {
  if (!run || !run.automation) return;
  view.runs.set(run.automation, mergeRun(view.runs.get(run.automation) || [], run));
  if ($("#automations").hidden) return;
  if (view.selected === run.automation) drawRuns();
  if (run.outcome !== "running" && view.entries.some((e) => e.automation.id === run.automation)) {
    clearTimeout(view.refreshTimer);
    view.refreshTimer = setTimeout(drawList, 100);
  }
};

// ---------- the editor ----------

const ed = { draft: null, entry: null, tab: "form", candidates: new Map(), seq: 0, timer: null, issues: [], scenes: [] };
const blank = () => ({ id: "", name: "", mode: "single", starters: [], actions: [] });
const devices = () => [...state.devices.values()].filter((d) => d.commissioning === "commissioned").sort((a, b) => a.name.localeCompare(b.name));

async function candidatesFor(device) {
  if (!device) return null;
  if (!ed.candidates.has(device)) {
    const c = await call("GET", `/candidates?device=${encodeURIComponent(device)}`).catch(() => null);
    if (!c) return null;
    ed.candidates.set(device, c);
  }
  return ed.candidates.get(device);
}

async function openEditor(entry) {
  ed.entry = entry;
  ed.draft = entry ? structuredClone(entry.automation) : blank();
  ed.tab = "form";
  ed.issues = [];
  ed.scenes = (await call("GET", "/scenes").catch(() => [])) || [];
  await preload();
  drawEditor();
  $("#automation-editor").scrollIntoView({ block: "start" });
  if (entry) { openRuns(entry.automation.id); validateSoon(0); }
}

/// The candidates of every device the draft names, before drawing.
async function preload() {
  const names = new Set();
  const visit = (node) => {
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node.device === "string") names.add(node.device);
    Object.values(node).forEach(visit);
  };
  visit(ed.draft);
  await Promise.all([...names].map(candidatesFor));
}

const changed = () => validateSoon();
function validateSoon(delay = 300) {
  clearTimeout(ed.timer);
  ed.timer = setTimeout(validate, delay);
}

async function validate() {
  const mine = ++ed.seq;
  let issues;
  try {
    issues = (await call("POST", "/automations/validate", ed.draft)).issues;
  } catch (e) {
    issues = e.issues && e.issues.length ? e.issues : [issueFromRefusal(e.message)];
  }
  if (mine !== ed.seq) return;
  ed.issues = issues;
  showIssues();
}

function issueNode(i) {
  return el("div", { class: `issue ${i.severity === "warning" ? "warning" : "error"}`, "data-issue": i.path, "data-code": i.code },
    el("strong", { text: i.severity === "warning" ? "Warning: " : "" }), i.message,
    i.suggestion ? el("span", { class: "suggestion-text", text: ` — try ${i.suggestion}` }) : null);
}

function showIssues() {
  const form = $("#automation-editor");
  if (!form) return;
  for (const n of form.querySelectorAll(".issue")) n.remove();
  const fields = [...form.querySelectorAll("[data-path]")];
  const { placed, unplaced } = issuesByField(fields.map((f) => f.dataset.path), ed.issues);
  for (const [path, list] of placed) {
    const field = fields.find((f) => f.dataset.path === path);
    const anchor = field.closest("label, .row") || field;
    anchor.after(...list.map(issueNode));
  }
  const general = $("#editor-issues");
  general.replaceChildren(...unplaced.map(issueNode));
  const errors = ed.issues.filter((i) => i.severity !== "warning").length;
  const status = $("#editor-status");
  status.textContent = errors ? `${errors} problem(s) to fix before saving` : ed.issues.length ? "Valid (with warnings)" : "Valid";
  status.className = errors ? "status bad" : "status ok";
  status.dataset.valid = String(!errors);
}

/// An input bound to `parent[key][field]`; `parent[key]` exists only while it holds something
/// (a command's `args`, an event's `where`).
function nestedInput(parent, key, field, path, opts) {
  const holder = parent[key] || {};
  return input(holder, field, path, { ...opts, after: () => { if (Object.keys(holder).length) parent[key] = holder; else delete parent[key]; } });
}

/// An input bound to `obj[key]`: typing updates the draft and validates (no redraw, so focus stays).
function input(obj, key, path, { label, placeholder, parse = (v) => (v.trim() === "" ? undefined : v.trim()), value, width, after } = {}) {
  const i = el("input", { "data-path": path, "data-field": key, value: value ?? formatValue(obj[key]), placeholder: placeholder || "", size: width || null, "aria-label": label || key });
  i.addEventListener("input", () => {
    const v = parse(i.value);
    if (v === undefined) delete obj[key]; else obj[key] = v;
    if (after) after();
    changed();
  });
  return label ? el("label", {}, `${label} `, i) : i;
}

function select(options, selected, onchange, attrs = {}) {
  const s = el("select", attrs, options.map(([v, text]) => el("option", { value: v, selected: v === selected }, text)));
  s.addEventListener("change", () => onchange(s.value));
  return s;
}

const deviceOptions = () => [["", "— device —"], ...devices().map((d) => [d.id, `${d.name} (${d.id})`])];
const candKey = (c) => `${c.kind}|${c.trait || ""}|${c.name || ""}`;
const candLabel = (c) => c.kind === "connectivity" ? "goes offline / online" : `${c.trait}: ${c.name}${c.kind === "event" ? " (event)" : ""}` +
  (c.minimum !== undefined || c.maximum !== undefined ? ` [${c.minimum ?? ""}…${c.maximum ?? ""}${c.unit ? ` ${c.unit}` : ""}]` : c.unit ? ` [${c.unit}]` : "");
const sameType = (list, c) => list.filter((x) => x.kind === c.kind && x.trait === c.trait && x.name === c.name).length > 1;

/// The device part of a row: device select, then the candidate select (what it can start, test, do).
function deviceRow(path, device, list, currentKey, onDevice, onCandidate) {
  const opts = [["", "— choose —"], ...(list || []).map((c) => [candKey(c), candLabel(c)])];
  if (currentKey && !opts.some(([k]) => k === currentKey)) opts.push([currentKey, `${currentKey.split("|").slice(1).join(": ")} (as written)`]);
  return [
    select(deviceOptions(), device || "", onDevice, { "data-field": "device", "data-path": `${path}.device`, "aria-label": "Device" }), " ",
    device ? select(opts, currentKey || "", onCandidate, { "data-field": "candidate", "aria-label": "What" }) : null];
}

// ----- When -----
const starterKinds = [["device", "A device"], ["time", "A time of day"], ["sun", "Sunrise / sunset"], ["manual", "Run by hand"], ["startup", "hearthd starts"]];
const starterKindOf = (s) => ({ attribute: "device", event: "device", connectivity: "device", time: "time", sun: "sun", manual: "manual", startup: "startup" })[kindOf(s)] || "json";

function newStarter(kind) {
  return { device: { attribute: { device: "", trait: "", attribute: "" } }, time: { time: { at: "07:00" } }, sun: { sun: { event: "sunset" } },
    manual: { manual: {} }, startup: { startup: {} } }[kind];
}

function starterRow(s, i) {
  const path = `starters[${i}]`;
  const kind = starterKindOf(s);
  const k = kindOf(s);
  const body = s[k] || {};
  const parts = [];
  if (kind === "device") {
    const list = ed.candidates.get(body.device)?.starters;
    const key = k === "connectivity" ? "connectivity||" : body.trait ? `${k}|${body.trait}|${k === "event" ? body.event : body.attribute}` : "";
    parts.push(...deviceRow(`${path}.${k}`, body.device, list, key,
      async (dev) => { await candidatesFor(dev); ed.draft.starters[i] = { ...(s.id ? { id: s.id } : {}), attribute: { device: dev, trait: "", attribute: "" } }; redraw(); },
      (ck) => {
        const c = (list || []).find((x) => candKey(x) === ck);
        if (!c) return;
        const base = { device: body.device, ...(sameType(list, c) ? { type: c.type } : {}) };
        const id = s.id ? { id: s.id } : {};
        ed.draft.starters[i] = c.kind === "connectivity" ? { ...id, connectivity: { device: body.device, to: "offline" } }
          : c.kind === "event" ? { ...id, event: { ...base, trait: c.trait, event: c.name } }
            : { ...id, attribute: { ...base, trait: c.trait, attribute: c.name, changes: true } };
        redraw();
      }));
    if (k === "attribute" && body.trait) {
      const op = ["to", "above", "below", "from"].find((o) => o in body) || "changes";
      parts.push(" ", select([["changes", "changes"], ["to", "becomes"], ["from", "stops being"], ["above", "rises above"], ["below", "falls below"]], op, (o) => {
        const v = body[op];
        for (const x of ["changes", "to", "from", "above", "below", "hysteresis"]) delete body[x];
        if (o === "changes") body.changes = true; else body[o] = typeof v === "boolean" && (o === "above" || o === "below") ? 0 : v ?? (o === "above" || o === "below" ? 0 : true);
        redraw();
      }, { "data-field": "op", "aria-label": "How" }));
      if (op !== "changes") parts.push(" ", input(body, op, `${path}.attribute.${op}`, { label: "value", parse: parseValue, width: 8 }));
      if (op === "above" || op === "below") parts.push(" ", input(body, "hysteresis", `${path}.attribute.hysteresis`, { label: "hysteresis", parse: parseValue, width: 6 }));
      parts.push(" ", input(body, "for", `${path}.attribute.for`, { label: "for", placeholder: "10m", width: 6 }));
    }
    if (k === "event" && body.trait) {
      const c = (list || []).find((x) => x.kind === "event" && x.trait === body.trait && x.name === body.event);
      for (const f of (c && c.fields) || []) {
        parts.push(" ", nestedInput(body, "where", f, `${path}.event.where.${f}`, { label: `${f} =`, parse: parseValue, width: 5, placeholder: "any" }));
      }
    }
    if (k === "connectivity") {
      parts.push(" ", select([["offline", "goes offline"], ["online", "comes online"]], body.to, (v) => { body.to = v; changed(); }, { "data-field": "to", "data-path": `${path}.connectivity.to` }),
        " ", input(body, "for", `${path}.connectivity.for`, { label: "for", placeholder: "10m", width: 6 }));
    }
  } else if (kind === "time") {
    parts.push(input(body, "at", `${path}.time.at`, { label: "at", placeholder: "06:30", width: 6 }), " ",
      input(body, "every", `${path}.time.every`, { label: "or every", placeholder: "15m", width: 6 }), " ",
      input(body, "days", `${path}.time.days`, { label: "days", placeholder: "mon,tue (all)", width: 14, value: (body.days || []).join(","),
        parse: (v) => (v.trim() ? v.split(",").map((x) => x.trim()).filter(Boolean) : undefined) }));
  } else if (kind === "sun") {
    parts.push(select(["sunrise", "sunset", "dawn", "dusk", "solarNoon"].map((e) => [e, e]), body.event, (v) => { body.event = v; changed(); },
      { "data-field": "event", "data-path": `${path}.sun.event` }), " ",
    input(body, "offset", `${path}.sun.offset`, { label: "offset", placeholder: "-30m", width: 6 }));
  } else if (kind === "startup") {
    parts.push(input(body, "after", `${path}.startup.after`, { label: "after", placeholder: "30s", width: 6 }));
  } else if (kind === "json") {
    parts.push(el("code", { text: JSON.stringify(s) }), el("span", { class: "hint", text: " (edit in the JSON tab)" }));
  }
  return rowOf("starters", i, path, kind, starterKinds, (nk) => { ed.draft.starters[i] = { ...(s.id ? { id: s.id } : {}), ...newStarter(nk) }; }, parts,
    input(s, "id", `${path}.id`, { label: "id", placeholder: "optional", width: 8 }));
}

// ----- Only if -----
const conditionKinds = [["device", "A device's state"], ["time", "Time of day"], ["starter", "Which starter fired"], ["scene", "A scene is active"]];
const conditionKindOf = (c) => ({ attribute: "device", connectivity: "device", time: "time", starter: "starter", scene: "scene" })[kindOf(c)] || "json";
const newCondition = (kind) => ({ device: { attribute: { device: "", trait: "", attribute: "" } }, time: { time: { after: "08:00", before: "22:00" } },
  starter: { starter: "" }, scene: { scene: "" } })[kind];

function conditionRow(c, i, rows) {
  const path = conditionRowPath(rows.length, i);
  const kind = conditionKindOf(c);
  const k = kindOf(c);
  const parts = [];
  const put = (next) => { rows[i] = next; ed.draft.conditions = conditionsFrom(rows); if (ed.draft.conditions === undefined) delete ed.draft.conditions; };
  if (kind === "device") {
    const body = c[k];
    const list = ed.candidates.get(body.device)?.conditions;
    const key = k === "connectivity" ? "connectivity||" : body.trait ? `attribute|${body.trait}|${body.attribute}` : "";
    parts.push(...deviceRow(`${path}.${k}`, body.device, list, key,
      async (dev) => { await candidatesFor(dev); put({ attribute: { device: dev, trait: "", attribute: "" } }); redraw(); },
      (ck) => {
        const cand = (list || []).find((x) => candKey(x) === ck);
        if (!cand) return;
        put(cand.kind === "connectivity" ? { connectivity: { device: body.device, is: "online" } }
          : { attribute: { device: body.device, ...(sameType(list, cand) ? { type: cand.type } : {}), trait: cand.trait, attribute: cand.name, equals: true } });
        redraw();
      }));
    if (k === "attribute" && body.trait) {
      const op = ["above", "below"].find((o) => o in body) || "equals";
      parts.push(" ", select([["equals", "is"], ["above", "is above"], ["below", "is below"]], op, (o) => {
        const v = body[op];
        for (const x of ["equals", "above", "below", "in"]) delete body[x];
        body[o] = o === "equals" ? v ?? true : typeof v === "number" ? v : 0;
        redraw();
      }, { "data-field": "op", "aria-label": "How" }), " ", input(body, op, `${path}.attribute.${op}`, { label: "value", parse: parseValue, width: 8 }));
    }
    if (k === "connectivity") {
      parts.push(" ", select(["online", "offline", "partiallyOnline", "unknown"].map((v) => [v, `is ${v}`]), body.is, (v) => { body.is = v; changed(); },
        { "data-field": "is", "data-path": `${path}.connectivity.is` }));
    }
  } else if (kind === "time") {
    const body = c.time;
    parts.push(input(body, "after", `${path}.time.after`, { label: "after", placeholder: "22:00", width: 6 }), " ",
      input(body, "before", `${path}.time.before`, { label: "before", placeholder: "06:00", width: 6 }), " ",
      input(body, "days", `${path}.time.days`, { label: "days", placeholder: "sat,sun (all)", width: 14, value: (body.days || []).join(","),
        parse: (v) => (v.trim() ? v.split(",").map((x) => x.trim()).filter(Boolean) : undefined) }));
  } else if (kind === "starter") {
    const ids = ed.draft.starters.map((s) => s.id).filter(Boolean);
    parts.push(select([["", "— starter id —"], ...ids.map((x) => [x, x])], c.starter, (v) => { put({ starter: v }); changed(); },
      { "data-field": "starter", "data-path": `${path}.starter` }), ids.length ? null : el("span", { class: "hint", text: " (give a starter an id first)" }));
  } else if (kind === "scene") {
    parts.push(select([["", "— scene —"], ...ed.scenes.map((s) => [s.id, s.name])], c.scene, (v) => { put({ scene: v }); changed(); },
      { "data-field": "scene", "data-path": `${path}.scene` }));
  } else {
    parts.push(el("code", { text: JSON.stringify(c) }), el("span", { class: "hint", text: " (edit in the JSON tab)" }));
  }
  return rowOf("conditions", i, path, kind, conditionKinds, (nk) => put(newCondition(nk)), parts, null, rows);
}

// ----- Do -----
const actionKinds = [["device", "Control a device"], ["delay", "Wait"], ["scene", "Recall a scene"], ["notify", "Notify"], ["log", "Write to the log"],
  ["run", "Run another automation"], ["stop", "Stop"]];
const actionKindOf = (a) => ({ command: "device", write: "device", delay: "delay", scene: "scene", notify: "notify", log: "log", run: "run", stop: "stop" })[kindOf(a)] || "json";
const newAction = (kind) => ({ device: { command: { device: "", trait: "", command: "" } }, delay: { delay: "1m" }, scene: { scene: "" },
  notify: { notify: "" }, log: { log: "" }, run: { run: "" }, stop: { stop: { reason: "" } } })[kind];

function actionRow(a, i) {
  const path = `actions[${i}]`;
  const kind = actionKindOf(a);
  const k = kindOf(a);
  const parts = [];
  if (kind === "device") {
    const body = a[k];
    const list = ed.candidates.get(body.device)?.actions;
    const key = body.trait ? `${k}|${body.trait}|${k === "command" ? body.command : body.attribute}` : "";
    parts.push(...deviceRow(`${path}.${k}`, body.device, list, key,
      async (dev) => { await candidatesFor(dev); ed.draft.actions[i] = { command: { device: dev, trait: "", command: "" } }; redraw(); },
      (ck) => {
        const c = (list || []).find((x) => candKey(x) === ck);
        if (!c) return;
        const base = { device: body.device, ...(sameType(list, c) ? { type: c.type } : {}), trait: c.trait };
        ed.draft.actions[i] = c.kind === "write" ? { write: { ...base, attribute: c.name, value: c.minimum ?? 0 } } : { command: { ...base, command: c.name } };
        redraw();
      }));
    if (k === "command" && body.command) {
      const c = (list || []).find((x) => x.kind === "command" && x.trait === body.trait && x.name === body.command);
      for (const f of (c && c.fields) || []) {
        parts.push(" ", nestedInput(body, "args", f, `${path}.command.args.${f}`, { label: f, parse: parseValue, width: 6 }));
      }
    }
    if (k === "write" && body.attribute) parts.push(" ", input(body, "value", `${path}.write.value`, { label: "to", parse: parseValue, width: 8 }));
  } else if (kind === "delay") {
    parts.push(input(a, "delay", `${path}.delay`, { label: "for", placeholder: "5m", width: 6 }));
  } else if (kind === "scene") {
    parts.push(select([["", "— scene —"], ...ed.scenes.map((s) => [s.id, s.name])], a.scene, (v) => { a.scene = v; changed(); },
      { "data-field": "scene", "data-path": `${path}.scene` }));
  } else if (kind === "notify" || kind === "log") {
    parts.push(input(a, kind, `${path}.${kind}`, { label: "text", width: 30 }));
  } else if (kind === "run") {
    parts.push(select([["", "— automation —"], ...view.entries.map((e) => [e.automation.id, e.automation.name])], a.run, (v) => { a.run = v; changed(); },
      { "data-field": "run", "data-path": `${path}.run` }));
  } else if (kind === "stop") {
    if (typeof a.stop !== "object" || a.stop === null) a.stop = { reason: a.stop || "" };
    parts.push(input(a.stop, "reason", `${path}.stop.reason`, { label: "reason", width: 20 }));
  } else {
    parts.push(el("code", { text: JSON.stringify(a) }), el("span", { class: "hint", text: " (edit in the JSON tab)" }));
  }
  return rowOf("actions", i, path, kind, actionKinds, (nk) => { ed.draft.actions[i] = newAction(nk); }, parts);
}

/// One row: its kind (changing it replaces the row), the parts, and move/remove buttons.
function rowOf(section, i, path, kind, kinds, replace, parts, extra = null, rows = null) {
  const list = rows || ed.draft[section];
  const options = kind === "json" ? [["json", "(as in JSON)"], ...kinds] : kinds;
  const commit = () => { if (rows) { ed.draft.conditions = conditionsFrom(rows); if (ed.draft.conditions === undefined) delete ed.draft.conditions; } redraw(); };
  return el("li", { class: "row", "data-row": path, "data-path": path },
    select(options, kind, (nk) => { replace(nk); redraw(); }, { "data-field": "kind", "aria-label": "Kind" }), " ",
    ...parts, extra ? [" ", extra] : [], " ",
    el("span", { class: "row-tools" },
      i > 0 ? el("button", { type: "button", class: "small", title: "Move up", "aria-label": "Move up", onclick: () => { [list[i - 1], list[i]] = [list[i], list[i - 1]]; commit(); } }, "↑") : null,
      el("button", { type: "button", class: "small danger", "data-action": "remove", onclick: () => { list.splice(i, 1); commit(); } }, "Remove")));
}

function redraw() {
  drawEditor();
  changed();
}

function drawEditor() {
  const box = $("#automation-editor");
  const d = ed.draft;
  const saved = !!ed.entry;
  const readOnly = saved && ed.entry.source === "config";
  const tabs = el("div", { class: "tabs", role: "tablist" },
    ["form", "json"].map((t) => el("button", { type: "button", role: "tab", "aria-selected": String(ed.tab === t), "data-tab": t,
      onclick: () => { ed.tab = t; preload().then(drawEditor); } }, t === "form" ? "Form" : "JSON")));
  let content;
  if (ed.tab === "json") {
    const area = el("textarea", { "data-path": "", id: "automation-json", rows: 18, cols: 80, spellcheck: "false", "aria-label": "The automation as JSON" });
    area.value = JSON.stringify(d, null, 2);
    const note = el("p", { class: "error", id: "json-error" });
    area.addEventListener("input", () => {
      try {
        const parsed = JSON.parse(area.value);
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("an automation is a JSON object");
        ed.draft = parsed;
        note.textContent = "";
        changed();
      } catch (e) {
        note.textContent = `Not JSON yet: ${e.message}`;
      }
    });
    content = [el("p", { class: "hint", text: "Everything the form cannot express (any/not, waitFor, if/else, parallel, publish, webhook, modes) — the form shows the rest again when you switch back." }), area, note];
  } else {
    const cond = conditionRows(d.conditions);
    const add = (section, make, label) => el("button", { type: "button", class: "small", "data-action": `add-${section}`, onclick: () => {
      if (section === "conditions") { const rows = conditionRows(d.conditions).rows; rows.push(make()); d.conditions = conditionsFrom(rows); } else d[section].push(make());
      redraw();
    } }, label);
    content = [
      el("div", { class: "row" },
        input(d, "id", "id", { label: "ID", placeholder: "hall-light", width: 16, value: d.id }), " ",
        input(d, "name", "name", { label: "Name", placeholder: "Hall light", width: 20, value: d.name }), " ",
        el("label", {}, "Mode ", select(["single", "restart", "queued", "parallel"].map((m) => [m, m]), d.mode || "single", (m) => { d.mode = m; changed(); },
          { "data-field": "mode", "data-path": "mode" }))),
      el("h4", { text: "When" }),
      el("ol", { class: "rows", "data-section": "starters", "data-path": "starters" }, d.starters.map(starterRow)),
      add("starters", () => newStarter("device"), "+ Starter"),
      el("h4", { text: "Only if" }),
      cond.expressible
        ? [el("ol", { class: "rows", "data-section": "conditions", "data-path": "conditions" }, cond.rows.map((c, i) => conditionRow(c, i, cond.rows))),
          add("conditions", () => newCondition("device"), "+ Condition")]
        : el("p", { class: "hint", "data-path": "conditions" }, "These conditions use any/not or nesting: edit them in the JSON tab. ", el("code", { text: JSON.stringify(d.conditions) })),
      el("h4", { text: "Do" }),
      el("ol", { class: "rows", "data-section": "actions", "data-path": "actions" }, d.actions.map(actionRow)),
      add("actions", () => newAction("device"), "+ Action"),
    ];
  }
  const starterChoice = el("select", { id: "test-starter", "aria-label": "Test as if this starter fired" },
    el("option", { value: "" }, "its first starter"), d.starters.filter((s) => s.id).map((s) => el("option", { value: s.id }, `starter ${s.id}`)));
  box.hidden = false;
  box.replaceChildren(
    el("h3", {}, saved ? `Edit ${ed.entry.automation.name}` : "New automation", " ",
      saved ? el("span", { class: "hint", text: `revision ${ed.entry.revision}` + (readOnly ? ` · defined in ${ed.entry.configRef || "hearth.yaml"}: edit it there` : "") }) : null),
    tabs,
    el("div", { id: "editor-issues", "aria-live": "polite" }),
    ...content.flat(),
    el("div", { class: "editor-actions" },
      el("span", { id: "editor-status", class: "status", "aria-live": "polite" }), " ",
      el("button", { type: "button", "data-action": "test" }, "Test"), " ", starterChoice, " ",
      el("button", { type: "submit", "data-action": "save", disabled: readOnly, onclick: save }, saved ? "Save changes" : "Save"), " ",
      saved && !readOnly ? el("button", { type: "button", class: "danger", "data-action": "delete", onclick: remove }, "Delete") : null, " ",
      el("button", { type: "button", "data-action": "cancel", onclick: () => { box.hidden = true; ed.draft = null; } }, "Close")),
    el("div", { id: "editor-conflict", class: "conflict", hidden: true }),
    el("div", { id: "automation-test", "aria-live": "polite" }));
  box.querySelector('[data-action="test"]').addEventListener("click", () => test(starterChoice.value));
  showIssues();
}

async function test(starter) {
  const out = $("#automation-test");
  out.replaceChildren(el("p", { class: "hint", text: "Testing…" }));
  try {
    const trace = await call("POST", "/automations/simulate", { automation: ed.draft, ...(starter ? { starter } : {}) });
    const sends = (trace.steps || []).filter((s) => s.result === "wouldSend");
    out.replaceChildren(el("h4", { text: "Test (nothing was sent)" }),
      el("p", { class: "hint", text: trace.reason ? trace.reason : sends.length ? `It would send ${sends.length} command(s):` : "It would send nothing." }),
      el("ol", { class: "timeline feed" }, runItem(trace)));
  } catch (e) {
    if (e.issues && e.issues.length) { ed.issues = e.issues; showIssues(); }
    out.replaceChildren(el("p", { class: "error", text: `Test refused: ${e.message}` }));
  }
}

async function save() {
  const conflict = $("#editor-conflict");
  conflict.hidden = true;
  const saved = !!ed.entry;
  try {
    const entry = saved
      ? await call("PUT", `/automations/${seg(ed.entry.automation.id)}`, ed.draft, { "If-Match": String(ed.entry.revision) })
      : await call("POST", "/automations", ed.draft);
    ed.entry = entry;
    ed.draft = structuredClone(entry.automation);
    toast(`${entry.automation.name} saved (revision ${entry.revision}).`, "ok");
    drawEditor();
    await renderAutomations();
    openRuns(entry.automation.id);
  } catch (e) {
    if (e.status === 409 && saved) {
      conflict.hidden = false;
      conflict.replaceChildren(
        el("p", { text: `Someone else changed this automation since you opened it (you had revision ${ed.entry.revision}); your edits were not saved.` }),
        el("button", { type: "button", "data-action": "reload", onclick: async () => {
          const fresh = await attempt("Loading the automation", () => call("GET", `/automations/${seg(ed.entry.automation.id)}`));
          if (fresh) openEditor(fresh);
        } }, "Load their version"), " ",
        el("button", { type: "button", "data-action": "overwrite", onclick: async () => {
          const fresh = await attempt("Loading the automation", () => call("GET", `/automations/${seg(ed.entry.automation.id)}`));
          if (fresh) { ed.entry = fresh; save(); }
        } }, "Save mine over theirs"));
      return;
    }
    if (e.issues && e.issues.length) { ed.issues = e.issues; showIssues(); }
    toast(e.code === "permissionDenied" ? `Not allowed: ${e.message}` : `Saving failed: ${e.message}`, "error");
  }
}

async function remove() {
  if (!confirm(`Delete ${ed.entry.automation.name}?`)) return;
  const id = ed.entry.automation.id;
  const r = await attempt("Deleting", () => call("DELETE", `/automations/${seg(id)}`, undefined, { "If-Match": String(ed.entry.revision) }));
  if (r === undefined) return;
  toast(`${ed.entry.automation.name} deleted.`, "ok");
  $("#automation-editor").hidden = true;
  if (view.selected === id) { view.selected = null; $("#automation-runs").hidden = true; }
  renderAutomations();
}
