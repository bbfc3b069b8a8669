// The hall: one tile per table on the broker, from the hall scenes that `referee display
// --hall --web` streams on /events (cardtable/display/hall.py; the terminal draws the same
// scene). A tile leads to that table's own display, which the same command serves under
// table/<id>/. Only the tiles whose content changed are drawn again.
"use strict";

const hall = { link: "connecting", drawn: new Map() };

function hel(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function tileEl(t) {
  const a = hel("a", "tile");
  a.href = "table/" + encodeURIComponent(t.table) + "/";
  a.dataset.table = t.table;
  a.dataset.seq = String(t.seq);
  a.dataset.status = t.status || "";
  if (t.stale) a.classList.add("stale");
  if (t.status === "offline") a.classList.add("offline");
  const head = hel("div", "tile-head");
  const status = t.status === "online" ? "online" : t.status === "offline" ? "OFFLINE" : "?";
  head.append(hel("span", "tile-name", t.table),
    hel("span", "tile-status " + (t.status || "unknown"), status));
  const game = hel("div", "tile-game", (t.title || "") + (t.round != null ? " · round " + t.round : ""));
  const now = hel("div", "tile-now", t.headline);
  const seats = hel("div", "tile-seats");
  for (const s of t.seats) {
    const seat = hel("span", "tile-seat" + (s.turn ? " turn" : "") + (s.out ? " out" : "")
      + (s.winner ? " won" : ""), s.name + " " + (s.count == null ? "?" : s.count));
    seats.append(seat);
  }
  const parts = [head, game, now, seats];
  for (const alert of t.alerts) parts.push(hel("div", "tile-alert", alert));
  parts.push(hel("div", "tile-last", t.last || ""));
  a.append(...parts);
  return a;
}

function drawHall(sc) {
  const banners = [];
  if (hall.link !== "open") banners.push("No connection to the hall (referee display --hall --web): reconnecting…");
  if (sc && !sc.connected) banners.push("No connection to the broker" + (sc.error ? " (" + sc.error + ")" : "") + ": reconnecting…");
  document.getElementById("banners").replaceChildren(...banners.map((b) => hel("div", "banner", b)));
  if (!sc) return;
  document.body.dataset.count = String(sc.count);
  document.getElementById("summary").textContent =
    sc.count + (sc.count === 1 ? " table, " : " tables, ") + sc.online + " online";
  const box = document.getElementById("tiles");
  const seen = new Set();
  let before = null;
  // Tiles in the scene's order; a tile is rebuilt only when its content changed.
  for (let i = sc.tables.length - 1; i >= 0; i--) {
    const t = sc.tables[i];
    const key = JSON.stringify(t);
    seen.add(t.table);
    let entry = hall.drawn.get(t.table);
    if (!entry || entry.key !== key) {
      const fresh = tileEl(t);
      if (entry) entry.el.replaceWith(fresh);
      entry = { key: key, el: fresh };
      hall.drawn.set(t.table, entry);
    }
    if (entry.el.nextSibling !== before || entry.el.parentNode !== box) box.insertBefore(entry.el, before);
    before = entry.el;
  }
  for (const [id, entry] of hall.drawn) {
    if (!seen.has(id)) { entry.el.remove(); hall.drawn.delete(id); }
  }
}

function startHall() {
  let last = null;
  const stream = new EventSource("events");
  stream.onopen = () => { hall.link = "open"; drawHall(last); };
  stream.onerror = () => { hall.link = "lost"; drawHall(last); };
  stream.onmessage = (msg) => {
    hall.link = "open";
    last = JSON.parse(msg.data);
    drawHall(last);
  };
  drawHall(null);
}

startHall();
