// The home view.
import { state, el, call, attempt, rerender, roomName, structureName, $ } from "/web/core.js";
import { describeDevice, controlsFor, connectivityText } from "/web/present.js";
import { icon } from "/web/icons.js";

// Home: structures → rooms → device tiles.
export function renderHome() {
  rerender($("#home-body"), () => {
    const devices = [...state.devices.values()].filter((d) => d.commissioning === "commissioned");
    if (devices.length === 0) return [el("p", { class: "hint", text: "No devices yet." })];
    const byStructure = new Map();
    for (const d of devices) {
      const s = d.structureID || "";
      if (!byStructure.has(s)) byStructure.set(s, new Map());
      const rooms = byStructure.get(s);
      const r = d.roomID || "";
      if (!rooms.has(r)) rooms.set(r, []);
      rooms.get(r).push(d);
    }
    const out = [];
    for (const [sid, rooms] of [...byStructure].sort((a, b) => structureName(a[0]).localeCompare(structureName(b[0])))) {
      const sec = el("section", { class: "structure" }, el("h3", { text: structureName(sid) }));
      for (const [rid, list] of [...rooms].sort((a, b) => roomName(a[0]).localeCompare(roomName(b[0])))) {
        sec.append(el("h4", { text: roomName(rid) }),
          el("ul", { class: "tiles" }, list.sort((a, b) => a.name.localeCompare(b.name)).map(tile)));
      }
      out.push(sec);
    }
    return out;
  });
}

function tile(d) {
  const info = describeDevice(d);
  const conn = d.sourceConnectivity || {};
  const state_ = conn.connectivityState || "unknown";
  // A device that is identifying (its IdentifyTime counts down) flashes its tile.
  return el("li", { class: `tile ${state_}${info.identifying ? " identifying" : ""}`, "data-device": d.id, "data-identifying": info.identifying ? "true" : null },
    el("div", { class: "tile-head" },
      icon(info.icon),
      el("div", {}, el("strong", { class: "name", text: d.name }), el("div", { class: "type", text: info.type }))),
    el("ul", { class: "readings" }, info.readings.map((r) => el("li", { "data-reading": r.key }, el("span", { class: "label", text: r.label }), " ", el("span", { class: "value", text: r.text })))),
    el("div", { class: "meta" },
      el("span", { class: `conn ${state_}`, text: connectivityText(state_) }),
      " · ", el("span", { class: "locality", text: conn.dataSourceLocality || "" })),
    el("div", { class: "controls" }, controlsFor(d).map((c) => control(d, c))));
}

function control(d, c) {
  const key = `${d.id}/${c.key}`;
  const send = (command, args) => attempt(`${c.label} on ${d.name}`, () =>
    call("POST", "/commands", { device: d.id, type: c.type, trait: c.trait, command, ...(args ? { args } : {}) }));
  if (c.kind === "button") {
    return el("button", { type: "button", "data-key": key, "data-control": c.key, onclick: () => send(c.command, c.args) }, c.label);
  }
  if (c.kind === "switch") {
    return el("button", { type: "button", role: "switch", "aria-checked": String(c.on), "data-key": key, "data-control": c.key,
      class: c.on ? "switch on" : "switch", onclick: () => send(c.on ? c.off : c.onCommand) }, c.label);
  }
  if (c.kind === "level") {
    const input = el("input", { type: "range", min: 1, max: 254, value: c.value, "data-key": key, "data-control": c.key, "aria-label": `${d.name} level` });
    input.addEventListener("change", () => send("MoveToLevel", { level: Number(input.value), transitionTime: 0, optionsMask: 0, optionsOverride: 0 }));
    return el("label", { class: "level" }, `${c.label || "Level"} `, input);
  }
  return el("span");
}
