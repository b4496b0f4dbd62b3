// The events view.
import { state, el, $ } from "/web/core.js";
import { formatEvent } from "/web/present.js";

export function renderEvents() {
  const list = $("#events-list");
  list.replaceChildren(...state.events.map((e) => {
    const d = state.devices.get(e.device);
    const f = formatEvent(e, d);
    return el("li", { "data-event": e.name || "" }, el("time", { text: f.time }), " ", el("strong", { text: f.device }), " ", f.text);
  }));
}
