// The browser display: follows cardtable/<table>/{status,state,events} over MQTT-over-websockets
// and shows the pile's top cards, whose turn it is, who owes how many, the counts per seat, the
// last verdict and an offline banner. Settings come from config.json (written by
// `referee display --web`), overridable in the address: ?table=…&ws=…&username=…&password=…
"use strict";

const GAMES = {
  "beggar-my-neighbour": "Beggar My Neighbour",
  "banka-bever": "Banka bäver",
  "vandatta": "Vändåtta",
};
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RANKS = { 11: "J", 12: "Q", 13: "K", 14: "A" };
const KEEP = 8;

const view = {
  table: null, state: null, status: null, connected: false, error: null,
  events: [], session: null, seq: 0, rereads: 0,
};
let client = null;

function $(id) { return document.getElementById(id); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function name(seat) {
  const names = (view.state && view.state.seats) || [];
  return Number.isInteger(seat) && seat >= 0 && seat < names.length ? String(names[seat])
    : "seat " + seat;
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

function cardEl(text, top) {
  const c = el("div", "card" + (top ? " top" : ""));
  if (!text) {
    c.classList.add("back");
    return c;
  }
  const suit = text.slice(-1).toUpperCase();
  if (suit === "H" || suit === "D") c.classList.add("red");
  c.append(el("span", "rank", text.slice(0, -1)), el("span", "suit", SUITS[suit] || suit));
  return c;
}

function cardWord(text) {
  if (!text) return "face down";
  return text.slice(0, -1) + (SUITS[text.slice(-1).toUpperCase()] || text.slice(-1));
}

function words(v) {
  if (v.text) return v.text;
  return v.verdict + (v.seat != null ? " (" + name(v.seat) + ")" : "");
}

function eventKey(v) {
  return [v.session, v.seq, v.t, v.verdict, v.seat, v.code].join("|");
}

// ---------------------------------------------------------------- what the display knows

function onState(s) {
  const seq = Number.isInteger(s.seq) ? s.seq : 0;
  if (s.session !== view.session) {
    view.session = s.session;
    view.seq = seq;
    view.events = [];
  } else if (seq < view.seq && view.state) {
    return; // older than what is shown
  }
  view.seq = Math.max(view.seq, seq);
  view.state = s;
  const known = new Set(view.events.map(eventKey));
  for (const e of s.recent || []) {
    const ev = Object.assign({ session: s.session }, e);
    if (!known.has(eventKey(ev))) view.events.push(ev);
  }
  view.events.sort((a, b) => (a.seq || 0) - (b.seq || 0));
  view.events = view.events.slice(-KEEP);
}

// True when the event shows a gap or a new session: the state must be re-read.
function onEvent(e) {
  if (!Number.isInteger(e.seq)) return false;
  if (e.session !== view.session || e.seq > view.seq + 1) {
    view.events.push(e);
    view.events = view.events.slice(-KEEP);
    return true;
  }
  if (!view.events.some((x) => eventKey(x) === eventKey(e))) {
    view.events.push(e);
    view.events = view.events.slice(-KEEP);
  }
  view.seq = Math.max(view.seq, e.seq);
  return false;
}

function onMessage(topic, payload) {
  const base = "cardtable/" + view.table + "/";
  const text = new TextDecoder().decode(payload);
  if (topic === base + "status") {
    view.status = text.trim() || null;
  } else {
    let obj;
    try { obj = JSON.parse(text); } catch (e) { return; }
    if (!obj || typeof obj !== "object") return;
    if (topic === base + "state") {
      onState(obj);
    } else if (topic === base + "events" && onEvent(obj)) {
      view.rereads += 1;
      client.resubscribe(base + "state");
    }
  }
  draw();
}

// ---------------------------------------------------------------- drawing

function drawBanner() {
  const b = $("banner");
  b.className = "banner";
  const s = view.state || {};
  const alerts = s.alerts || {};
  if (view.status === "offline") {
    b.textContent = "REFEREE OFFLINE";
  } else if (!view.connected) {
    b.textContent = view.error ? "No connection: " + view.error : "Connecting to the table…";
    b.classList.add("connecting");
  } else if (alerts.board === "offline") {
    b.textContent = "TABLE BOARD OFFLINE";
  } else if (s.paused) {
    b.textContent = "PAUSED";
  } else if ((alerts.stuck || []).length) {
    const names = s.seats || [];
    b.textContent = alerts.stuck.map(
      (a) => (names[a.seat] || "seat " + a.seat) + ": " + a.button + " button stuck").join(" · ");
  } else {
    b.hidden = true;
    return;
  }
  b.hidden = false;
}

function draw() {
  document.body.dataset.status = view.status || "";
  document.body.dataset.connected = String(view.connected);
  document.body.dataset.seq = String(view.seq);
  drawBanner();
  const s = view.state;
  $("where").textContent = "table " + view.table;
  if (!s) return;
  const game = GAMES[s.game] || s.game || "Card table";
  $("game").textContent = game + (s.round != null ? " · round " + s.round : "");
  document.title = game + " · table " + view.table;

  const pile = s.pile || [];
  const pileBox = $("pile");
  pileBox.replaceChildren(...pile.slice(-3).map((c, i, a) => cardEl(c, i === a.length - 1)));
  if (!pile.length) pileBox.append(el("div", "sub", "empty"));
  $("pile-count").textContent = "(" + plural(pile.length, "card") + ")";
  const bottom = $("bottom");
  bottom.hidden = !(s.game === "banka-bever" || s.bottom);
  bottom.textContent = "Bottom card: " + (s.bottom ? cardWord(s.bottom) : "none");
  const match = $("match");
  match.hidden = !(s.current && typeof s.current === "object");
  if (!match.hidden) {
    const r = s.current.rank;
    match.textContent = "Play on: " + (RANKS[r] || r) + " or " + (SUITS[s.current.suit] || s.current.suit)
      + (s.stock != null ? " · stock " + s.stock : "");
  }

  const winners = s.winners || [];
  const turn = $("turn");
  turn.className = "turn";
  if (winners.length) {
    turn.textContent = (winners.length === 1 ? "Winner: " : "Shared win: ")
      + winners.map(name).join(" and ");
    turn.classList.add("winner");
  } else if (s.turn != null) {
    turn.textContent = name(s.turn) + " to play";
  } else {
    turn.textContent = s.over ? "Game over" : "";
  }
  const owes = $("owes");
  owes.hidden = !s.challenge;
  if (s.challenge) {
    owes.textContent = name(s.challenge.seat) + " owes " + plural(s.challenge.owes, "card")
      + " to " + name(s.challenge.by);
  }
  const claim = $("claim");
  claim.hidden = !s.claim;
  if (s.claim) claim.textContent = name(s.claim.seat) + " is collecting the pile";
  const drawNote = $("draw");
  drawNote.hidden = s.must_draw == null;
  if (s.must_draw != null) drawNote.textContent = name(s.must_draw) + " must draw";

  const out = new Set(s.out || []);
  const seats = (s.counts || []).map((count, i) => {
    const box = el("div", "seat");
    if (s.turn === i) box.classList.add("turn");
    if (out.has(i)) box.classList.add("out");
    if (winners.includes(i)) box.classList.add("won");
    const notes = [];
    if (s.challenge && s.challenge.seat === i) notes.push("owes " + s.challenge.owes);
    if (s.must_draw === i) notes.push("must draw");
    if (out.has(i)) notes.push("out");
    if (winners.includes(i)) notes.push("winner");
    if (s.totals && s.totals[i] != null) notes.push(s.totals[i] + " pts");
    box.append(el("div", "name", name(i)), el("div", "count", String(count)),
      el("div", "note", notes.join(" · ")));
    return box;
  });
  $("seats").replaceChildren(...seats);

  const evs = view.events;
  $("last").textContent = evs.length ? words(evs[evs.length - 1]) : "";
  $("older").replaceChildren(...evs.slice(0, -1).slice(-3).reverse().map((v) => el("li", "", words(v))));

  const round = [...evs].reverse().find((v) => v.verdict === "round_over");
  const scores = $("scores");
  scores.hidden = !round;
  if (round) {
    scores.textContent = (round.winner == null ? "Round blocked" : "Round won by " + name(round.winner))
      + ". Scores: " + (round.scores || []).map((x, i) => name(i) + " " + x).join(", ");
  }
}

// ---------------------------------------------------------------- start

async function start() {
  const q = new URLSearchParams(location.search);
  let cfg = {};
  try {
    cfg = await (await fetch("config.json", { cache: "no-store" })).json();
  } catch (e) {
    cfg = {};
  }
  view.table = q.get("table") || cfg.table || "1";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = q.get("ws") || cfg.ws
    || scheme + "://" + location.hostname + ":" + (cfg.ws_port || 9001) + "/mqtt";
  const username = q.has("username") ? q.get("username") : cfg.username;
  const password = q.has("password") ? q.get("password") : cfg.password;
  const base = "cardtable/" + view.table + "/";
  client = new MqttLite(url, { username, password });
  client.on("connect", () => { view.connected = true; view.error = null; draw(); })
    .on("close", () => { view.connected = false; draw(); })
    .on("error", (msg) => { view.error = msg; draw(); })
    .on("message", onMessage);
  client.subscribe(base + "status", 1);
  client.subscribe(base + "state", 1);
  client.subscribe(base + "events", 1);
  draw();
  client.connect();
}

start();
