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

function tileEl(tile) {
  const a = hel("a", "tile");
  a.href = withLanguage("table/" + encodeURIComponent(tile.table) + "/");
  a.dataset.table = tile.table;
  a.dataset.seq = String(tile.seq);
  a.dataset.status = tile.status || "";
  if (tile.stale) a.classList.add("stale");
  if (tile.status === "offline") a.classList.add("offline");
  const head = hel("div", "tile-head");
  const status = tile.status === "online" ? t("online") : tile.status === "offline" ? t("OFFLINE") : "?";
  head.append(hel("span", "tile-name", tile.table),
    hel("span", "tile-status " + (tile.status || "unknown"), status));
  const game = hel("div", "tile-game", (tile.title || "")
    + (tile.round != null ? " · " + t("round {n}").replace("{n}", tile.round) : ""));
  const now = hel("div", "tile-now", tile.headline);
  const seats = hel("div", "tile-seats");
  for (const s of tile.seats) {
    const seat = hel("span", "tile-seat" + (s.turn ? " turn" : "") + (s.out ? " out" : "")
      + (s.winner ? " won" : ""), s.name + " " + (s.count == null ? "?" : s.count));
    seats.append(seat);
  }
  const parts = [head, game, now, seats];
  for (const alert of tile.alerts) parts.push(hel("div", "tile-alert", alert));
  parts.push(hel("div", "tile-last", tile.last || ""));
  a.append(...parts);
  return a;
}

function drawHall(sc) {
  const banners = [];
  if (hall.link !== "open") banners.push(t("No connection to the hall (referee display --hall --web): reconnecting…"));
  if (sc && !sc.connected) {
    banners.push(sc.error ? t("No connection to the broker ({error}): reconnecting…").replace("{error}", sc.error)
      : t("No connection to the broker: reconnecting…"));
  }
  document.getElementById("banners").replaceChildren(...banners.map((b) => hel("div", "banner", b)));
  if (!sc) return;
  document.body.dataset.count = String(sc.count);
  if (sc.lang && sc.lang !== I18N.lang) {
    // every tile drawn again in the new language, each in its place (forgetting them had left
    // the old ones on the page beside the new: every table twice)
    loadLanguage(sc.lang).then((changed) => {
      if (changed) { for (const entry of hall.drawn.values()) entry.key = ""; drawHall(sc); }
    });
  }
  document.getElementById("summary").textContent = sc.words ? sc.words.summary : "";
  const box = document.getElementById("tiles");
  const seen = new Set();
  let before = null;
  // Tiles in the scene's order; a tile is rebuilt only when its content changed.
  for (let i = sc.tables.length - 1; i >= 0; i--) {
    const tile = sc.tables[i];
    const key = JSON.stringify(tile);
    seen.add(tile.table);
    let entry = hall.drawn.get(tile.table);
    if (!entry || entry.key !== key) {
      const fresh = tileEl(tile);
      if (entry) entry.el.replaceWith(fresh);
      entry = { key: key, el: fresh };
      hall.drawn.set(tile.table, entry);
    }
    if (entry.el.nextSibling !== before || entry.el.parentNode !== box) box.insertBefore(entry.el, before);
    before = entry.el;
  }
  for (const [id, entry] of hall.drawn) {
    if (!seen.has(id)) { entry.el.remove(); hall.drawn.delete(id); }
  }
}

function startHall() {
  if (new URLSearchParams(location.search).get("theme") === "light") document.body.classList.add("light");
  let last = null;
  const stream = new EventSource(withLanguage("events"));
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
