// The discovered view.
import { state, el, call, attempt, toast, seg, structureOptions, roomOptions, $ } from "/web/core.js";
import { describeDevice, suggestName } from "/web/present.js";
import { icon } from "/web/icons.js";

// Discovered: commission with live naming feedback.
// Cards are kept by device ID, so a live update never replaces a form being filled in.
const discoveredCards = new Map();
export function renderDiscovered() {
  const root = $("#discovered-body");
  const list = [...state.discovered.values()];
  for (const id of [...discoveredCards.keys()]) if (!state.discovered.has(id)) discoveredCards.delete(id);
  if (list.length === 0) { root.replaceChildren(el("p", { class: "hint", text: "Nothing waiting to be commissioned." })); return; }
  let ul = root.querySelector("ul.cards");
  if (!ul) { ul = el("ul", { class: "cards" }); root.replaceChildren(ul); }
  const cards = list.map((d) => { if (!discoveredCards.has(d.id)) discoveredCards.set(d.id, commissionCard(d)); return discoveredCards.get(d.id); });
  for (const c of [...ul.children]) if (!cards.includes(c)) c.remove();
  for (const c of cards) if (c.parentNode !== ul) ul.append(c);
}

function commissionCard(d) {
  const info = describeDevice(d);
  const firstStructure = [...state.structures.keys()][0];
  // The suggested name is one a person would give (not the vendor's model string); the room the
  // device suggests (MQTT discovery's suggested_area) is pre-selected, offered as a new room
  // when the structure has none of that name.
  const nameInput = el("input", { name: "name", value: suggestName(d), required: true, "data-key": `${d.id}/name`, autocomplete: "off", "aria-describedby": `rules-${d.id}` });
  const structure = el("select", { name: "structure", "data-key": `${d.id}/structure` }, structureOptions(firstStructure));
  const room = el("select", { name: "room", "data-key": `${d.id}/room` });
  const fillRooms = (sid) => {
    const wanted = (d.suggestedRoom || "").trim().toLowerCase();
    const match = [...state.rooms.values()].find((r) => r.structureID === sid && r.name.toLowerCase() === wanted);
    const options = roomOptions(sid, match ? match.id : undefined);
    if (wanted && !match) options.push(el("option", { value: `new:${d.suggestedRoom.trim()}`, selected: true }, `${d.suggestedRoom.trim()} (new room, suggested)`));
    room.replaceChildren(...options);
  };
  fillRooms(firstStructure);
  // The primary type (what the device is shown as): one of its device types.
  const types = d.types || [];
  const primary = el("select", { name: "primaryType", "data-key": `${d.id}/primaryType` },
    types.map((t) => el("option", { value: String(t.id), selected: t.isPrimaryType }, t.name || `0x${t.id.toString(16)}`)));
  const feedback = el("div", { class: "rules", id: `rules-${d.id}`, "aria-live": "polite" });
  const submit = el("button", { type: "submit" }, "Commission");
  structure.addEventListener("change", () => fillRooms(structure.value));
  let seq = 0;
  const check = async () => {
    const mine = ++seq;
    const v = await call("POST", "/names/check", { name: nameInput.value, ...(room.value && !room.value.startsWith("new:") ? { room: room.value } : {}) }).catch(() => null);
    if (!v || mine !== seq) return;
    feedback.replaceChildren();
    feedback.className = v.valid ? (v.warning ? "rules warn" : "rules ok") : "rules bad";
    if (v.valid && !v.warning) feedback.append(el("span", { text: "✓ Good name" }));
    for (const rule of v.rules) feedback.append(el("div", { class: "rule", text: rule }));
    if (v.warning) feedback.append(el("div", { class: "rule", text: v.warning }));
    for (const s of v.suggestions) {
      feedback.append(el("button", { type: "button", class: "suggestion", onclick: () => { nameInput.value = s; check(); nameInput.focus(); } }, `Use “${s}”`));
    }
    submit.disabled = !v.valid;
  };
  nameInput.addEventListener("input", check);
  room.addEventListener("change", check);
  queueMicrotask(check);
  const form = el("form", { class: "form" },
    el("label", {}, "Name ", nameInput), feedback,
    el("label", {}, "Structure ", structure),
    el("label", {}, "Room ", room),
    types.length > 1 ? el("label", {}, "Shown as ", primary) : null,
    submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let roomID = room.value;
    if (roomID.startsWith("new:")) {
      const created = await attempt("Creating the room", () => call("POST", "/rooms", { name: roomID.slice(4), structure: structure.value }));
      if (!created) return;
      roomID = created.id;
    }
    const body = { name: nameInput.value, structure: structure.value, ...(roomID ? { room: roomID } : {}), primaryType: Number(primary.value) };
    const r = await attempt(`Commissioning ${d.name}`, () => call("POST", `/devices/${seg(d.id)}/commission`, body));
    if (r) toast(`${r.device.name} is in the home${r.warning ? ` (${r.warning})` : ""}.`, "ok");
  });
  return el("li", { class: "card", "data-device": d.id },
    el("div", { class: "tile-head" }, icon(info.icon),
      el("div", {}, el("strong", { text: d.name }), el("div", { class: "type", text: `${info.type} · ${d.id} · ${d.manufacturer || ""} ${d.model || ""}` }))),
    form);
}
