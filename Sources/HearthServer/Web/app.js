// Hearth's web page: plain JavaScript modules, no build step. It talks to /api/v1 over HTTP
// and keeps the home live over one WebSocket (live.js; see docs/api.md). Each view is its own
// module (home, discovered, layout, automations, access, plugins, events); this one signs in and routes.
import { state, call, toast, hooks, isAdmin, $ } from "/web/core.js";
import { connect } from "/web/live.js";
import { renderHome, loadFavourites } from "/web/home.js";
import { renderDiscovered } from "/web/discovered.js";
import { renderLayout } from "/web/layout.js";
import { renderAccess } from "/web/access.js";
import { renderPlugins } from "/web/plugins.js";
import { renderEvents } from "/web/events.js";
import { renderExposure } from "/web/exposure.js";
import { resetMatter } from "/web/matter.js";
import { renderAutomations, resetAutomations } from "/web/automations.js";

// ---------- sign in ----------
function signedOut(message) {
  state.token = null;
  state.me = null;
  localStorage.removeItem("hearth.token");
  if (state.socket) { state.socket.onclose = null; state.socket.close(); state.socket = null; }
  for (const m of [state.devices, state.latest, state.discovered, state.rooms, state.structures]) m.clear();
  state.events = [];
  resetAutomations();
  resetMatter();
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
  loadFavourites();
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

// ---------- views ----------
const views = ["signin", "home", "discovered", "layout", "automations", "access", "exposure", "plugins", "events"];
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
  ({ home: renderHome, discovered: renderDiscovered, layout: renderLayout, automations: renderAutomations, access: renderAccess, exposure: renderExposure, plugins: renderPlugins, events: renderEvents })[view]();
}
window.addEventListener("hashchange", route);

function renderChanged(what) {
  const view = currentView();
  if (what.has("events")) renderEvents();
  if (view === "home") renderHome();
  if (view === "discovered" && (what.has("discovered") || what.has("rooms") || what.has("structures"))) renderDiscovered();
  if (view === "layout" && !$("#layout-body").contains(document.activeElement)) renderLayout();
}

hooks.signedOut = signedOut;
hooks.changed = renderChanged;

// ---------- start ----------
(async () => {
  if (state.token) {
    try { await signedIn(state.token); } catch { signedOut(); }
  } else signedOut();
})();
