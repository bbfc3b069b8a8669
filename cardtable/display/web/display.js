// The browser display: draws the scenes that `referee display --web` streams on /events
// (server-sent events; the command is the MQTT client, the page never talks to the broker).
// A scene says everything the display shows, in words (cardtable/display/scene.py): the
// terminal display draws the same scene, so both show the same things in the same words.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

const page = { scene: null, link: "connecting" };

function $(id) { return document.getElementById(id); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

function isRed(suit) { return suit === "H" || suit === "D"; }

// A suit symbol, red for hearts and diamonds.
function suitEl(suit) {
  return el("span", "suit-mark" + (isRed(suit) ? " red" : ""), SUITS[suit] || String(suit));
}

// A card in running text ("9♥"), its suit coloured; "face down" for a hidden card.
function cardText(code) {
  if (!code) return el("span", "face-down", "face down");
  const suit = code.slice(-1);
  const span = el("span", "card-text" + (isRed(suit) ? " red" : ""));
  span.textContent = code.slice(0, -1) + (SUITS[suit] || suit);
  return span;
}

// A card drawn as a card on the pile.
function cardEl(code, top) {
  const c = el("div", "card" + (top ? " top" : ""));
  if (!code) {
    c.classList.add("back");
    return c;
  }
  const suit = code.slice(-1);
  if (isRed(suit)) c.classList.add("red");
  c.append(el("span", "rank", code.slice(0, -1)), el("span", "suit", SUITS[suit] || suit));
  return c;
}

function line(id, parts) {
  const e = $(id);
  e.hidden = !parts;
  if (parts) e.replaceChildren(...parts.map((p) => (typeof p === "string" ? document.createTextNode(p) : p)));
}

function playParts(play) {
  if (play.passed) return [play.name + " passed"];
  if (play.drew) return [play.name + " drew " + (play.drew === 1 ? "a card" : play.drew + " cards")];
  const parts = [play.name + " played "];
  (play.cards || []).forEach((c, i) => { if (i) parts.push(" "); parts.push(cardText(c)); });
  if (play.as) parts.push(" as ", cardText(play.as));
  return parts;
}

// ---------------------------------------------------------------- drawing

function drawBanners(s) {
  const banners = [];
  if (page.link !== "open") {
    banners.push({ kind: "link", text: "No connection to the display (referee display --web): "
      + "reconnecting…" + (s && !s.waiting ? " The table shown may be out of date." : "") });
  }
  for (const b of (s && s.banners) || []) banners.push(b);
  $("banners").replaceChildren(...banners.map((b) => el("div", "banner " + b.kind, b.text)));
}

function draw() {
  const s = page.scene;
  const body = document.body;
  body.dataset.link = page.link;
  drawBanners(s);
  if (!s) return;
  body.dataset.status = s.status || "";
  body.dataset.connected = String(s.connected);
  body.dataset.seq = String(s.seq);
  body.classList.toggle("stale", s.stale || page.link !== "open");
  $("where").textContent = s.table ? "table " + s.table : "";
  if (s.waiting) {
    $("turn").textContent = "Waiting for the referee…";
    return;
  }
  $("game").textContent = s.title + (s.round != null ? " · round " + s.round : "");
  document.title = s.title + (s.table ? " · table " + s.table : "");

  const cards = s.pile.cards.slice(-3);
  $("pile").replaceChildren(...cards.map((c, i) => cardEl(c, i === cards.length - 1)));
  if (!s.pile.count) $("pile").append(el("div", "empty", "empty"));
  $("pile-count").textContent = "(" + plural(s.pile.count, "card") + ")";
  line("bottom", s.bottom && ["Bottom card: ", s.bottom.card ? cardText(s.bottom.card) : "none"]);
  const m = s.match;
  line("match", m && ["Play on: " + m.rank + " or ", suitEl(m.suit)]
    .concat(m.stock != null ? [" · stock " + m.stock] : []));

  const head = s.headline;
  const turn = $("turn");
  turn.className = "turn";
  if (!head) {
    turn.textContent = "";
  } else if (head.kind === "winner") {
    turn.textContent = (head.names.length === 1 ? "Winner: " : "Shared win: ") + head.names.join(" and ");
    turn.classList.add("winner");
  } else if (head.kind === "turn") {
    turn.textContent = head.names[0] + " to play";
  } else {
    turn.textContent = "Game over";
  }
  line("play", s.last_play && ["Last play: "].concat(playParts(s.last_play)));
  $("notices").replaceChildren(...s.notices.map((n) => el("div", "notice " + n.kind, n.text)));

  const seats = $("seats");
  const n = Math.max(1, s.seats.length);
  seats.style.setProperty("--n", String(n));
  seats.style.setProperty("--portrait-n", String(n <= 4 ? n : Math.ceil(n / 2)));
  seats.replaceChildren(...s.seats.map((seat) => {
    const box = el("div", "seat");
    if (seat.turn) box.classList.add("turn");
    if (seat.out) box.classList.add("out");
    if (seat.winner) box.classList.add("won");
    if (seat.called) box.classList.add("called");
    const notes = seat.notes.slice();
    if (seat.total != null) notes.push(seat.total + " pts");
    box.append(el("div", "name", seat.name), el("div", "count", seat.count == null ? "?" : String(seat.count)),
      el("div", "note", notes.join(" · ")));
    return box;
  }));

  const verdicts = s.verdicts;
  $("last").textContent = verdicts.length ? verdicts[0] : "";
  $("older").replaceChildren(...verdicts.slice(1, 4).map((v) => el("li", "", v)));
  line("scores", s.round_result && [s.round_result]);
  if (typeof drawStandings === "function") drawStandings(s);  // standings.js
  if (typeof drawRace === "function") drawRace(s);  // race.js
  drawPairing(s);
}

// ---------------------------------------------------------------- pairing a phone

// `referee run`'s own display says while a phone may pair (the scene's `pairing`: until when);
// the code itself is answered (pairing.json) only to a browser on the referee's own machine,
// the table's screen: a display opened elsewhere on the network never gets it.
let pairingShown = 0;

async function drawPairing(s) {
  const box = $("pairing");
  const until = s && s.pairing ? s.pairing * 1000 : 0;
  if (!until || Date.now() > until) {
    box.hidden = true;
    pairingShown = 0;
    return;
  }
  if (pairingShown === until) return;
  pairingShown = until;
  let answer = null;
  try {
    const response = await fetch("pairing.json", { cache: "no-store" });
    if (response.ok) answer = await response.json();
  } catch (err) {
    answer = null;
  }
  if (!answer) return;  // not the table's own screen
  $("pairing-code").textContent = answer.code;
  $("pairing-where").textContent = answer.url;
  $("pairing-qr").src = "pairing.svg?c=" + encodeURIComponent(answer.code);
  box.hidden = false;
  setTimeout(() => { if (pairingShown === until) { pairingShown = 0; drawPairing(page.scene); } },
    Math.max(1000, Math.min(until, answer.until * 1000) - Date.now()));
}

// ---------------------------------------------------------------- start

function start() {
  const stream = new EventSource("events");
  stream.onopen = () => { page.link = "open"; draw(); };
  stream.onerror = () => { page.link = "lost"; draw(); };
  stream.onmessage = (msg) => {
    page.link = "open";
    page.scene = JSON.parse(msg.data);
    draw();
  };
  draw();
}

start();
