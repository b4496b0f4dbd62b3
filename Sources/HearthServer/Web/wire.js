// The WebSocket protocol's names, as HearthAPI defines them (WebSocketMessages.swift):
// a test (WireTableTests) checks this table against the Swift enums, so the page never
// compares strings the server does not send.

/// Message types the server sends (WSServerMessage.Kind).
export const MSG = Object.freeze({
  subscribed: "subscribed", unsubscribed: "unsubscribed", pong: "pong", snapshot: "snapshot", added: "added",
  updated: "updated", removed: "removed", device: "device", changed: "changed", delta: "delta", event: "event",
  end: "end", error: "error", closing: "closing", grantUpdated: "grantUpdated", run: "run",
});

/// Message types a client sends (WSClientMessage.Kind).
export const SEND = Object.freeze({ subscribe: "subscribe", unsubscribe: "unsubscribe", ping: "ping" });

/// What a subscription observes (SubscriptionQuery.Name).
export const QUERY = Object.freeze({
  devices: "devices", discovered: "discovered", rooms: "rooms", structures: "structures", device: "device",
  deviceUpdates: "deviceUpdates", deviceDeltas: "deviceDeltas", events: "events", users: "users",
  automationRuns: "automationRuns",
});

/// How a set subscription delivers changes (SubscriptionMode).
export const MODE = Object.freeze({ batched: "batched", stream: "stream" });

/// Why a subscription ended (EndReason).
export const END = Object.freeze({ permissionDenied: "permissionDenied", deviceRemoved: "deviceRemoved", ended: "ended" });

/// A subscribe message.
export function subscribe(id, query, extra = {}) {
  return JSON.stringify({ type: SEND.subscribe, id, query, ...extra });
}

/// One change of a `delta` message (`{device, full?, attributes}`) applied to the device the
/// page keeps: the whole device when `full` is there, else a copy of `kept` with each attribute's
/// new value. null when it names a device, type, trait or attribute the page does not have
/// (it then waits for a whole device).
export function applyDelta(kept, change) {
  if (change.full) return change.full;
  if (!kept) return null;
  const device = { ...kept, types: kept.types.map((t) => ({ ...t, traits: t.traits.map((r) => ({ ...r, attributes: r.attributes.slice() })) })) };
  for (const a of change.attributes || []) {
    const type = device.types.find((t) => t.id === a.type);
    const trait = type && type.traits.find((r) => r.id === a.trait);
    const i = trait ? trait.attributes.findIndex((x) => x.id === a.attribute) : -1;
    if (i < 0) return null;
    trait.attributes[i] = { ...trait.attributes[i], value: a.value };
  }
  return device;
}
