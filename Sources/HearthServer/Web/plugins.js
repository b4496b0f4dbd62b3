// The plugins view.
import { el, call, attempt, $ } from "/web/core.js";

export async function renderPlugins() {
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
