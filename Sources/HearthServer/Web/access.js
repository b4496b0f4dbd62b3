// The access view.
import { state, el, call, attempt, toast, seg, $ } from "/web/core.js";

// Access: users, app requests, grants.
export async function renderAccess() {
  const root = $("#access-body");
  const [users, requests, grants, changes] = await Promise.all([
    attempt("Loading users", () => call("GET", "/users")),
    attempt("Loading app requests", () => call("GET", "/apps/requests?status=pending")),
    attempt("Loading grants", () => call("GET", "/grants")),
    attempt("Loading permission changes", () => call("GET", "/grants/changes?status=pending")),
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
    el("h3", { text: "Permission changes apps ask for" }),
    (changes || []).length === 0 ? el("p", { class: "hint", text: "None." }) : el("ul", { class: "cards", id: "grant-changes" }, changes.map((c) => changeCard(c, grants || []))),
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

// An app with a grant asks for another scope (presentPermissionsUpdate): what it has, what it
// asks for; approving changes the grant at once (the app's live views follow).
function changeCard(c, grants) {
  const name = (id) => ((state.catalog ? state.catalog.deviceTypes : []).find((t) => t.id === id) || { name: String(id) }).name;
  const types = (list) => (list || []).length ? list.map(name).join(", ") : "all device types";
  const grant = grants.find((g) => g.id === c.grantID);
  return el("li", { class: "card", "data-change": c.id }, el("strong", { text: c.appName }),
    ` has ${grant ? types(grant.scope.deviceTypes) : "a grant"}; asks for ${types(c.requestedDeviceTypes)}`,
    el("div", {},
      el("button", { type: "button", onclick: async () => {
        if (await attempt("Approving the change", () => call("POST", `/grants/changes/${seg(c.id)}/approve`, {}))) { toast(`${c.appName}: change approved.`, "ok"); renderAccess(); }
      } }, "Approve change"), " ",
      el("button", { type: "button", class: "danger", onclick: async () => {
        if (await attempt("Denying the change", () => call("POST", `/grants/changes/${seg(c.id)}/deny`))) renderAccess();
      } }, "Deny change")));
}
