// The latest slap race and, at game end, the seats' slap statistics on the browser display
// (issue 11). The scene's `race` and `timing` (referee/app/display/race.py, which the terminal
// draws as one line and a table) are drawn here: the race as an SVG timeline made by the page,
// the card that opened it as a mark on the left, each slap as a tick placed by its offset from
// that card and labelled with the seat, the offset and the margin to the winner; a photo
// finish (decided by under 1 ms) gets a badge. One lane per slap, so slaps microseconds apart
// stay apart.
// display.js calls drawRace(scene) after each scene.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
// Geometry of the timeline, in viewBox units (the SVG is scaled to its box): one lane per
// slap, earliest on top; on the left a shared time axis from the lay (x0) to the last slap
// (x1), on the right each lane's words in columns (seat, offset, margin to the winner).
const RACE = { width: 1300, x0: 40, x1: 540, top: 50, lane: 58, name: 580, offset: 1000,
  margin: 1020 };

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text != null) e.textContent = text;
  return e;
}

function raceCard(code) {
  if (!code) return "a card";
  const suit = code.slice(-1);
  return code.slice(0, -1) + ({ C: "♣", D: "♦", H: "♥", S: "♠" }[suit] || suit);
}

function drawTimeline(race) {
  const timed = race.slaps.filter((s) => s.offset_ns != null);
  if (!timed.length) return null;
  const span = Math.max(1, ...timed.map((s) => s.offset_ns));
  const xOf = (ns) => RACE.x0 + (ns / span) * (RACE.x1 - RACE.x0);
  const order = timed.slice().sort((a, b) => a.offset_ns - b.offset_ns);
  const bottom = RACE.top + order.length * RACE.lane;
  const svg = svgEl("svg", { viewBox: `0 0 ${RACE.width} ${bottom + 12}`, class: "timeline",
    preserveAspectRatio: "xMinYMin meet", role: "img", "data-span-ns": span,
    "data-x0": RACE.x0, "data-x1": RACE.x1 });
  // The card that opened the race: a mark across every lane.
  svg.append(svgEl("rect", { class: "lay", x: RACE.x0 - 6, y: RACE.top - 8, width: 12,
    height: bottom - RACE.top + 16, rx: 4 }));
  svg.append(svgEl("text", { class: "lay-label", x: RACE.x0 - 6, y: RACE.top - 16 },
    raceCard(race.card) + (race.opened === "burn" ? " burned" : " laid")));
  svg.append(svgEl("text", { class: "scale", x: RACE.x1, y: RACE.top - 16 },
    order[order.length - 1].offset));
  svg.append(svgEl("text", { class: "heading", x: RACE.margin, y: RACE.top - 16 }, "margin"));
  order.forEach((s, i) => {
    const x = xOf(s.offset_ns);
    const mid = RACE.top + i * RACE.lane + RACE.lane / 2;
    const g = svgEl("g", { class: "slap " + s.kind });
    g.append(svgEl("line", { class: "lane", x1: RACE.x0, y1: mid, x2: RACE.width - 10, y2: mid }));
    g.append(svgEl("line", { class: "tick", x1: x, y1: mid - RACE.lane / 2 + 6, x2: x,
      y2: mid + RACE.lane / 2 - 6, "data-seat": s.seat, "data-name": s.name,
      "data-offset-ns": s.offset_ns, "data-kind": s.kind }));
    const y = mid + 13;
    g.append(svgEl("text", { class: "label who", x: RACE.name, y: y }, s.name));
    g.append(svgEl("text", { class: "label when", x: RACE.offset, y: y }, s.offset));
    const mark = { won: "WON", false: "false slap", refused: "refused" }[s.kind]
      || (s.margin || "");
    g.append(svgEl("text", { class: "label mark", x: RACE.margin, y: y }, mark));
    svg.append(g);
  });
  return svg;
}

function drawRace(s) {
  drawTiming(s);
  const box = document.getElementById("race");
  if (!box) return;
  const race = s && !s.waiting ? s.race : null;
  box.hidden = !race;
  box.classList.toggle("photo-finish", Boolean(race && race.photo_finish));
  if (!race) {
    box.replaceChildren();
    return;
  }
  const head = document.createElement("div");
  head.className = "race-head";
  const why = race.ruling === "won"
    ? (race.winner + " won" + (race.reason ? " · " + race.reason.replace("_", " ") : "")
      + (race.tie ? " · tie rule" : "") + (race.deciding ? " · by " + race.deciding : ""))
    : race.ruling === "false_slap" ? "false slap: nothing to slap" : "refused";
  head.textContent = "Race · " + why;
  if (race.photo_finish) {
    const badge = document.createElement("span");
    badge.className = "photo";
    badge.textContent = "Photo finish";
    head.append(" ", badge);
  }
  const parts = [head];
  // At game end the statistics take the room: the last race is its heading line only.
  const svg = s.timing ? null : drawTimeline(race);
  if (svg) parts.push(svg);
  else if (!s.timing && race.timed) {  // before the first lay: no offsets, the words
    const line = document.createElement("div");
    line.className = "race-line";
    line.textContent = race.line;
    parts.push(line);
  }
  box.replaceChildren(...parts);
}

// The seats' slap statistics at game end (the scene's `timing`).
function drawTiming(s) {
  const box = document.getElementById("timing");
  if (!box) return;
  const t = s && !s.waiting ? s.timing : null;
  box.hidden = !t;
  if (!t) return;
  const table = document.createElement("table");
  const caption = document.createElement("caption");
  caption.textContent = "Slap statistics";
  table.append(caption);
  const row = (cells, tag) => {
    const tr = document.createElement("tr");
    for (const c of cells) {
      const td = document.createElement(tag);
      td.textContent = c;
      tr.append(td);
    }
    return tr;
  };
  table.append(row(t.columns, "th"));
  for (const r of t.rows) {
    table.append(row([r.name, r.slaps, r.wins, r.false_slaps, r.races_lost, r.missed, r.median,
      r.best], "td"));
  }
  box.replaceChildren(table);
}
