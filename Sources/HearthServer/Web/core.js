// What every view shares: the state, DOM helpers, API calls with polite refusals.
// (Hearth's web page: plain JavaScript modules, no build step; see docs/api.md.)

export const $ = (sel, root = document) => root.querySelector(sel);
/// A path segment: escaped, but keeping the ':' of device IDs (plugin:local) as the API expects.
export const seg = (id) => encodeURIComponent(id).replace(/%3A/gi, ":");
export const api = "/api/v1";
export const state = {
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

export function el(tag, attrs = {}, ...children) {
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
export function toast(message, kind = "info") {
  const t = $("#toast");
  t.textContent = message;
  t.className = `show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.className = ""), 6000);
}

export class APIError extends Error {
  constructor(code, message, status, issues) { super(message); this.code = code; this.status = status; this.issues = issues || []; }
}

export async function call(method, path, body, extraHeaders = {}) {
  const headers = { ...extraHeaders };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 204) return null;
  const text = await r.text();
  const data = text ? JSON.parse(text) : null;
  if (!r.ok) {
    const err = data && data.error ? data.error : { code: "internal", message: `HTTP ${r.status}` };
    if (err.code === "unauthenticated" && path !== "/auth/login" && path !== "/auth/setup") hooks.signedOut("Your session ended; sign in again.");
    throw new APIError(err.code, err.message, r.status, err.issues);
  }
  return data;
}

/// Runs an action and shows a refusal politely instead of failing silently.
export async function attempt(what, fn) {
  try {
    return await fn();
  } catch (e) {
    const polite = e.code === "permissionDenied" ? `Not allowed: ${e.message}` : `${what} failed: ${e.message}`;
    toast(polite, "error");
    return undefined;
  }
}

export const isAdmin = () => state.me && state.me.role === "admin";
export const roomName = (id) => (state.rooms.get(id) || {}).name || "No room";
export const structureName = (id) => (state.structures.get(id) || {}).name || "No structure";


/// Set by app.js: what to do when the session ends, and how to redraw after live changes.
/// `run`: an automation run trace arrived over the socket (automations.js sets it).
export const hooks = { signedOut: () => {}, changed: () => {}, run: () => {} };

/// Re-renders `root` with `build()`, keeping focus on the element with the same data-key.
export function rerender(root, build) {
  const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  root.replaceChildren(...build());
  if (focused) { const f = root.querySelector(`[data-key="${CSS.escape(focused)}"]`); if (f) f.focus(); }
}

export function structureOptions(selected) {
  return [...state.structures.values()].map((s) => el("option", { value: s.id, selected: s.id === selected }, s.name));
}
export function roomOptions(structureID, selected) {
  return [el("option", { value: "" }, "No room"),
    ...[...state.rooms.values()].filter((r) => r.structureID === structureID).map((r) => el("option", { value: r.id, selected: r.id === selected }, r.name))];
}

