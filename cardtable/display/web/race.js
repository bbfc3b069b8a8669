// The latest slap race and, at game end, the seats' slap statistics on the browser display
// (issue 11). The scene's `race` and `timing` (cardtable/display/race.py, which the terminal
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
// (x1), on the right each lane's words in columns (seat, offset, margin to the winner), as
// wide as the longest name needs. At most LANES slaps get a lane of their own; the later
// ones share one more lane (their ticks on it, their names beside it), so the timeline keeps
// its size with eight seats.
const RACE = { x0: 40, x1: 540, top: 50, lane: 58, name: 580, char: 29, offsetWidth: 270,
  marginWidth: 280 };
// The timeline is not drawn smaller than this (its lanes' words in px): with less room it
// gives fewer slaps a lane of their own, and without room for one, the race is its words.
const RACE_MIN_FONT_PX = 20;
const LANES = 4;
// The scene whose race is drawn (for a redraw when the window changes size).
let raceScene = null;

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

function drawTimeline(race, lanesMax) {
  const timed = race.slaps.filter((s) => s.offset_ns != null);
  if (!timed.length) return null;
  const span = Math.max(1, ...timed.map((s) => s.offset_ns));
  const xOf = (ns) => RACE.x0 + (ns / span) * (RACE.x1 - RACE.x0);
  const order = timed.slice().sort((a, b) => a.offset_ns - b.offset_ns);
  const own = order.length > lanesMax + 1 ? order.slice(0, lanesMax) : order;
  const later = order.slice(own.length);
  const lanes = own.length + (later.length ? 1 : 0);
  const longest = Math.max(...order.map((s) => s.name.length));
  const offsetX = RACE.name + RACE.char * longest + RACE.offsetWidth;
  const marginX = offsetX + 20;
  const width = marginX + RACE.marginWidth;
  const bottom = RACE.top + lanes * RACE.lane;
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${bottom + 12}`, class: "timeline",
    preserveAspectRatio: "xMinYMin meet", role: "img", "data-span-ns": span,
    "data-x0": RACE.x0, "data-x1": RACE.x1 });
  // The card that opened the race: a mark across every lane.
  svg.append(svgEl("rect", { class: "lay", x: RACE.x0 - 6, y: RACE.top - 8, width: 12,
    height: bottom - RACE.top + 16, rx: 4 }));
  svg.append(svgEl("text", { class: "lay-label", x: RACE.x0 - 6, y: RACE.top - 16 },
    raceCard(race.card) + (race.opened === "burn" ? " burned" : " laid")));
  svg.append(svgEl("text", { class: "scale", x: RACE.x1, y: RACE.top - 16 },
    order[order.length - 1].offset));
  svg.append(svgEl("text", { class: "heading", x: marginX, y: RACE.top - 16 }, "margin"));
  const tick = (s, mid) => svgEl("line", { class: "tick", x1: xOf(s.offset_ns),
    y1: mid - RACE.lane / 2 + 6, x2: xOf(s.offset_ns), y2: mid + RACE.lane / 2 - 6,
    "data-seat": s.seat, "data-name": s.name, "data-offset-ns": s.offset_ns,
    "data-kind": s.kind });
  const lane = (g, mid) => g.append(svgEl("line", { class: "lane", x1: RACE.x0, y1: mid,
    x2: width - 10, y2: mid }));
  own.forEach((s, i) => {
    const mid = RACE.top + i * RACE.lane + RACE.lane / 2;
    const g = svgEl("g", { class: "slap " + s.kind });
    lane(g, mid);
    g.append(tick(s, mid));
    const y = mid + 13;
    g.append(svgEl("text", { class: "label who", x: RACE.name, y: y }, s.name));
    g.append(svgEl("text", { class: "label when", x: offsetX, y: y }, s.offset));
    const mark = { won: "WON", false: "false slap", refused: "refused" }[s.kind]
      || (s.margin || "");
    g.append(svgEl("text", { class: "label mark", x: marginX, y: y }, mark));
    svg.append(g);
  });
  if (later.length) {
    const mid = RACE.top + own.length * RACE.lane + RACE.lane / 2;
    const g = svgEl("g", { class: "slap later" });
    lane(g, mid);
    for (const s of later) g.append(tick(s, mid));
    g.append(svgEl("text", { class: "label who", x: RACE.name, y: mid + 13 },
      "later: " + later.map((s) => s.name).join(", ")));
    svg.append(g);
  }
  return svg;
}

function drawRace(s) {
  raceScene = s;
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
  box.replaceChildren(head);
  // At game end the statistics take the room: the last race is its heading line only.
  if (!s.timing) fitTimeline();
}

// The timeline in the room the table leaves it (a window with eight seats may have little):
// the most lanes whose words stay RACE_MIN_FONT_PX or larger, else the race as words.
function fitTimeline() {
  const box = document.getElementById("race");
  const race = raceScene && !raceScene.waiting ? raceScene.race : null;
  if (!box || box.hidden || !race || raceScene.timing) return;
  for (const old of box.querySelectorAll("svg.timeline, .race-line")) old.remove();
  const main = box.closest("main");
  const timedSlaps = race.slaps.filter((s) => s.offset_ns != null).length;
  for (let lanes = LANES; timedSlaps && lanes >= 1; lanes -= 1) {
    const svg = drawTimeline(race, lanes);
    box.append(svg);
    const room = main.getBoundingClientRect().bottom - svg.getBoundingClientRect().top;
    const r = svg.getBoundingClientRect();
    const scale = Math.min(r.width / svg.viewBox.baseVal.width,
      Math.max(0, room) / svg.viewBox.baseVal.height);
    // A page held in the hand (the operator page) reads smaller type: data-min-font says.
    if (scale * 38 >= (Number(box.dataset.minFont) || RACE_MIN_FONT_PX)) {
      if (room < r.height) svg.style.maxHeight = Math.floor(room) + "px";
      return;
    }
    svg.remove();
    if (lanes === 1 || timedSlaps <= 1) break;
  }
  if (!race.timed) return;  // a referee without timing fields: the heading says it all
  // One line: the first two slaps (the winner and the runner-up, in a race won), the rest
  // counted.
  const words = document.createElement("div");
  words.className = "race-line";
  const first = race.slaps.slice().sort((a, b) => (a.offset_ns ?? 0) - (b.offset_ns ?? 0));
  const said = first.slice(0, 2).map((s) => s.name + (s.offset ? " " + s.offset : "")
    + ({ won: " WON", false: " false slap", refused: " refused" }[s.kind]
      || (s.margin ? " (" + s.margin + ")" : "")));
  if (first.length > 2) said.push((first.length - 2) + " later");
  words.textContent = raceCard(race.card) + (race.opened === "burn" ? " burned" : " laid")
    + " · " + said.join(" · ");
  box.append(words);
}

window.addEventListener("resize", fitTimeline);

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
