// The page's side of `deviceDeltas` (wire.js applyDelta), run by scripts/test-web with `node --test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyDelta } from "../../Sources/HearthServer/Web/wire.js";

const thermo = (value) => ({
  id: "mqtt:t1", name: "T", types: [{ id: 770, isPrimaryType: true, traits: [{ id: 0x0402, attributes: [{ id: 0, name: "measuredValue", value }, { id: 1, value: -5000 }] }] }],
});

test("a whole device replaces what the page kept", () => {
  assert.deepEqual(applyDelta(thermo(1), { device: "mqtt:t1", full: thermo(7), attributes: [] }), thermo(7));
  assert.deepEqual(applyDelta(undefined, { device: "mqtt:t1", full: thermo(7), attributes: [] }), thermo(7));
});

test("attribute changes apply in order to a copy; the kept device is not changed", () => {
  const kept = thermo(1);
  const next = applyDelta(kept, { device: "mqtt:t1", attributes: [{ type: 770, trait: 0x0402, attribute: 0, value: 2150 }, { type: 770, trait: 0x0402, attribute: 0, value: 2151 }] });
  assert.equal(next.types[0].traits[0].attributes[0].value, 2151);
  assert.equal(next.types[0].traits[0].attributes[0].name, "measuredValue");
  assert.equal(next.types[0].traits[0].attributes[1].value, -5000);
  assert.equal(kept.types[0].traits[0].attributes[0].value, 1);
});

test("a change for something the page lacks waits for a whole device", () => {
  assert.equal(applyDelta(undefined, { device: "mqtt:t1", attributes: [{ type: 770, trait: 0x0402, attribute: 0, value: 1 }] }), null);
  assert.equal(applyDelta(thermo(1), { device: "mqtt:t1", attributes: [{ type: 770, trait: 0x0006, attribute: 0, value: 1 }] }), null);
});
