// The Matter bridge (admins, in the exposure view): the QR code of the `MT:` payload, the manual
// pairing code, the commissioning window, the fabrics with Remove, and "Open commissioning window".
import { el, call, attempt, toast, $ } from "/web/core.js";
import { qrSVG } from "/web/hap.js";

function windowText(m) {
  if (m.window === "closed") return "closed: open one to add a controller";
  const kind = m.window === "basic" ? "open for the pairing code" : "open for a controller's own code (enhanced)";
  return m.windowSecondsLeft == null ? kind : `${kind}, ${Math.ceil(m.windowSecondsLeft / 60)} min left`;
}

function fabricRow(f) {
  const vendor = "0x" + f.vendorID.toString(16).toUpperCase().padStart(4, "0");
  return el("tr", { "data-fabric": f.index },
    el("td", { text: String(f.index) }), el("td", { text: f.label || "—" }), el("td", { text: vendor }),
    el("td", { text: "0x" + f.fabricID }), el("td", { text: "0x" + f.nodeID }),
    el("td", {}, el("button", { type: "button", class: "remove-fabric", onclick: async () => {
      if (!confirm(`Remove fabric ${f.index}${f.label ? ` (${f.label})` : ""}? That controller loses every Hearth device until it adds the bridge again.`)) return;
      if (await attempt("Removing the fabric", () => call("DELETE", `/matter/fabrics/${f.index}`))) { toast(`Fabric ${f.index} removed`); renderMatter(); }
    } }, "Remove")));
}

/// Sign-out forgets the pairing code (the next person to sign in may be a member).
export function resetMatter() {
  $("#matter-body")?.replaceChildren();
}

export async function renderMatter() {
  const body = $("#matter-body");
  if (!body) return;
  let m;
  try {
    m = await call("GET", "/matter");
  } catch (e) {
    if (e.status === 404) { body.replaceChildren(el("p", { class: "hint", text: "The Matter bridge is off (matter.enabled in hearth.yaml)." })); return; }
    if (e.status === 403) { body.replaceChildren(); return; }
    toast(`Loading the Matter bridge failed: ${e.message}`, "error");
    return;
  }
  const fabrics = m.fabrics.length
    ? el("table", { class: "grid fabrics" },
      el("thead", {}, el("tr", {}, ...["Fabric", "Label", "Vendor", "Fabric ID", "Hearth's node ID", ""].map((t) => el("th", { text: t })))),
      el("tbody", {}, m.fabrics.map(fabricRow)))
    : el("p", { class: "hint", text: "No controller yet: scan the QR code or type the pairing code in the controller's \"add device\"." });
  const open = el("button", { type: "button", class: "open-window", onclick: async () => {
    if (await attempt("Opening the commissioning window", () => call("POST", "/matter/window"))) { toast("Commissioning window open for 15 minutes"); renderMatter(); }
  } }, "Open commissioning window");
  body.replaceChildren(el("h3", { text: "Matter (Google Home, Alexa, SmartThings, Apple Home, Home Assistant)" }),
    el("div", { class: "card", id: "matter-card", "data-window": m.window },
      el("p", {}, "Manual pairing code: ", el("strong", { class: "pairing-code", text: m.manualPairingCode })),
      m.qrRows && m.qrRows.length ? qrSVG(m.qrRows, `Matter QR code ${m.qrPayload}`) : el("p", { class: "hint", text: "No QR code from this hearthd." }),
      el("p", { class: "hint qr-payload", text: `${m.qrPayload} · discriminator ${m.discriminator} · UDP port ${m.port}` }),
      el("p", {}, "Commissioning window: ", el("span", { class: "window-state", text: windowText(m) })),
      m.advertisingProblem ? el("p", { class: "hint", text: `Not discoverable: ${m.advertisingProblem}` }) : null,
      open,
      el("h4", { text: "Fabrics (controllers that added the bridge)" }), fabrics));
}
