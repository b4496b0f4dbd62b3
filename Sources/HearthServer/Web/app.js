// Hearth's web page: plain JavaScript module, no build step. It talks to /api/v1 over HTTP
// and keeps the home live over one WebSocket (see docs/api.md).
import { describeDevice, controlsFor, connectivityText, formatEvent } from "/web/present.js";

const $ = (sel, root = document) => root.querySelector(sel);
/// A path segment: escaped, but keeping the ':' of device IDs (plugin:local) as the API expects.
const seg = (id) => encodeURIComponent(id).replace(/%3A/gi, ":");
const api = "/api/v1";
const state = {
  token: localStorage.getItem("hearth.token"),
  me: null,
  devices: new Map(),
  /// The newest state seen of each device, from either the `devices` snapshot or the tiles
  /// feed, with its version: id → { device, version }.
  latest: new Map(),
  discovered: new Map(),
  rooms: new Map(),
  structures: new Map(),
  events: [],
  socket: null,
  retry: 0,
  catalog: null,
};

// ---------- small helpers ----------
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

let toastTimer = null;
function toast(message, kind = "info") {
  const t = $("#toast");
  t.textContent = message;
  t.className = `show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.className = ""), 6000);
}

class APIError extends Error {
  constructor(code, message, status) { super(message); this.code = code; this.status = status; }
}

async function call(method, path, body) {
  const headers = {};
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 204) return null;
  const text = await r.text();
  const data = text ? JSON.parse(text) : null;
  if (!r.ok) {
    const err = data && data.error ? data.error : { code: "internal", message: `HTTP ${r.status}` };
    if (err.code === "unauthenticated" && path !== "/auth/login" && path !== "/auth/setup") signedOut("Your session ended; sign in again.");
    throw new APIError(err.code, err.message, r.status);
  }
  return data;
}

/// Runs an action and shows a refusal politely instead of failing silently.
async function attempt(what, fn) {
  try {
    return await fn();
  } catch (e) {
    const polite = e.code === "permissionDenied" ? `Not allowed: ${e.message}` : `${what} failed: ${e.message}`;
    toast(polite, "error");
    return undefined;
  }
}

const isAdmin = () => state.me && state.me.role === "admin";
const roomName = (id) => (state.rooms.get(id) || {}).name || "No room";
const structureName = (id) => (state.structures.get(id) || {}).name || "No structure";

// ---------- sign in ----------
function signedOut(message) {
  state.token = null;
  state.me = null;
  localStorage.removeItem("hearth.token");
  if (state.socket) { state.socket.onclose = null; state.socket.close(); state.socket = null; }
  for (const m of [state.devices, state.latest, state.discovered, state.rooms, state.structures]) m.clear();
  state.events = [];
  $("#nav").hidden = true;
  $("#signout").hidden = true;
  $("#who").textContent = "";
  $("#live").textContent = "";
  show("signin");
  if (message) toast(message);
}

async function signedIn(token) {
  state.token = token;
  localStorage.setItem("hearth.token", token);
  state.me = await call("GET", "/me");
  $("#who").textContent = `${state.me.principal} (${state.me.role})`;
  $("#nav").hidden = false;
  $("#signout").hidden = false;
  for (const a of document.querySelectorAll("[data-admin]")) a.hidden = !isAdmin();
  connect();
  route();
}

$("#login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  $("#login-error").textContent = "";
  try {
    const t = await call("POST", "/auth/login", { username: f.get("username"), password: f.get("password") });
    await signedIn(t.token);
  } catch (e) {
    $("#login-error").textContent = e.message;
  }
});

$("#setup-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  $("#setup-error").textContent = "";
  try {
    const t = await call("POST", "/auth/setup", { code: f.get("code").trim(), password: f.get("password") });
    await signedIn(t.token);
  } catch (e) {
    $("#setup-error").textContent = e.message;
  }
});

$("#signout").addEventListener("click", async () => {
  await call("POST", "/auth/logout").catch(() => {});
  signedOut("Signed out.");
});

// ---------- live updates ----------
function connect() {
  if (!state.token) return;
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${proto}://${location.host}${api}/ws?token=${encodeURIComponent(state.token)}`);
  state.socket = ws;
  ws.onopen = () => {
    state.retry = 0;
    state.latest.clear();  // versions start over if hearthd restarted
    $("#live").textContent = "● live";
    $("#live").className = "live on";
    const sub = (id, query, mode) => ws.send(JSON.stringify({ type: "subscribe", id, query, mode }));
    sub("devices", "devices", "batched");
    sub("rooms", "rooms", "batched");
    sub("structures", "structures", "batched");
    if (isAdmin()) sub("discovered", "discovered", "batched");
    // Attribute reports do not wake `devices`; this one feed keeps every tile live.
    ws.send(JSON.stringify({ type: "subscribe", id: "tiles", query: "deviceUpdates" }));
    ws.send(JSON.stringify({ type: "subscribe", id: "events", query: "events" }));
  };
  ws.onmessage = (m) => receive(JSON.parse(m.data));
  ws.onclose = () => {
    if (state.socket !== ws) return;
    $("#live").textContent = "○ reconnecting";
    $("#live").className = "live off";
    const wait = Math.min(15000, 500 * 2 ** state.retry++);
    setTimeout(() => { if (state.token && state.socket === ws) connect(); }, wait);
  };
}

/// The `devices` snapshot decides which devices exist; the `tiles` feed (deviceUpdates) brings
/// their newest state. The two subscriptions race, so each device shows the newer of the two
/// states (a feed entry may also come before the snapshot that lists a new device).
function devicesSnapshot(items, version) {
  state.devices = new Map();
  for (const d of items) {
    const seen = state.latest.get(d.id);
    if (seen && seen.version > version) {
      state.devices.set(d.id, seen.device);
    } else {
      state.devices.set(d.id, d);
      state.latest.set(d.id, { device: d, version });
    }
  }
  // What this snapshot does not list and is not newer than it is gone.
  for (const [id, seen] of [...state.latest]) if (!state.devices.has(id) && seen.version <= version) state.latest.delete(id);
}

function devicesChanged(items, version) {
  for (const d of items) {
    const seen = state.latest.get(d.id);
    if (seen && seen.version >= version) continue;
    state.latest.set(d.id, { device: d, version });
    // Removals come through `devices` only.
    if (state.devices.has(d.id)) state.devices.set(d.id, d);
  }
}

const mapFor = { devices: "devices", discovered: "discovered", rooms: "rooms", structures: "structures" };

function receive(m) {
  if (window.hearthDebug) console.debug("ws", m.type, m.id, JSON.stringify(m).slice(0, 300));
  const key = mapFor[m.id];
  switch (m.type) {
    case "snapshot": {
      const items = key === "rooms" ? m.rooms : key === "structures" ? m.structures : m.devices;
      if (key === "devices") { devicesSnapshot(items || [], m.version || 0); break; }
      const map = state[key];
      map.clear();
      for (const item of items || []) map.set(item.id, item);
      break;
    }
    case "changed":
      devicesChanged(m.devices || [], m.version || 0);
      scheduleRender("devices");
      return;
    case "added":
    case "updated": {
      const item = m.device || m.room || m.structure;
      state[key].set(item.id, item);
      break;
    }
    case "removed":
      state[key].delete(m.key);
      break;
    case "event":
      state.events.unshift(m.event);
      state.events.length = Math.min(state.events.length, 200);
      break;
    case "closing":
      signedOut(m.error ? m.error.message : "The server closed the session.");
      return;
    case "error":
      toast(m.error.message, "error");
      return;
    default:
      return;
  }
  scheduleRender(m.type === "event" ? "events" : key);
}

let pending = new Set();
function scheduleRender(what) {
  if (pending.size === 0) setTimeout(() => { const p = pending; pending = new Set(); renderChanged(p); }, 16);
  pending.add(what);
}

function renderChanged(what) {
  const view = currentView();
  if (what.has("events")) renderEvents();
  if (view === "home") renderHome();
  if (view === "discovered" && (what.has("discovered") || what.has("rooms") || what.has("structures"))) renderDiscovered();
  if (view === "layout" && !$("#layout-body").contains(document.activeElement)) renderLayout();
}

/// Re-renders `root` with `build()`, keeping focus on the element with the same data-key.
function rerender(root, build) {
  const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  root.replaceChildren(...build());
  if (focused) { const f = root.querySelector(`[data-key="${CSS.escape(focused)}"]`); if (f) f.focus(); }
}

// ---------- views ----------
const views = ["signin", "home", "discovered", "layout", "access", "plugins", "events"];
function currentView() { return views.find((v) => !document.getElementById(v).hidden); }
function show(view) {
  for (const v of views) document.getElementById(v).hidden = v !== view;
  for (const a of document.querySelectorAll("#nav a")) a.setAttribute("aria-current", a.dataset.view === view ? "page" : "false");
}

function route() {
  if (!state.token) return show("signin");
  let view = location.hash.slice(1) || "home";
  if (!views.includes(view) || view === "signin") view = "home";
  show(view);
  ({ home: renderHome, discovered: renderDiscovered, layout: renderLayout, access: renderAccess, plugins: renderPlugins, events: renderEvents })[view]();
}
window.addEventListener("hashchange", route);

// Home: structures → rooms → device tiles.
function renderHome() {
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
  return el("li", { class: `tile ${state_}`, "data-device": d.id },
    el("div", { class: "tile-head" },
      el("span", { class: "icon", "aria-hidden": "true", text: info.icon }),
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
    return el("label", { class: "level" }, "Level ", input);
  }
  return el("span");
}

// Discovered: commission with live naming feedback.
// Cards are kept by device ID, so a live update never replaces a form being filled in.
const discoveredCards = new Map();
function renderDiscovered() {
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

function structureOptions(selected) {
  return [...state.structures.values()].map((s) => el("option", { value: s.id, selected: s.id === selected }, s.name));
}
function roomOptions(structureID, selected) {
  return [el("option", { value: "" }, "No room"),
    ...[...state.rooms.values()].filter((r) => r.structureID === structureID).map((r) => el("option", { value: r.id, selected: r.id === selected }, r.name))];
}

function commissionCard(d) {
  const info = describeDevice(d);
  const firstStructure = [...state.structures.keys()][0];
  const nameInput = el("input", { name: "name", value: d.name, required: true, "data-key": `${d.id}/name`, autocomplete: "off", "aria-describedby": `rules-${d.id}` });
  const structure = el("select", { name: "structure", "data-key": `${d.id}/structure` }, structureOptions(firstStructure));
  const room = el("select", { name: "room", "data-key": `${d.id}/room` }, roomOptions(firstStructure));
  const feedback = el("div", { class: "rules", id: `rules-${d.id}`, "aria-live": "polite" });
  const submit = el("button", { type: "submit" }, "Commission");
  structure.addEventListener("change", () => room.replaceChildren(...roomOptions(structure.value)));
  let seq = 0;
  const check = async () => {
    const mine = ++seq;
    const v = await call("POST", "/names/check", { name: nameInput.value, ...(room.value ? { room: room.value } : {}) }).catch(() => null);
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
    submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { name: nameInput.value, structure: structure.value, ...(room.value ? { room: room.value } : {}) };
    const r = await attempt(`Commissioning ${d.name}`, () => call("POST", `/devices/${seg(d.id)}/commission`, body));
    if (r) toast(`${r.device.name} is in the home${r.warning ? ` (${r.warning})` : ""}.`, "ok");
  });
  return el("li", { class: "card", "data-device": d.id },
    el("div", { class: "tile-head" }, el("span", { class: "icon", "aria-hidden": "true", text: info.icon }),
      el("div", {}, el("strong", { text: d.name }), el("div", { class: "type", text: `${info.type} · ${d.id} · ${d.manufacturer || ""} ${d.model || ""}` }))),
    form);
}

// Layout: structures and rooms, device moves. Members see it and are refused politely.
function renderLayout() {
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

// Access: users, app requests, grants.
async function renderAccess() {
  const root = $("#access-body");
  const [users, requests, grants] = await Promise.all([
    attempt("Loading users", () => call("GET", "/users")),
    attempt("Loading app requests", () => call("GET", "/apps/requests?status=pending")),
    attempt("Loading grants", () => call("GET", "/grants")),
  ]);
  if (!state.catalog) state.catalog = await attempt("Loading the catalogue", () => call("GET", "/catalog"));
  const u = el("input", { name: "username", placeholder: "User name", "aria-label": "User name", required: true });
  const p = el("input", { name: "password", type: "password", placeholder: "Password", "aria-label": "Password", required: true });
  const role = el("select", { "aria-label": "Role" }, el("option", { value: "member" }, "member"), el("option", { value: "admin" }, "admin"));
  root.replaceChildren(
    el("h3", { text: "Users" }),
    el("ul", { class: "list" }, (users || []).map((x) => el("li", {}, `${x.username} (${x.role})`, " ",
      el("button", { type: "button", class: "small danger", onclick: async () => {
        if (confirm(`Remove ${x.username}?`) && (await attempt("Removing the user", () => call("DELETE", `/users/${seg(x.username)}`))) !== undefined) renderAccess();
      } }, "Remove")))),
    el("form", { class: "inline", onsubmit: async (ev) => { ev.preventDefault();
      if (await attempt("Adding the user", () => call("POST", "/users", { username: u.value, password: p.value, role: role.value }))) { toast(`${u.value} added.`, "ok"); renderAccess(); } } },
      u, p, role, el("button", { type: "submit" }, "Add user")),
    el("h3", { text: "App requests waiting for consent" }),
    (requests || []).length === 0 ? el("p", { class: "hint", text: "None." }) : el("ul", { class: "cards" }, requests.map(requestCard)),
    el("h3", { text: "App grants (tokens)" }),
    (grants || []).length === 0 ? el("p", { class: "hint", text: "None." }) : el("ul", { class: "list" }, grants.map((g) => el("li", {},
      `${g.appName}: ${(g.scope.deviceTypes || []).length ? g.scope.deviceTypes.join(", ") : "all device types"}${g.scope.includeSensitive ? ", sensitive devices" : ""}${g.scope.canControl ? ", control" : ", read only"} `,
      el("button", { type: "button", class: "small danger", onclick: async () => {
        if ((await attempt("Revoking", () => call("DELETE", `/grants/${seg(g.id)}`))) !== undefined) { toast(`${g.appName} revoked.`, "ok"); renderAccess(); }
      } }, "Revoke")))));
}

function requestCard(r) {
  const types = (state.catalog ? state.catalog.deviceTypes : []).map((t) => t.name).sort();
  const requested = new Set((r.requestedDeviceTypes || []).map(String));
  const select = el("select", { multiple: true, size: 6, "aria-label": "Device types to grant" },
    types.map((n) => el("option", { value: n, selected: requested.has(n) }, n)));
  const sensitive = el("input", { type: "checkbox" });
  const control = el("input", { type: "checkbox", checked: true });
  return el("li", { class: "card" }, el("strong", { text: r.appName }), ` asks for ${(r.requestedDeviceTypes || []).join(", ") || "all device types"}`,
    el("label", {}, "Device types (none selected: all) ", select),
    el("label", {}, sensitive, " Include sensitive devices (locks, garage doors, alarms)"),
    el("label", {}, control, " May control devices"),
    el("div", {},
      el("button", { type: "button", onclick: async () => {
        const deviceTypes = [...select.selectedOptions].map((o) => o.value);
        if (await attempt("Approving", () => call("POST", `/apps/requests/${r.id}/approve`, { deviceTypes, includeSensitive: sensitive.checked, canControl: control.checked }))) { toast(`${r.appName} approved.`, "ok"); renderAccess(); }
      } }, "Approve"), " ",
      el("button", { type: "button", class: "danger", onclick: async () => {
        if (await attempt("Denying", () => call("POST", `/apps/requests/${r.id}/deny`))) renderAccess();
      } }, "Deny")));
}

async function renderPlugins() {
  const [plugins, logs] = await Promise.all([
    attempt("Loading plugins", () => call("GET", "/plugins")),
    attempt("Loading the log", () => call("GET", "/logs?limit=100")),
  ]);
  if (!plugins) return;
  const levels = { trace: "", debug: "", info: "", notice: "", warning: "warn", error: "bad", critical: "bad" };
  $("#plugins-body").replaceChildren(el("table", { class: "grid" },
    el("thead", {}, el("tr", {}, ["Plugin", "Version", "State", "Restarts", "Last error"].map((h) => el("th", { text: h })))),
    el("tbody", {}, plugins.map((p) => el("tr", { "data-plugin": p.id },
      el("td", { text: p.name || p.id }), el("td", { text: p.version || "" }),
      el("td", {}, el("span", { class: `state ${p.state}`, text: p.state })),
      el("td", { text: String(p.restarts) }), el("td", { class: "error-text", text: p.lastError || "" }))))),
    el("button", { type: "button", onclick: renderPlugins }, "Refresh"),
    el("h3", { text: "Recent log" }),
    el("ol", { class: "log", id: "log" }, (logs || []).slice().reverse().map((l) => el("li", { class: levels[l.level] || "" },
      el("time", { text: new Date(l.time).toLocaleTimeString() }), " ", el("span", { class: "lvl", text: l.level }), " ",
      el("span", { class: "lbl", text: l.label }), " ", l.message))));
}

function renderEvents() {
  const list = $("#events-list");
  list.replaceChildren(...state.events.map((e) => {
    const d = state.devices.get(e.device);
    const f = formatEvent(e, d);
    return el("li", { "data-event": e.name || "" }, el("time", { text: f.time }), " ", el("strong", { text: f.device }), " ", f.text);
  }));
}

// ---------- start ----------
(async () => {
  if (state.token) {
    try { await signedIn(state.token); } catch { signedOut(); }
  } else signedOut();
})();
