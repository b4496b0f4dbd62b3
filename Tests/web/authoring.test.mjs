// Unit tests of the automation editor's and runs timeline's pure helpers (Web/authoring.js),
// run by scripts/test-web with `node --test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  pathWithin, issuesByField, issueFromRefusal, parseValue, conditionRows, conditionsFrom, conditionRowPath, mergeRun, whyNot, stepText, causeText,
} from "../../Sources/HearthServer/Web/authoring.js";

test("a path lies within its parents at a segment boundary only", () => {
  assert.ok(pathWithin("actions[0].command.device", "actions[0]"));
  assert.ok(pathWithin("actions[0].command.device", "actions[0].command.device"));
  assert.ok(!pathWithin("actions[01].delay", "actions[0]"));
  assert.ok(!pathWithin("actionsX", "actions"));
  assert.ok(pathWithin("starters[1].time.days[2]", "starters[1].time.days"));
});

test("each issue lands at the deepest field that holds its path; the rest are unplaced", () => {
  const fields = ["id", "starters", "starters[0]", "starters[0].event.device", "actions", "actions[1]", "actions[1].delay"];
  const issues = [
    { path: "actions[1].delay", code: "outOfRange" },
    { path: "starters[0].event.event", code: "unknownEvent" },
    { path: "conditions.all[0].attribute.equals", code: "valueOutOfRange" },
    { path: "actions", code: "noActions" },
    { path: "", code: "x" },
  ];
  const { placed, unplaced } = issuesByField(fields, issues);
  assert.deepEqual(placed.get("actions[1].delay").map((i) => i.code), ["outOfRange"]);
  assert.deepEqual(placed.get("starters[0]").map((i) => i.code), ["unknownEvent"]);
  assert.deepEqual(placed.get("actions").map((i) => i.code), ["noActions"]);
  assert.deepEqual(unplaced.map((i) => i.code), ["valueOutOfRange", "x"]);
});

test("a body refused as it decodes gives its path to the field", () => {
  assert.deepEqual(issueFromRefusal("actions[1].delay: '5 parsecs' is not a duration"),
    { severity: "error", code: "invalidArgument", path: "actions[1].delay", message: "'5 parsecs' is not a duration" });
  assert.equal(issueFromRefusal("the body is not JSON").path, "");
  assert.equal(issueFromRefusal("the body is not JSON").message, "the body is not JSON");
});

test("typed values: booleans, numbers, text, nothing", () => {
  assert.equal(parseValue("true"), true);
  assert.equal(parseValue(" off "), false);
  assert.equal(parseValue("2150"), 2150);
  assert.equal(parseValue("-0.5"), -0.5);
  assert.equal(parseValue("auto"), "auto");
  assert.equal(parseValue(""), undefined);
  assert.equal(parseValue("1e3"), "1e3");
});

test("Only if rows: a leaf or all of leaves round-trip; any/not are left to the JSON tab", () => {
  const leaf = { attribute: { device: "d", trait: "OnOff", attribute: "OnOff", equals: true } };
  const time = { time: { after: "22:00" } };
  assert.deepEqual(conditionRows(undefined), { expressible: true, rows: [] });
  assert.deepEqual(conditionRows(leaf).rows, [leaf]);
  assert.deepEqual(conditionRows({ all: [leaf, time] }).rows, [leaf, time]);
  assert.equal(conditionRows({ any: [leaf, time] }).expressible, false);
  assert.equal(conditionRows({ all: [{ not: leaf }] }).expressible, false);
  assert.equal(conditionsFrom([]), undefined);
  assert.deepEqual(conditionsFrom([leaf]), leaf);
  assert.deepEqual(conditionsFrom([leaf, time]), { all: [leaf, time] });
  assert.equal(conditionRowPath(1, 0), "conditions");
  assert.equal(conditionRowPath(2, 1), "conditions.all[1]");
});

test("runs merge by id, newest first, bounded", () => {
  const r = (id, started, outcome = "completed") => ({ id, started, outcome });
  let runs = [r("b", "2026-01-01T10:00:02Z"), r("a", "2026-01-01T10:00:01Z")];
  runs = mergeRun(runs, r("c", "2026-01-01T10:00:03Z", "running"));
  assert.deepEqual(runs.map((x) => x.id), ["c", "b", "a"]);
  runs = mergeRun(runs, r("c", "2026-01-01T10:00:03Z", "completed"));
  assert.deepEqual(runs.map((x) => `${x.id}:${x.outcome}`), ["c:completed", "b:completed", "a:completed"]);
  assert.equal(mergeRun(runs, r("d", "2026-01-01T10:00:04Z"), 2).length, 2);
});

test("why it did not run: a failed condition with the value it saw", () => {
  const entry = { automation: { id: "x", mode: "single" }, state: "enabled", issues: [] };
  const miss = { id: "r2", started: "2026-01-01T10:00:02Z", outcome: "conditionFailed", cause: { starter: "press", description: "gpio:doorbell Switch.InitialPress" },
    conditions: [{ path: "conditions.attribute", holds: false, saw: "gpio:hall-lamp OnOff.OnOff = false" }] };
  const why = whyNot(entry, [miss]);
  assert.equal(why.length, 1);
  assert.equal(why[0].kind, "conditionFailed");
  assert.match(why[0].text, /gpio:doorbell Switch\.InitialPress started it, but the condition conditions\.attribute did not hold \(it saw gpio:hall-lamp OnOff\.OnOff = false\)/);
  const later = whyNot(entry, [{ id: "r3", started: "2026-01-01T10:00:05Z", outcome: "completed", cause: {} }, miss]);
  assert.match(later[0].text, /It ran after that/);
});

test("why it did not run: disabled, suspended, pending, issues, skipped, suppressed, never", () => {
  const base = { automation: { id: "x", mode: "single", suppressFor: "5m" }, issues: [] };
  assert.equal(whyNot({ ...base, state: "disabled" }, [])[0].kind, "disabled");
  assert.match(whyNot({ ...base, state: "suspended", suspendedReason: "loopDetected" }, [])[0].text, /a loop/);
  assert.equal(whyNot({ ...base, state: "enabled", issues: [{ severity: "error", code: "unknownDevice", path: "starters[0].event.device", message: "no device 'gpio:x'" }] }, [])[0].kind, "pending");
  assert.match(whyNot({ ...base, state: "enabled", issues: [{ severity: "error", code: "outOfRange", path: "actions[0].delay", message: "a delay is 0 s – 7 d" }] }, [])[0].text,
    /does not load: actions\[0\]\.delay: a delay is 0 s – 7 d/);
  assert.equal(whyNot({ ...base, state: "enabled", issues: [{ severity: "warning", code: "slowButtonStarter", path: "p", message: "m" }] }, [])[0].kind, "never");
  const skipped = whyNot({ ...base, state: "enabled" }, [{ id: "r", started: "2026-01-01T10:00:00Z", outcome: "skipped", reason: "a run is going (mode single)", cause: { description: "manual" } }]);
  assert.match(skipped[0].text, /skipped: a run is going \(mode single\)/);
  const suppressed = whyNot({ ...base, state: "enabled" }, [{ id: "r", started: "2026-01-01T10:00:00Z", outcome: "suppressed", cause: { description: "manual" } }]);
  assert.match(suppressed[0].text, /suppressed: it ran less than 5m ago/);
  assert.deepEqual(whyNot({ ...base, state: "enabled" }, [{ id: "r", started: "2026-01-01T10:00:00Z", outcome: "completed", cause: {} }]), []);
});

test("steps and causes in words", () => {
  assert.equal(stepText({ kind: "command", detail: "gpio:hall-lamp OnOff.Off", result: "wouldSend" }), "command gpio:hall-lamp OnOff.Off → would send");
  assert.equal(stepText({ kind: "command", detail: "gpio:hall-lamp OnOff.On", result: "ok", milliseconds: 2.345 }), "command gpio:hall-lamp OnOff.On → ok (2.3 ms)");
  assert.equal(stepText({ kind: "command", detail: "d", result: "deviceOffline", message: "gone", milliseconds: 31 }), "command d → deviceOffline: gone (31 ms)");
  assert.equal(causeText({ cause: { description: "gpio:door BooleanState.StateValue", old: false, new: true } }), "gpio:door BooleanState.StateValue (false → true)");
  assert.equal(causeText({ cause: {} }), "no cause recorded");
  assert.equal(causeText({ cause: { description: "gpio:doorbell InitialPress", new: { NewPosition: 1 } } }), "gpio:doorbell InitialPress (NewPosition 1)");
  assert.equal(causeText({ cause: { description: "gpio:door BooleanState.StateValue – → true" , new: true } }), "gpio:door BooleanState.StateValue – → true");
  assert.equal(causeText({ cause: { description: "x", new: 3 } }), "x (– → 3)");
});
