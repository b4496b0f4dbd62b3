// The HomeKit bridges (admins, in the exposure view): each bridge's setup code and QR code
// (the X-HM:// setup payload), its pairings, and unpairing.
import { el, call, attempt, toast, $ } from "/web/core.js";

const svgNS = "http://www.w3.org/2000/svg";

/// The QR rows ("1" dark) as an SVG with a 4-module quiet zone.
export function qrSVG(rows, label) {
  const quiet = 4;
  const n = rows.length + 2 * quiet;
  const svg = document.createElementNS(svgNS, "svg");
  for (const [k, v] of Object.entries({ viewBox: `0 0 ${n} ${n}`, width: 8 * n, height: 8 * n, role: "img", "aria-label": label, "shape-rendering": "crispEdges" })) svg.setAttribute(k, v);
  const bg = document.createElementNS(svgNS, "rect");
  for (const [k, v] of Object.entries({ width: n, height: n, fill: "#fff" })) bg.setAttribute(k, v);
  let d = "";
  rows.forEach((row, y) => { for (let x = 0; x < row.length; x++) if (row[x] === "1") d += `M${x + quiet} ${y + quiet}h1v1h-1z`; });
  const dark = document.createElementNS(svgNS, "path");
  dark.setAttribute("d", d);
  dark.setAttribute("fill", "#000");
  svg.append(bg, dark);
  return svg;
}

function bridgeCard(b) {
  const pairings = b.pairings.length
    ? el("ul", {}, b.pairings.map((p) => el("li", { text: p.identifier + (p.admin ? " (admin)" : "") })))
    : el("p", { class: "hint", text: "Not paired: add it in the Home app with the setup code or the QR code." });
  return el("div", { class: "card", "data-bridge": b.number },
    el("h3", { text: `${b.name} (bridge ${b.number})` }),
    el("p", {}, "Setup code: ", el("strong", { class: "setup-code", text: b.setupCode })),
    qrSVG(b.setupQR, `HomeKit setup code ${b.setupCode}`),
    el("p", { class: "hint", text: `${b.setupURI} · port ${b.port} · ${b.accessories} accessories (at most 150) · c# ${b.configurationNumber}` }),
    el("h4", { text: "Paired controllers" }), pairings,
    el("button", { type: "button", class: "unpair", disabled: b.pairings.length === 0, onclick: async () => {
      if (!confirm(`Remove every pairing of ${b.name}? Every iPhone loses it until it is added again.`)) return;
      if (await attempt("Unpairing", () => call("DELETE", `/hap/bridges/${b.number}/pairings`))) { toast(`${b.name} unpaired`); renderHAP(); }
    } }, "Unpair (reset the bridge)"));
}

export async function renderHAP() {
  const body = $("#hap-body");
  if (!body) return;
  let hap;
  try {
    hap = await call("GET", "/hap");
  } catch (e) {
    if (e.status === 404) { body.replaceChildren(el("p", { class: "hint", text: "The HomeKit bridge is off (hap.enabled in hearth.yaml)." })); return; }
    // Refused (a member): no setup code or pairing stays on the page; the exposure view says why.
    if (e.status === 403) { body.replaceChildren(); return; }
    toast(`Loading the HomeKit bridges failed: ${e.message}`, "error");
    return;
  }
  body.replaceChildren(el("h3", { text: "Apple Home (HomeKit)" }),
    ...(hap.bridges.length ? hap.bridges.map(bridgeCard) : [el("p", { class: "hint", text: "No HomeKit bridge is running yet." })]));
}
