// The automation editor's and the runs timeline's pure helpers (no DOM): where a validation
// issue belongs in the form, values typed as text, the "Only if" rows, runs merged as they
// arrive, and why an automation did not run, in plain words. Tested by Tests/web/authoring.test.mjs.

/// Whether `path` is `prefix` or lies inside it (`actions[0]` holds `actions[0].command.device`,
/// not `actions[01]`).
export function pathWithin(path, prefix) {
  if (path === prefix) return true;
  if (!path.startsWith(prefix)) return false;
  const next = path[prefix.length];
  return next === "." || next === "[";
}

/// Places each issue at the form field whose path is the issue's or its closest parent's; the
/// rest (a path no field shows, or none) are `unplaced`.
export function issuesByField(fieldPaths, issues) {
  const placed = new Map();
  const unplaced = [];
  for (const issue of issues) {
    let best = null;
    for (const f of fieldPaths) {
      if (f && issue.path && pathWithin(issue.path, f) && (best === null || f.length > best.length)) best = f;
    }
    if (best === null) unplaced.push(issue);
    else {
      if (!placed.has(best)) placed.set(best, []);
      placed.get(best).push(issue);
    }
  }
  return { placed, unplaced };
}

/// A body that does not decode is refused as one message, `actions[1].delay: …` (HomeCore's
/// DecodingError.invalidArgument): its path and the rest, so it too lands at its field.
export function issueFromRefusal(message) {
  const m = /^([A-Za-z_][\w]*(?:\[\d+\]|\.[A-Za-z_]\w*)*): (.*)$/s.exec(message || "");
  return { severity: "error", code: "invalidArgument", path: m ? m[1] : "", message: m ? m[2] : message || "" };
}

/// A value typed in a field: `true`/`false`, a number, else the text; "" is no value.
export function parseValue(text) {
  const t = String(text ?? "").trim();
  if (t === "") return undefined;
  if (t === "true" || t === "on") return true;
  if (t === "false" || t === "off") return false;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return t;
}

export function formatValue(v) {
  if (v === undefined || v === null) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/// Which one key a starter, condition or action object has (besides a starter's `id`).
export function kindOf(node) {
  return Object.keys(node || {}).find((k) => k !== "id") || "";
}

const leafKinds = new Set(["attribute", "time", "starter", "scene", "connectivity"]);

/// The "Only if" conditions as rows the form edits: a single leaf, or `all` of leaves. Anything
/// else (`any`, `not`, nesting) is not expressible in the form (the JSON tab edits it).
export function conditionRows(conditions) {
  if (conditions === undefined || conditions === null) return { expressible: true, rows: [] };
  if (leafKinds.has(kindOf(conditions))) return { expressible: true, rows: [conditions] };
  if (Array.isArray(conditions.all) && conditions.all.every((c) => leafKinds.has(kindOf(c)))) return { expressible: true, rows: conditions.all.slice() };
  return { expressible: false, rows: [] };
}

/// The inverse of conditionRows: none, one leaf, or `all`.
export function conditionsFrom(rows) {
  if (rows.length === 0) return undefined;
  if (rows.length === 1) return rows[0];
  return { all: rows };
}

/// The path the validator gives row `i` of `count` condition rows.
export function conditionRowPath(count, i) {
  return count === 1 ? "conditions" : `conditions.all[${i}]`;
}

/// The newest traces first, `run` put in (replacing the one with its id), at most `limit`.
export function mergeRun(runs, run, limit = 50) {
  const out = runs.filter((r) => r.id !== run.id);
  out.push(run);
  out.sort((a, b) => String(b.started).localeCompare(String(a.started)));
  return out.slice(0, limit);
}

export const nearMiss = new Set(["conditionFailed", "skipped", "suppressed", "dropped"]);

const clock = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso || "") : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
};

/// What started a run, in words.
export function causeText(run) {
  const c = run.cause || {};
  let s = c.description || (c.starter ? `starter ${c.starter}` : "no cause recorded");
  if (s.includes("→")) return s;
  if (c.new && typeof c.new === "object" && !Array.isArray(c.new)) {
    // An event's fields.
    const fields = Object.entries(c.new).map(([k, v]) => `${k} ${formatValue(v)}`).join(", ");
    if (fields) s += ` (${fields})`;
  } else if (c.old !== undefined || c.new !== undefined) {
    s += ` (${c.old === undefined ? "–" : formatValue(c.old)} → ${c.new === undefined ? "–" : formatValue(c.new)})`;
  }
  return s;
}

/// One trace step in words: "would send gpio:lamp OnOff.On", "ok: … (12 ms)".
export function stepText(step) {
  const ms = typeof step.milliseconds === "number" ? ` (${step.milliseconds < 10 ? step.milliseconds.toFixed(1) : Math.round(step.milliseconds)} ms)` : "";
  const result = step.result === "wouldSend" ? "would send" : step.result === "wouldWait" ? "would wait" : step.result;
  return `${step.kind} ${step.detail} → ${result}${step.message ? `: ${step.message}` : ""}${ms}`;
}

/// Why an automation did not run (or is not running), newest first, in plain words: its state
/// (disabled, suspended, issues that keep it from loading), then the newest near-miss with the
/// condition that failed and the value it saw. Empty when the newest trace is a run.
export function whyNot(entry, runs) {
  const out = [];
  const a = entry && entry.automation ? entry.automation : {};
  const errors = (entry && entry.issues || []).filter((i) => i.severity !== "warning");
  if (entry && entry.state === "disabled") out.push({ kind: "disabled", text: "It is disabled: no starter starts it until an admin enables it." });
  if (entry && entry.state === "suspended") {
    const why = { loopDetected: "it started too often in a short time (a loop)", grantRevoked: "the app that owns it lost its access" }[entry.suspendedReason];
    out.push({ kind: "suspended", text: `It is suspended${why ? `: ${why}` : entry.suspendedReason ? ` (${entry.suspendedReason})` : ""}; an admin enables it again.` });
  }
  if (entry && entry.state === "draft") out.push({ kind: "pending", text: "It is a draft: it does not run yet." });
  if (errors.length) {
    const pending = errors.every((i) => i.code === "unknownDevice");
    out.push({ kind: pending ? "pending" : "issues", text: pending
      ? `It waits for a device no plugin has reported yet: ${errors.map((i) => i.message).join("; ")}.`
      : `It does not load: ${errors.map((i) => `${i.path}: ${i.message}`).join("; ")}.` });
  }
  const newest = (runs || [])[0];
  const miss = (runs || []).find((r) => nearMiss.has(r.outcome));
  if (miss) {
    const when = clock(miss.started);
    const n = out.length;
    const cause = causeText(miss);
    if (miss.outcome === "conditionFailed") {
      const failed = (miss.conditions || []).filter((c) => !c.holds);
      const said = failed.length
        ? failed.map((c) => `${c.path === "conditions" ? "the condition" : `the condition ${c.path}`} did not hold (it saw ${c.saw})`).join(", and ")
        : (miss.reason || "a condition did not hold");
      out.push({ kind: "conditionFailed", run: miss.id, text: `At ${when} ${cause} started it, but ${said}.` });
    } else if (miss.outcome === "skipped") {
      out.push({ kind: "skipped", run: miss.id, text: `At ${when} ${cause} started it, but it was skipped: ${miss.reason || `its mode (${a.mode || "single"}) allows no other run now`}.` });
    } else if (miss.outcome === "suppressed") {
      out.push({ kind: "suppressed", run: miss.id, text: `At ${when} ${cause} started it, but it was suppressed: ${miss.reason || `it ran less than ${a.suppressFor || "its suppressFor"} ago`}.` });
    } else if (miss.outcome === "dropped") {
      out.push({ kind: "dropped", run: miss.id, text: `At ${when} hearthd fell behind and dropped changes it might have started on${miss.reason ? `: ${miss.reason}` : ""}.` });
    }
    if (out.length > n && newest !== miss && !nearMiss.has(newest.outcome)) out[n].text += ` It ran after that, at ${clock(newest.started)} (${newest.outcome}).`;
  }
  if (!out.length && !newest) out.push({ kind: "never", text: "No run or near-miss yet: none of its starters has fired since it was saved." });
  return out;
}
