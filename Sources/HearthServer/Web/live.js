// The one WebSocket and its messages (names from wire.js): every view reads the state it keeps.
import { state, api, toast, hooks, isAdmin, $ } from "/web/core.js";
import { MSG, QUERY, MODE, subscribe, applyDelta } from "/web/wire.js";

export function connect() {
  if (!state.token) return;
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${proto}://${location.host}${api}/ws?token=${encodeURIComponent(state.token)}`);
  state.socket = ws;
  ws.onopen = () => {
    state.retry = 0;
    state.latest.clear();  // versions start over if hearthd restarted
    $("#live").textContent = "● live";
    $("#live").className = "live on";
    const sub = (id, query) => ws.send(subscribe(id, query, { mode: MODE.batched }));
    sub("devices", QUERY.devices);
    sub("rooms", QUERY.rooms);
    sub("structures", QUERY.structures);
    if (isAdmin()) sub("discovered", QUERY.discovered);
    // Attribute reports do not wake `devices`; this one feed keeps every tile live, as deltas:
    // every device whole first, then only the attributes that changed.
    ws.send(subscribe("tiles", QUERY.deviceDeltas));
    ws.send(subscribe("events", QUERY.events));
    // Every automation's runs and near-misses as they happen (start, each step, the end).
    ws.send(subscribe("runs", QUERY.automationRuns));
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

/// The `devices` snapshot decides which devices exist; the `tiles` feed (deviceDeltas) brings
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
    case MSG.snapshot: {
      const items = key === "rooms" ? m.rooms : key === "structures" ? m.structures : m.devices;
      if (key === "devices") { devicesSnapshot(items || [], m.version || 0); break; }
      const map = state[key];
      map.clear();
      for (const item of items || []) map.set(item.id, item);
      break;
    }
    case MSG.changed:
      devicesChanged(m.devices || [], m.version || 0);
      scheduleRender("devices");
      return;
    case MSG.delta: {
      // Applied to the newest state the page has of each device (the feed's own or the snapshot's).
      const devices = [];
      for (const c of m.changes || []) {
        const kept = state.latest.get(c.device)?.device || state.devices.get(c.device);
        const d = applyDelta(kept, c);
        if (d) devices.push(d);
      }
      devicesChanged(devices, m.version || 0);
      scheduleRender("devices");
      return;
    }
    case MSG.added:
    case MSG.updated: {
      const item = m.device || m.room || m.structure;
      state[key].set(item.id, item);
      break;
    }
    case MSG.removed:
      state[key].delete(m.key);
      break;
    case MSG.event:
      state.events.unshift(m.event);
      state.events.length = Math.min(state.events.length, 200);
      break;
    case MSG.run:
      if (m.run) hooks.run(m.run, m.missed || 0);
      return;
    case MSG.closing:
      hooks.signedOut(m.error ? m.error.message : "The server closed the session.");
      return;
    case MSG.error:
      // A hearthd without the automation engine refuses the runs feed; nothing to say about it.
      if (m.id === "runs") return;
      toast(m.error.message, "error");
      return;
    default:
      return;
  }
  scheduleRender(m.type === MSG.event ? "events" : key);
}


let pending = new Set();
function scheduleRender(what) {
  if (pending.size === 0) setTimeout(() => { const p = pending; pending = new Set(); hooks.changed(p); }, 16);
  pending.add(what);
}

