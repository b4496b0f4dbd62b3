// The home view.
import { state, el, call, attempt, rerender, roomName, structureName, toast, seg, $ } from "/web/core.js";
import { describeDevice, controlsFor, connectivityText } from "/web/present.js";
import { icon } from "/web/icons.js";

// Home: structures → (scenes strip) rooms → device tiles.
export function renderHome() {
  drawHome();
  scenesSoon();
}

function drawHome() {
  rerender($("#home-body"), () => {
    const devices = [...state.devices.values()].filter((d) => d.commissioning === "commissioned");
    if (devices.length === 0 && homeScenes.length === 0) return [el("p", { class: "hint", text: "No devices yet." })];
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
    // Favourites (this user's, kept in this browser) are pinned above the rooms.
    const favs = devices.filter((d) => favourites().has(d.id)).sort((a, b) => a.name.localeCompare(b.name));
    if (favs.length) out.push(el("section", { class: "structure favourites" }, el("h3", { text: "Favourites" }), el("ul", { class: "tiles" }, favs.map(tile))));
    // A structure with scenes but no device still shows its scenes.
    for (const sc of homeScenes) if (!byStructure.has(sc.structure || "")) byStructure.set(sc.structure || "", new Map());
    for (const [sid, rooms] of [...byStructure].sort((a, b) => structureName(a[0]).localeCompare(structureName(b[0])))) {
      const sec = el("section", { class: "structure" }, el("h3", { text: structureName(sid) }), scenesStrip(sid));
      for (const [rid, all] of [...rooms].sort((a, b) => roomName(a[0]).localeCompare(roomName(b[0])))) {
        const list = all.filter((d) => !favourites().has(d.id));
        if (list.length === 0) continue;
        sec.append(el("h4", { text: roomName(rid) }),
          el("ul", { class: "tiles" }, list.sort((a, b) => a.name.localeCompare(b.name)).map(tile)));
      }
      out.push(sec);
    }
    return out;
  });
}

// The scenes strip: each scene of the structure, whether it holds now, and Recall (members
// too). isActive is computed by hearthd on each GET /scenes, so the strip asks again (at most
// every 250 ms) when the home changes.
let homeScenes = [];
let scenesTimer = null;
let scenesLoading = false;
let scenesAgain = false;
function scenesSoon() {
  if (scenesTimer) return;
  scenesTimer = setTimeout(loadScenes, 250);
}
async function loadScenes() {
  scenesTimer = null;
  if (scenesLoading) { scenesAgain = true; return; }
  scenesLoading = true;
  const got = await call("GET", "/scenes").catch(() => null);
  scenesLoading = false;
  // Redrawn only when a scene or its state changed (a redraw under a click would lose it).
  if (got && JSON.stringify(got) !== JSON.stringify(homeScenes)) { homeScenes = got; drawHome(); }
  if (scenesAgain) { scenesAgain = false; scenesSoon(); }
}
function scenesStrip(structureID) {
  const list = homeScenes.filter((s) => (s.structure || "") === structureID).sort((a, b) => a.name.localeCompare(b.name));
  if (!list.length) return null;
  return el("ul", { class: "scene-strip", "data-scene-strip": structureID, "aria-label": `Scenes in ${structureName(structureID)}` },
    list.map((s) => el("li", { class: `scene-chip${s.isActive ? " active" : ""}`, "data-scene": s.id, "data-active": String(!!s.isActive) },
      el("span", { class: "scene-name", text: s.name }), " ",
      el("span", { class: "scene-state", text: s.isActive ? "active" : "" }), " ",
      el("button", { type: "button", "data-action": "recall", "data-key": `scene/${s.id}`, onclick: async () => {
        const r = await attempt(`Recalling ${s.name}`, () => call("POST", `/scenes/${seg(s.id)}/recall`));
        if (r) toast(r.failed ? `${s.name}: ${r.failed} step(s) failed` : `${s.name} recalled`, r.failed ? "error" : "ok");
        loadScenes();
      } }, "Recall"))));
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
    el("div", { class: "controls" }, controlsFor(d).map((c) => control(d, c)),
      el("button", { type: "button", class: "favourite", "data-control": "favourite", "aria-pressed": String(favourites().has(d.id)),
        title: "Pin to the top", onclick: () => toggleFavourite(d.id) }, favourites().has(d.id) ? "Unpin" : "Pin"),
      el("button", { type: "button", "data-control": "rename", onclick: () => openRename(d) }, "Rename")));
}

// Favourites per user, kept by hearthd (GET/PUT /me/favourites) so they follow the person to
// any browser. Ones an older page kept in this browser's localStorage move to the server once.
let favList = [];
const favourites = () => new Set(favList);
export async function loadFavourites() {
  const got = await call("GET", "/me/favourites").catch(() => null);
  favList = got ? got.devices : [];
  const oldKey = `hearth.favourites.${(state.me && state.me.principal) || "anonymous"}`;
  let old = [];
  try { old = JSON.parse(localStorage.getItem(oldKey) || "[]"); } catch { old = []; }
  if (got && old.length) {
    const saved = await call("PUT", "/me/favourites", { devices: [...new Set([...favList, ...old])] }).catch(() => null);
    if (saved) { favList = saved.devices; localStorage.removeItem(oldKey); }
  }
  renderHome();
}
async function toggleFavourite(id) {
  const next = favList.includes(id) ? favList.filter((x) => x !== id) : [...favList, id];
  const saved = await attempt("Saving favourites", () => call("PUT", "/me/favourites", { devices: next }));
  if (saved) favList = saved.devices;
  renderHome();
}

// Renaming, in a dialog outside the live tiles (a live update never wipes what is typed):
// the naming rules and the "repeats the room" hint apply as you type.
function openRename(d) {
  let dialog = $("#rename-dialog");
  if (!dialog) { dialog = el("dialog", { id: "rename-dialog" }); document.body.append(dialog); }
  const input = el("input", { name: "name", value: d.name, autocomplete: "off", "aria-describedby": "rename-rules" });
  const feedback = el("div", { class: "rules", id: "rename-rules", "aria-live": "polite" });
  const save = el("button", { type: "submit" }, "Rename");
  let seq = 0;
  const check = async () => {
    const mine = ++seq;
    const v = await call("POST", "/names/check", { name: input.value, ...(d.roomID ? { room: d.roomID } : {}) }).catch(() => null);
    if (!v || mine !== seq) return;
    feedback.replaceChildren();
    feedback.className = v.valid ? (v.warning ? "rules warn" : "rules ok") : "rules bad";
    if (v.valid && !v.warning) feedback.append(el("span", { text: "✓ Good name" }));
    for (const rule of v.rules) feedback.append(el("div", { class: "rule", text: rule }));
    if (v.warning) feedback.append(el("div", { class: "rule", text: v.warning }));
    for (const sug of v.suggestions) {
      feedback.append(el("button", { type: "button", class: "suggestion", onclick: () => { input.value = sug; check(); input.focus(); } }, `Use “${sug}”`));
    }
    save.disabled = !v.valid;
  };
  input.addEventListener("input", check);
  const form = el("form", { class: "form", method: "dialog" }, el("h3", { text: `Rename ${d.name}` }), el("label", {}, "Name ", input), feedback,
    el("div", {}, save, " ", el("button", { type: "button", onclick: () => dialog.close() }, "Cancel")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await attempt(`Renaming ${d.name}`, () => call("PATCH", `/devices/${seg(d.id)}`, { name: input.value }));
    if (r) { toast(`Renamed to ${r.name}.`, "ok"); dialog.close(); }
  });
  dialog.replaceChildren(form);
  dialog.showModal();
  check();
  input.focus();
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
