// The exposure view (admins): which devices leave the house through MQTT export and the bridges.
import { el, call, attempt, toast, $ } from "/web/core.js";
import { renderHAP } from "/web/hap.js";
import { renderMatter } from "/web/matter.js";

const list = (s) => s.split(",").map((x) => x.trim()).filter((x) => x);
const verdicts = {
  exposed: "exposed", notSelected: "not selected", sensitive: "sensitive (not opted in)", excludedRoom: "room excluded",
  excludedDevice: "excluded", noTypeLeft: "no type left", notCommissioned: "not commissioned",
};

export async function renderExposure() {
  renderHAP();
  renderMatter();
  const e = await attempt("Loading the exposure", () => call("GET", "/exposure"));
  // Refused (a member): nothing of what an admin saw here before stays on the page.
  if (!e) { $("#exposure-body").replaceChildren(); return; }
  const p = e.policy;
  const field = (name, label, value, hint) =>
    el("label", {}, label, el("input", { name, value: (value || []).join(", "), placeholder: hint }));
  const form = el("form", { class: "card form", id: "exposure-form" },
    el("p", { class: "hint", text: `Doors on: ${e.doors.length ? e.doors.join(", ") : "none (exposure.mqtt in hearth.yaml)"}. ` +
      `Policy from ${e.source === "admin" ? "an admin's edit" : "hearth.yaml"}. Nothing selected exposes every non-sensitive device.` }),
    field("rooms", "Rooms", p.rooms, "Garage, Hall"),
    field("deviceTypes", "Device types", p.deviceTypes, "OnOffLight, 0x0302"),
    field("devices", "Devices (listing a lock opts it in)", p.devices, "gpio:relay"),
    field("excludedRooms", "Never these rooms", p.excludedRooms, ""),
    field("excludedDeviceTypes", "Never these types", p.excludedDeviceTypes, ""),
    field("excludedDevices", "Never these devices", p.excludedDevices, ""),
    el("label", {}, el("input", { type: "checkbox", name: "includeSensitive", checked: p.includeSensitive }), " Expose selected locks, garage doors and alarms"),
    el("label", {}, el("input", { type: "checkbox", name: "allowControl", checked: p.allowControl !== false }), " Controllers outside may control"),
    el("button", { type: "submit" }, "Save"),
    el("button", { type: "button", onclick: async () => {
      if (await attempt("Resetting the exposure", () => call("DELETE", "/exposure"))) { toast("Back to hearth.yaml's policy"); renderExposure(); }
    } }, "Reset to hearth.yaml"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const body = {};
    for (const k of ["rooms", "deviceTypes", "devices", "excludedRooms", "excludedDeviceTypes", "excludedDevices"]) body[k] = list(f.get(k) || "");
    body.includeSensitive = f.get("includeSensitive") !== null;
    body.allowControl = f.get("allowControl") !== null;
    if (await attempt("Saving the exposure", () => call("PUT", "/exposure", body))) { toast("Saved"); renderExposure(); }
  });
  $("#exposure-body").replaceChildren(form, el("table", { class: "grid" },
    el("thead", {}, el("tr", {}, ["Device", "Name", "Leaves the house?"].map((h) => el("th", { text: h })))),
    el("tbody", {}, e.devices.map((d) => el("tr", { "data-device": d.id },
      el("td", { text: d.id }), el("td", { text: d.name }), el("td", { class: d.verdict === "exposed" ? "" : "hint", text: verdicts[d.verdict] || d.verdict }))))));
}
