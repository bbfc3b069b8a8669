// The evening's standings on the browser display: the scene's `standings` (drawn the same way
// by the terminal, cardtable/display/standings.py): wins per player and, in a Vändåtta
// points game, the latest rounds' hand scores with running totals. display.js calls
// drawStandings(scene) after each scene.
"use strict";

//: Rounds of a points game the page shows (the latest; the terminal shows more).
const STANDINGS_ROUNDS = 4;

function drawStandings(s) {
  const box = document.getElementById("standings");
  if (!box) return;
  const st = s && !s.waiting ? s.standings : null;
  box.hidden = !st;
  if (!st) return;
  const parts = [];
  if (st.players.length) {
    const line = document.createElement("div");
    line.className = "standings-line";
    const head = document.createElement("b");
    head.textContent = st.words.tonight;
    line.append(head, document.createTextNode(
      st.players.map((p) => p.name + " " + p.text).join(" · ")));
    parts.push(line);
  }
  const pts = st.points;
  if (pts && pts.rounds.length) {
    const table = document.createElement("table");
    table.className = "points";
    const caption = document.createElement("caption");
    caption.textContent = st.words.caption;
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
    table.append(row([st.words.round, st.words.won_by].concat(pts.seats), "th"));
    const shown = pts.rounds.slice(-STANDINGS_ROUNDS);
    const earlier = pts.hidden + pts.rounds.length - shown.length;
    if (earlier) {
      table.append(row(["…", st.words.earlier.replace("{n}", String(earlier))]
        .concat(pts.seats.map(() => "")), "td"));
    }
    for (const r of shown) table.append(row([String(r.round), r.winner].concat(r.cells), "td"));
    parts.push(table);
  }
  box.replaceChildren(...parts);
}
