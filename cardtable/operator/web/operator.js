// The operator page of `referee run` (cardtable/operator/site.py): pairing, the table during a
// game, a new game whose form is made from the games' option registry, the evening, the
// paired phones. Every change is a POST to /operator/api/… with this phone's CSRF token; the
// answer is {ok, text}: a refusal is shown in the referee's own words.
// Text goes into the page as text only (textContent, never markup), so a seat name, a table id
// or an option value cannot become HTML or script. The page's own words are in WORDS, one place
// for a translation to replace.
"use strict";

const WORDS = {
  get table() { return t("table"); },
  get pause() { return t("Pause"); },
  get resume() { return t("Resume"); },
  get paused() { return t("Paused: inputs are ignored until you resume"); },
  get waiting() { return t("Waiting for the referee…"); },
  get pile() { return t("Pile"); },
  cards: (n) => fmt(tn("{n} card", "{n} cards", n), { n: n }),
  get bottom() { return t("bottom"); },
  onTop: (card) => fmt(t("{card} on top"), { card: card }),
  lastCard: (c, card) => fmt(c.act === "draw"
    ? ({ camera: t("{name}'s draw (journal line {line}): read as {card} by the camera"),
      board: t("{name}'s draw (journal line {line}): read as {card} by the card reader"),
      console: t("{name}'s draw (journal line {line}): read as {card} at the console") }[c.source]
      || t("{name}'s draw (journal line {line}): read as {card}"))
    : ({ camera: t("{name}'s lay (journal line {line}): read as {card} by the camera"),
      board: t("{name}'s lay (journal line {line}): read as {card} by the card reader"),
      console: t("{name}'s lay (journal line {line}): read as {card} at the console") }[c.source]
      || t("{name}'s lay (journal line {line}): read as {card}")),
  { name: c.name, line: c.line, card: card }),
  get noCard() { return t("No card has been read in this game yet."); },
  get pickRankSuit() { return t("Pick the card it really was."); },
  get endAsk() { return t("End this game? It is kept in the evening's games, as it stands."); },
  get newAsk() { return t("A game is being played. End it and deal the new one?"); },
  seat: (k) => fmt(t("Seat {n}"), { n: k }),
  get optionDefault() { return t("default"); },
  get noneValue() { return t("none"); },
  get switchOn() { return t("on"); },
  get switchOff() { return t("off"); },
  get noGames() { return t("No game has been played tonight yet."); },
  gameRow: (g) => g.title + " · " + g.seats.join(", ") + " · "
    + (g.winners.length ? fmt(t("won by {names}"), { names: g.winners.join(", ") })
      : ({ finished: t("finished"), "in progress": t("in progress"), ended: t("ended"),
        unreadable: t("unreadable") }[g.status] || g.status)),
  get you() { return t(" (this phone)"); },
  get unpair() { return t("Unpair"); },
  unpairAsk: (name) => fmt(t("Unpair {name}? It must pair again to use this page."), { name: name }),
  get lightLed() { return t("Light its LED"); },
};

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAMES = { C: N_("clubs"), D: N_("diamonds"), H: N_("hearts"), S: N_("spades") };
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];

const page = { csrf: null, following: false, name: null, id: null, games: null, table: null, view: "table",
  newForm: null, fetching: false, again: false, correct: { rank: null, suit: null } };

function cardWords(code) {
  if (!code) return "?";
  const suit = code.slice(-1);
  return code.slice(0, -1) + (SUITS[suit] || suit);
}

// ---------------------------------------------------------------- the API

async function command(name, args, confirmText) {
  let answer = await api("command", { command: name, args: args || {}, confirmed: false });
  if (!answer.ok && answer.confirm) {
    if (!(await confirmed(confirmText || answer.text))) return answer;
    answer = await api("command", { command: name, args: args || {}, confirmed: true });
  }
  say(answer.text, answer.ok ? "ok" : "error");
  refresh();
  return answer;
}

// ---------------------------------------------------------------- pairing

function onUnpaired() { showPairing(); }

function showPairing() {
  showLocalCode();
  document.body.dataset.paired = "false";
  $("tabs").hidden = true;
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "pair";
  document.body.dataset.view = "pair";
}

// ---------------------------------------------------------------- views

function show(view) {
  page.view = view;
  document.body.dataset.view = view;
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== view;
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("on", b.dataset.view === view);
  }
  if (view === "new") drawNewForm();
  if (view === "evening") drawEvening();
  if (view === "phones") drawPhones();
  if (view === "check") drawCheck();
}

// ---------------------------------------------------------------- the table

async function refresh() {
  if (page.fetching) {
    page.again = true;
    return;
  }
  page.fetching = true;
  try {
    const got = await api("table");
    if (got.table !== undefined) {
      const over = page.table ? page.table.scene.seq : null;
      page.table = got;
      drawTable();
      if (page.view === "evening" && over !== got.scene.seq) drawEvening();
    }
  } finally {
    page.fetching = false;
    if (page.again) {
      page.again = false;
      refresh();
    }
  }
}

function drawTable() {
  const tb = page.table;
  const s = tb.scene;
  $("title").textContent = tb.title + " · " + WORDS.table + " " + tb.table;
  document.title = tb.title + " · " + WORDS.table + " " + tb.table;
  document.body.dataset.paused = String(tb.paused);
  document.body.dataset.running = String(tb.running);
  document.body.dataset.seq = String(s.seq || 0);
  const banners = (s.banners || []).map((b) => el("div", "banner " + b.kind, b.text));
  if (tb.other_game) banners.push(el("div", "banner alert", tb.other_game));
  $("banners").replaceChildren(...banners);
  const head = s.headline;
  $("headline").textContent = s.waiting ? WORDS.waiting : !head ? "" : (s.words || {}).turn || "";
  $("game-line").textContent = tb.title + ((s.words || {}).round ? " · " + s.words.round : "")
    + (tb.paused ? " · " + WORDS.paused : "");
  $("seats").replaceChildren(...(s.seats || []).map((seat) => {
    const box = el("div", "seat");
    box.classList.toggle("turn", Boolean(seat.turn));
    box.classList.toggle("out", Boolean(seat.out));
    box.classList.toggle("won", Boolean(seat.winner));
    box.append(el("span", "name", seat.name),
      el("span", "count", seat.count == null ? "?" : String(seat.count)));
    return box;
  }));
  const pile = s.pile || { cards: [], count: 0 };
  const top = pile.cards.length ? cardWords(pile.cards[pile.cards.length - 1]) : "";
  $("pile-line").textContent = WORDS.pile + ": " + WORDS.cards(pile.count || 0)
    + (top ? " · " + WORDS.onTop(top) : "")
    + (s.bottom && s.bottom.card ? " · " + WORDS.bottom + " " + cardWords(s.bottom.card) : "");
  $("verdicts").replaceChildren(...(s.verdicts || []).slice(0, 5).map((v) => el("li", "", v)));
  $("pause").textContent = tb.paused ? WORDS.resume : WORDS.pause;
  $("pause").classList.toggle("on", tb.paused);
  $("pause").setAttribute("aria-pressed", String(tb.paused));
  $("deal").hidden = !tb.can_deal;
  $("end").disabled = !tb.running;
  if (typeof drawRace === "function") drawRace(s);  // race.js, as on the display
  $("no-race").hidden = Boolean(s.race);
  drawCorrect();
}

// ---------------------------------------------------------------- correcting a card

function buildPickers() {
  const pick = (box, values, label, key) => {
    box.replaceChildren(...values.map((v) => {
      const b = el("button", "pick", label(v));
      b.type = "button";
      b.dataset.value = v;
      if (key === "suit" && (v === "H" || v === "D")) b.classList.add("red");
      b.addEventListener("click", () => {
        page.correct[key] = v;
        for (const o of box.children) o.classList.toggle("on", o === b);
        $("correct-send").disabled = !(page.correct.rank && page.correct.suit);
      });
      return b;
    }));
  };
  pick($("ranks"), RANKS, (r) => r, "rank");
  pick($("suits"), Object.keys(SUITS), (s) => SUITS[s], "suit");
  for (const b of $("suits").children) {
    b.setAttribute("aria-label", t(SUIT_NAMES[b.dataset.value]));
    b.classList.add("suit-" + b.dataset.value);
  }
}

function drawCorrect() {
  const c = page.table && page.table.last_card;
  $("open-correct").disabled = !c;
  if (!c) {
    $("correct-what").textContent = WORDS.noCard;
    return;
  }
  $("correct-what").textContent = WORDS.lastCard(c, cardWords(c.card)) + ". "
    + WORDS.pickRankSuit;
}

function openCorrect() {
  page.correct = { rank: null, suit: null };
  for (const b of document.querySelectorAll(".pick")) b.classList.remove("on");
  $("correct-send").disabled = true;
  $("correct").hidden = false;
  drawCorrect();
  $("correct").scrollIntoView({ block: "nearest" });
}

async function sendCorrect() {
  const c = page.table.last_card;
  const card = page.correct.rank + page.correct.suit;
  const answer = await command("correct", { line: c.line, card: card });
  if (answer.ok) $("correct").hidden = true;
}

// ---------------------------------------------------------------- a new game

async function loadGames() {
  if (!page.games) {
    const g = await api("games");
    if (g.games) page.games = g;
  }
  return page.games;
}

function defaultForm() {
  const conf = page.table ? page.table.configured : null;
  const game = conf ? conf.game : page.games.games[0].name;
  return { game: game, seats: conf ? conf.seats.slice() : ["", ""],
    dealer: conf ? conf.dealer : 0, options: conf ? Object.assign({}, conf.options) : {} };
}

function gameSpec(name) { return page.games.games.find((g) => g.name === name); }

async function drawNewForm() {
  if (!(await loadGames())) return;
  if (!page.newForm) page.newForm = defaultForm();
  const f = page.newForm;
  const spec = gameSpec(f.game);
  const most = Math.min(spec.max_seats, page.games.pads || spec.max_seats);
  while (f.seats.length < spec.min_seats) f.seats.push("");
  if (f.seats.length > most) f.seats.length = most;
  $("game-choices").replaceChildren(...page.games.games.map((g) => {
    const label = el("label", "choice");
    const input = el("input");
    input.type = "radio";
    input.name = "game";
    input.value = g.name;
    input.checked = g.name === f.game;
    input.addEventListener("change", () => {
      f.game = g.name;
      f.options = {};
      drawNewForm();
    });
    label.append(input, el("span", "", g.title));
    return label;
  }));
  $("seat-count").textContent = String(f.seats.length);
  $("fewer").disabled = f.seats.length <= spec.min_seats;
  $("more").disabled = f.seats.length >= most;
  $("seat-names").replaceChildren(...seatInputs(f.seats, (k, text) => {
    f.seats[k] = text;
    drawDealers();
  }));
  drawDealers();
  $("options").replaceChildren(...spec.options.map((o) => optionField(o, f)));
}

function drawDealers() {
  const f = page.newForm;
  if (f.dealer >= f.seats.length) f.dealer = 0;
  $("dealer").replaceChildren(...f.seats.map((name, k) => {
    const o = el("option", "", name || WORDS.seat(k + 1));
    o.value = String(k);
    o.selected = k === f.dealer;
    return o;
  }));
}

// One field per option of the registry: its name, its allowed values, its explanation.
function optionField(o, f) {
  const box = el("div", "option");
  box.dataset.option = o.name;
  const value = o.name in f.options ? f.options[o.name] : o.default;
  const head = el("div", "option-head");
  const id = "opt-" + o.name;
  const label = el("label", "option-name", o.label || o.name.replace(/_/g, " "));
  label.htmlFor = id;
  head.append(label);
  let input;
  if (o.kind === "switch") {
    input = el("input");
    input.type = "checkbox";
    input.checked = Boolean(value);
    input.className = "switch";
    input.addEventListener("change", () => { f.options[o.name] = input.checked; });
  } else if (o.kind === "choice") {
    input = el("select");
    for (const c of o.choices) {
      const opt = el("option", "", (o.choice_labels || {})[c] || c);
      opt.value = c;
      opt.selected = c === value;
      input.append(opt);
    }
    input.addEventListener("change", () => { f.options[o.name] = input.value; });
  } else {
    input = el("input");
    input.type = "number";
    input.inputMode = o.kind === "whole" ? "numeric" : "decimal";
    input.min = String(o.minimum);
    if (o.maximum != null) input.max = String(o.maximum);
    input.step = o.kind === "whole" ? "1" : "any";
    input.value = value == null ? "" : String(value);
    if (o.optional) input.placeholder = WORDS.noneValue;
    input.addEventListener("input", () => {
      const text = input.value.trim();
      if (text === "" && o.optional) f.options[o.name] = null;
      else f.options[o.name] = Number(text);
    });
  }
  input.id = id;
  head.append(input);
  // the default in the page's words: on or off, a choice's words, none
  const shown = o.default == null ? WORDS.noneValue
    : o.kind === "switch" ? (o.default ? WORDS.switchOn : WORDS.switchOff)
      : (o.choice_labels || {})[o.default] || String(o.default);
  box.append(head, el("div", "option-help", o.help.replace(/`/g, "")),
    el("div", "option-allowed", o.allowed + " · " + WORDS.optionDefault + " " + shown
      + (o.unit && o.kind !== "seconds" ? "" : "")));
  return box;
}

async function startGame(event) {
  event.preventDefault();
  const f = page.newForm;
  f.dealer = Number($("dealer").value);
  const spec = gameSpec(f.game);
  const options = {};
  for (const o of spec.options) if (o.name in f.options) options[o.name] = f.options[o.name];
  const answer = await command("new", { game: f.game, seats: f.seats, dealer: f.dealer,
    options: options }, WORDS.newAsk);
  if (answer.ok) {
    page.newForm = null;
    show("table");
  }
}

// ---------------------------------------------------------------- the evening

async function drawEvening() {
  const h = await api("history");
  const scene = page.table ? page.table.scene : null;
  if (typeof drawStandings === "function" && scene) drawStandings(scene);  // standings.js
  const games = (h.history && h.history.evening) || [];
  $("games").replaceChildren(...(games.length ? games.slice().reverse().map((g) => {
    const li = el("li", "game-row");
    li.append(el("span", "when", (g.start || "").slice(11, 16)), el("span", "", WORDS.gameRow(g)));
    return li;
  }) : [el("li", "empty", WORDS.noGames)]));
  $("oplog").replaceChildren(...(h.log || []).slice().reverse().map((x) => el("li",
    x.ok ? "" : "refused", String(x.time || "").slice(11, 16) + " " + x.by + ": " + x.command
    + " — " + x.text)));
}

// ---------------------------------------------------------------- the phones

async function drawPhones() {
  $("rename").value = page.name || "";
  const d = await api("devices");
  $("devices").replaceChildren(...(d.devices || []).map((dev) => {
    const li = el("li", "device");
    li.append(el("span", "name", dev.name + (dev.id === d.you ? WORDS.you : "")));
    const b = el("button", "danger", WORDS.unpair);
    b.type = "button";
    b.addEventListener("click", async () => {
      if (!(await confirmed(WORDS.unpairAsk(dev.name)))) return;
      const answer = await api("unpair", { id: dev.id });
      say(answer.text, answer.ok ? "ok" : "error");
      if (dev.id === d.you) start();
      else drawPhones();
    });
    li.append(b);
    return li;
  }));
}

async function pairAnother() {
  const p = await api("pairing");
  if (!p.code) return;
  $("another-code").textContent = p.code;
  $("another-qr").src = "data:image/svg+xml;base64," + btoa(p.svg);
  $("another").hidden = false;
}

async function rename(event) {
  event.preventDefault();
  const answer = await api("rename", { name: $("rename").value });
  say(answer.text, answer.ok ? "ok" : "error");
  start();
}

// ---------------------------------------------------------------- the table check

async function drawCheck() {
  if (page.view !== "check") return;
  const c = await api("check");
  if (!c.seats) return;
  $("check-pause").hidden = c.paused;
  $("check-seats").replaceChildren(...c.seats.map((seat) => {
    const box = el("div", "check-seat");
    box.dataset.seat = String(seat.seat);
    const fresh = ["slap", "call"].some((act) => seat[act] && seat[act].ago_s < 5);
    box.classList.toggle("fresh", fresh);
    box.append(el("div", "name", seat.name != null ? seat.name
      : fmt(t("pad {n}"), { n: seat.seat + 1 })));  // a pad wired beyond the game's seats
    for (const act of ["slap", "call"]) {
      const p = seat[act];
      const words = act === "slap"
        ? (p ? t("slap: {at} · reached the referee {ms} ms after the edge") : t("slap: not pressed yet"))
        : (p ? t("call: {at} · reached the referee {ms} ms after the edge") : t("call: not pressed yet"));
      box.append(el("div", "press", fmt(words, p ? { at: p.at, ms: p.delay_ms } : {})));
    }
    if (c.leds.gpio || c.leds.board) {
      const b = el("button", "", WORDS.lightLed);
      b.type = "button";
      b.addEventListener("click", async () => {
        const answer = await api("check/led", { seat: seat.seat });
        say(answer.text, answer.ok ? "ok" : "error");
      });
      box.append(b);
    }
    return box;
  }));
  const parts = [];
  const part = (good, text) => parts.push(el("li", good ? "good" : "bad", text));
  if (c.board) {
    const b = c.board;
    part(b.online, fmt(!b.online ? t("Table board on {port}: OFFLINE")
      : b.synced ? t("Table board on {port}: online{name}, clock synced ±{error} µs, drift {drift} ppm")
        : t("Table board on {port}: online{name}, clock not synced yet"),
    { port: b.port, name: b.name ? " (" + b.name + ")" : "", error: b.error_us, drift: b.drift_ppm }));
  }
  if (c.camera) {
    const cam = c.camera;
    part(cam.frames > 0, fmt(cam.card ? t("Camera: {n} frames read, reads {card} ({confidence})")
      : cam.outline ? t("Camera: {n} frames read, sees a card it cannot read")
        : t("Camera: {n} frames read, sees no card"),
    { n: cam.frames, card: cam.card, confidence: cam.confidence }));
  }
  const sources = { virtual: t("a virtual deck"), console: t("typed at the console"),
    board: t("the table board"), camera: t("the camera") };
  part(true, fmt(t("Cards: {source}"), { source: sources[c.card_source] || c.card_source }));
  if (c.broker) {
    part(c.broker.connected, fmt(c.broker.connected ? t("Broker {url}: connected")
      : t("Broker {url}: NOT CONNECTED"), { url: c.broker.url }));
  } else part(true, t("Broker: none (the table's own display is served here)"));
  part(true, fmt(t("Displays following this table now: {n}"), { n: c.displays }));
  $("check-parts").replaceChildren(...parts);
  const img = $("check-camera");
  img.hidden = !c.camera || !c.camera.frames;
  if (!img.hidden) img.src = "api/check/camera.jpg?t=" + Date.now();
  clearTimeout(drawCheck.timer);
  drawCheck.timer = setTimeout(drawCheck, 700);
}

// ---------------------------------------------------------------- start

function follow() {
  // The table's display stream (open, read-only) says when something changed.
  const stream = new EventSource("../events");
  stream.onmessage = () => refresh();
}

// Why the pairing link was refused: set by the table in a cookie (a query any site could
// have linked to, with words of its own), shown once.
function takeRefusal() {
  const m = document.cookie.match(/(?:^|;\s*)refused=([^;]*)/);
  if (!m) return null;
  document.cookie = "refused=; Max-Age=0; path=/operator/; SameSite=Strict";
  try { return decodeURIComponent(m[1]); } catch (e) { return null; }
}

async function start() {
  const refused = takeRefusal();
  if (refused) say(refused, "error");
  const s = await api("/operator/api/session");
  session.tableScreen = s.table_screen === true;
  if (await pageLanguage(s) !== false) {
    wirePairing(start);
    buildPickers();
  }
  if (!s.paired) {
    showPairing();
    return;
  }
  page.csrf = s.csrf;
  session.csrf = s.csrf;
  page.name = s.name;
  page.id = s.id;
  document.body.dataset.paired = "true";
  $("who").textContent = s.name;
  $("tabs").hidden = false;
  await refresh();
  show(page.view === "pair" ? "table" : page.view);
  if (!page.following) {
    page.following = true;
    follow();
  }
}

function wire() {
  buildPickers();
  wirePairing(start);
  $("pause").addEventListener("click", () => command(page.table.paused ? "resume" : "pause"));
  $("deal").addEventListener("click", () => command("deal"));
  $("end").addEventListener("click", () => command("end", {}, WORDS.endAsk));
  $("open-correct").addEventListener("click", openCorrect);
  $("correct-send").addEventListener("click", sendCorrect);
  $("correct-cancel").addEventListener("click", () => { $("correct").hidden = true; });
  $("new-form").addEventListener("submit", startGame);
  $("fewer").addEventListener("click", () => { page.newForm.seats.pop(); drawNewForm(); });
  $("more").addEventListener("click", () => { page.newForm.seats.push(""); drawNewForm(); });
  $("dealer").addEventListener("change", () => { page.newForm.dealer = Number($("dealer").value); });
  $("rename-form").addEventListener("submit", rename);
  $("pair-another").addEventListener("click", pairAnother);
  $("check-pause").addEventListener("click", async () => {
    await command("pause");
    drawCheck();
  });
  for (const b of document.querySelectorAll("#tabs button")) {
    b.addEventListener("click", () => show(b.dataset.view));
  }
}

wire();
start();
