// The layout view.
import { state, el, call, attempt, toast, seg, isAdmin, rerender, roomOptions, $ } from "/web/core.js";

// Layout: structures and rooms, device moves. Members see it and are refused politely.
export function renderLayout() {
  rerender($("#layout-body"), () => {
    const out = [];
    if (!isAdmin()) out.push(el("p", { class: "hint", text: "Only an admin can change the layout; changes you try will be refused." }));
    const newStructure = el("input", { name: "structure", placeholder: "New structure name", "aria-label": "New structure name" });
    out.push(el("form", { class: "inline", onsubmit: async (ev) => { ev.preventDefault();
      if (await attempt("Creating the structure", () => call("POST", "/structures", { name: newStructure.value }))) toast("Structure created.", "ok"); } },
      newStructure, el("button", { type: "submit" }, "Add structure")));
    for (const s of state.structures.values()) {
      const rooms = [...state.rooms.values()].filter((r) => r.structureID === s.id);
      const newRoom = el("input", { placeholder: "New room name", "aria-label": `New room in ${s.name}` });
      out.push(el("section", { class: "card" },
        el("h3", {}, s.name, " ", renameButton("structure", s), " ", deleteButton("structure", s)),
        el("ul", { class: "rooms" }, rooms.map((r) => el("li", { "data-room": r.id }, el("span", { text: r.name }), " ", renameButton("room", r), " ", deleteButton("room", r)))),
        el("form", { class: "inline", onsubmit: async (ev) => { ev.preventDefault();
          if (await attempt("Creating the room", () => call("POST", "/rooms", { name: newRoom.value, structure: s.id }))) toast("Room created.", "ok"); } },
          newRoom, el("button", { type: "submit" }, "Add room"))));
    }
    const devices = [...state.devices.values()].filter((d) => d.commissioning === "commissioned");
    out.push(el("h3", { text: "Devices" }), el("table", { class: "grid" },
      el("thead", {}, el("tr", {}, el("th", { text: "Device" }), el("th", { text: "Room" }))),
      el("tbody", {}, devices.map((d) => {
        const sel = el("select", { "aria-label": `Room of ${d.name}` }, roomOptions(d.structureID, d.roomID));
        sel.addEventListener("change", () => attempt(`Moving ${d.name}`, () =>
          call("PATCH", `/devices/${seg(d.id)}`, { room: sel.value || null })).then((r) => r && toast(`${d.name} moved.`, "ok")));
        return el("tr", {}, el("td", { text: d.name }), el("td", {}, sel));
      }))));
    return out;
  });
}

function renameButton(kind, item) {
  return el("button", { type: "button", class: "small", "data-rename": item.id, onclick: async () => {
    const name = prompt(`New name for ${item.name}`, item.name);
    if (!name) return;
    const r = await attempt(`Renaming ${item.name}`, () => call("PATCH", `/${kind === "room" ? "rooms" : "structures"}/${seg(item.id)}`, { name }));
    if (r) toast(`Renamed to ${name}.`, "ok");
  } }, "Rename");
}
function deleteButton(kind, item) {
  return el("button", { type: "button", class: "small danger", onclick: async () => {
    if (!confirm(`Delete ${item.name}?`)) return;
    if ((await attempt(`Deleting ${item.name}`, () => call("DELETE", `/${kind === "room" ? "rooms" : "structures"}/${seg(item.id)}`))) !== undefined) toast(`${item.name} deleted.`, "ok");
  } }, "Delete");
}
