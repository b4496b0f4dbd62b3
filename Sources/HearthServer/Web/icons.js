// Tile icons as inline SVG: they render the same everywhere, without an emoji font.
// Each icon is a few strokes on a 24×24 grid, drawn in the text colour (currentColor).

const PATHS = {
  light: ["M9 18h6", "M10 21h4", "M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2.1h5c0-.9.4-1.6 1-2.1A6 6 0 0 0 12 3z"],
  plug: ["M9 3v5", "M15 3v5", "M6 8h12v3a6 6 0 0 1-12 0z", "M12 17v4"],
  door: ["M6 21V4a1 1 0 0 1 1-1h10a1 1 0 0 1 1 1v17", "M4 21h16", "M14.5 12h.01"],
  motion: ["M13 5.5a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3", "M10 21l2-6 3 3v3", "M8 11l3-4 3 2 3 1", "M12 15l-1-5"],
  temperature: ["M10 14V5a2 2 0 0 1 4 0v9a4 4 0 1 1-4 0z", "M12 10v7"],
  humidity: ["M12 3s6 6.5 6 11a6 6 0 0 1-12 0c0-4.5 6-11 6-11z"],
  leak: ["M3 17c2 0 2-1.5 4.5-1.5S10 17 12 17s2-1.5 4.5-1.5S19 17 21 17", "M12 3s4 4.5 4 7.5a4 4 0 0 1-8 0C8 7.5 12 3 12 3z"],
  lock: ["M6 11h12v10H6z", "M8 11V7a4 4 0 0 1 8 0v4", "M12 15v2"],
  button: ["M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z", "M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z"],
  alarm: ["M12 3a6 6 0 0 0-6 6v5l-2 3h16l-2-3V9a6 6 0 0 0-6-6z", "M10 20a2 2 0 0 0 4 0"],
  fan: ["M12 12m-2 0a2 2 0 1 0 4 0 2 2 0 1 0-4 0", "M12 10c0-4 1-7 4-7s3 4-2 7", "M14 12c4 0 7 1 7 4s-4 3-7-2", "M12 14c0 4-1 7-4 7s-3-4 2-7", "M10 12c-4 0-7-1-7-4s4-3 7 2"],
  home: ["M3 11l9-8 9 8", "M5 10v11h14V10", "M10 21v-6h4v6"],
};

/// The names of the icons (for tests and for `iconName` in present.js).
export const ICON_NAMES = Object.keys(PATHS);

/// An inline SVG element for the icon `name` (the house when unknown).
export function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({ viewBox: "0 0 24 24", width: "32", height: "32", fill: "none", stroke: "currentColor",
    "stroke-width": "1.8", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true", class: "icon", "data-icon": name })) {
    svg.setAttribute(k, v);
  }
  for (const d of PATHS[name] || PATHS.home) {
    const p = document.createElementNS(ns, "path");
    p.setAttribute("d", d);
    svg.append(p);
  }
  return svg;
}
