// The browser display: draws the scenes that `referee display --web` streams on /events
// (server-sent events; the command is the MQTT client, the page never talks to the broker).
// A scene says everything the display shows, in words of its language
// (cardtable/display/scene.py): the terminal display draws the same scene, so both show the
// same things in the same words. The page's own labels come from i18n.js; ?lang=sv asks for
// Swedish scenes. Settings (speech, sounds, four-colour suits, light theme) are buttons at the
// foot, kept in this browser, and can be given in the address (?speech=1&sounds=1&suits=4&
// theme=light) for a screen nobody touches.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: N_("clubs"), D: N_("diamonds"), H: N_("hearts"), S: N_("spades") };

const page = { scene: null, link: "connecting", said: null };

function $(id) { return document.getElementById(id); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

// A suit's class: its colour in the two-colour and the four-colour themes.
function suitClass(suit) {
  return "suit-" + (SUITS[suit] ? suit : "X") + (suit === "H" || suit === "D" ? " red" : "");
}

// A suit symbol, coloured by its suit (the shapes tell the suits apart without colour).
function suitEl(suit) {
  const e = el("span", "suit-mark " + suitClass(suit), SUITS[suit] || String(suit));
  e.setAttribute("role", "img");
  e.setAttribute("aria-label", t(SUIT_NAMES[suit] || String(suit)));
  return e;
}

// A card in running text ("9♥"), its suit coloured; "face down" for a hidden card.
function cardText(code) {
  if (!code) return el("span", "face-down", t("face down"));
  const suit = code.slice(-1);
  const span = el("span", "card-text " + suitClass(suit));
  span.append(code.slice(0, -1), suitEl(suit));
  return span;
}

// A card drawn as a card on the pile.
function cardEl(code, top) {
  const c = el("div", "card" + (top ? " top" : ""));
  if (!code) {
    c.classList.add("back");
    c.setAttribute("aria-label", t("face down"));
    return c;
  }
  const suit = code.slice(-1);
  c.className += " " + suitClass(suit);
  c.setAttribute("aria-label", code);
  c.append(el("span", "rank", code.slice(0, -1)), el("span", "suit", SUITS[suit] || suit));
  return c;
}

function line(id, parts) {
  const e = $(id);
  e.hidden = !parts;
  if (parts) e.replaceChildren(...parts.map((p) => (typeof p === "string" ? document.createTextNode(p) : p)));
}

// The last play: its words (the scene's, in its language) with the cards drawn in them.
function playParts(s) {
  const play = s.last_play;
  const cards = [];
  (play.cards || []).forEach((c, i) => { if (i) cards.push(" "); cards.push(cardText(c)); });
  return fill(s.words.last_play || "", { cards: cards, card: play.as ? cardText(play.as) : "" });
}

// ---------------------------------------------------------------- settings

const SETTINGS = { speech: false, sounds: false, suits4: false, light: false };

function loadSettings() {
  try {
    Object.assign(SETTINGS, JSON.parse(localStorage.getItem("display-settings") || "{}"));
  } catch (err) { /* a browser that keeps nothing */ }
  const q = new URLSearchParams(location.search);
  if (q.has("speech")) SETTINGS.speech = q.get("speech") === "1";
  if (q.has("sounds")) SETTINGS.sounds = q.get("sounds") === "1";
  if (q.has("suits")) SETTINGS.suits4 = q.get("suits") === "4";
  if (q.has("theme")) SETTINGS.light = q.get("theme") === "light";
}

function saveSettings() {
  try { localStorage.setItem("display-settings", JSON.stringify(SETTINGS)); } catch (err) { /* */ }
}

function drawSettings() {
  document.body.classList.toggle("suits4", SETTINGS.suits4);
  document.body.classList.toggle("light", SETTINGS.light);
  for (const [id, key] of [["speech", "speech"], ["sounds", "sounds"], ["suits4", "suits4"], ["theme", "light"]]) {
    $(id).setAttribute("aria-pressed", String(SETTINGS[key]));
  }
  const note = $("speech-note");
  const said = SETTINGS.speech ? speechNote(I18N.lang) : "";
  note.hidden = !said;
  note.textContent = said;
}

function toggle(key) {
  SETTINGS[key] = !SETTINGS[key];
  saveSettings();
  if (key === "speech" && !SETTINGS.speech) stopSpeaking();
  if (key === "sounds" && SETTINGS.sounds) unlockSounds();
  drawSettings();
}

function drawLanguages(s) {
  const box = $("langs");
  const langs = (s && s.languages) || [];
  const key = JSON.stringify(langs) + I18N.lang;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren(...langs.map(([code, name]) => {
    const a = el("a", "lang", name);
    const q = new URLSearchParams(location.search);
    q.set("lang", code);
    a.href = "?" + q.toString();
    a.lang = code;
    if (code === I18N.lang) a.setAttribute("aria-current", "true");
    return a;
  }));
}

// ---------------------------------------------------------------- speech and sounds

// The newest change's lead verdict, said once (the scene's ``said``): spoken when speech is
// on, a sound when sounds are.
function announce(s) {
  const said = s.said;
  if (!said) return;
  const key = s.session + ":" + said.seq;
  if (page.said === null) { page.said = key; return; }  // what was there before the page
  if (page.said === key) return;
  page.said = key;
  if (SETTINGS.speech && said.text) speak(said.text, s.lang || I18N.lang);
  if (SETTINGS.sounds && said.sound) playSound(said.sound);
}

// ---------------------------------------------------------------- drawing

function drawBanners(s) {
  const banners = [];
  if (page.link !== "open") {
    banners.push({ kind: "link", text: t("No connection to the display (referee display --web): reconnecting…")
      + (s && !s.waiting ? " " + t("The table shown may be out of date.") : "") });
  }
  for (const b of (s && s.banners) || []) banners.push(b);
  $("banners").replaceChildren(...banners.map((b) => el("div", "banner " + b.kind, b.text)));
}

function draw() {
  const s = page.scene;
  const body = document.body;
  body.dataset.link = page.link;
  drawBanners(s);
  drawLanguages(s);
  if (!s) return;
  body.dataset.status = s.status || "";
  body.dataset.connected = String(s.connected);
  body.dataset.seq = String(s.seq);
  body.classList.toggle("stale", s.stale || page.link !== "open");
  const words = s.words || {};
  $("where").textContent = words.where || "";
  if (s.waiting) {
    $("turn").textContent = words.turn || t("Waiting for the referee…");
    return;
  }
  $("game").textContent = s.title + (words.round ? " · " + words.round : "");
  document.title = s.title + (words.where ? " · " + words.where : "");

  const cards = s.pile.cards.slice(-3);
  $("pile").replaceChildren(...cards.map((c, i) => cardEl(c, i === cards.length - 1)));
  $("pile").setAttribute("aria-label", cards.filter(Boolean).join(" ") || t("empty"));
  if (!s.pile.count) $("pile").append(el("div", "empty", t("empty")));
  $("pile-count").textContent = "(" + (words.pile_count || s.pile.count) + ")";
  line("bottom", s.bottom && fill(t("Bottom card: {card}"),
    { card: s.bottom.card ? cardText(s.bottom.card) : t("none") }));
  const m = s.match;
  line("match", m && fill(words.match || "", { suit: suitEl(m.suit) })
    .concat(words.stock ? [" · " + words.stock] : []));

  const head = s.headline;
  const turn = $("turn");
  turn.className = "turn";
  turn.textContent = words.turn || "";
  if (head && head.kind === "winner") turn.classList.add("winner");
  line("play", s.last_play && words.last_play ? playParts(s) : null);
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
    if (seat.total_words) notes.push(seat.total_words);
    box.append(el("div", "name", seat.name), el("div", "count", seat.count == null ? "?" : String(seat.count)),
      el("div", "note", notes.join(" · ")));
    return box;
  }));

  const verdicts = s.verdicts;
  const last = $("last");
  if (last.textContent !== (verdicts.length ? verdicts[0] : "")) last.textContent = verdicts.length ? verdicts[0] : "";
  $("older").replaceChildren(...verdicts.slice(1, 4).map((v) => el("li", "", v)));
  line("scores", s.round_result && [s.round_result]);
  if (typeof drawStandings === "function") drawStandings(s);  // standings.js
  if (typeof drawRace === "function") drawRace(s);  // race.js
  drawPairing(s);
  announce(s);
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
  if (!answer || !answer.code) return;  // not the table's own screen, or no longer asked
  $("pairing-code").textContent = answer.code;
  $("pairing-where").textContent = answer.url;
  $("pairing-qr").src = "pairing.svg?c=" + encodeURIComponent(answer.code);
  box.style.bottom = (document.querySelector(".controls").offsetHeight + 16) + "px";  // above them
  box.hidden = false;
  setTimeout(() => { if (pairingShown === until) { pairingShown = 0; drawPairing(page.scene); } },
    Math.max(1000, Math.min(until, answer.until * 1000) - Date.now()));
}

// ---------------------------------------------------------------- start

function start() {
  loadSettings();
  $("speech").addEventListener("click", () => toggle("speech"));
  $("sounds").addEventListener("click", () => toggle("sounds"));
  $("suits4").addEventListener("click", () => toggle("suits4"));
  $("theme").addEventListener("click", () => toggle("light"));
  onVoicesChanged(drawSettings);
  drawSettings();
  const stream = new EventSource(withLanguage("events"));
  stream.onopen = () => { page.link = "open"; draw(); };
  stream.onerror = () => { page.link = "lost"; draw(); };
  stream.onmessage = (msg) => {
    page.link = "open";
    page.scene = JSON.parse(msg.data);
    if (page.scene.lang && page.scene.lang !== I18N.lang) {
      loadLanguage(page.scene.lang).then((changed) => { if (changed) { drawSettings(); draw(); } });
    }
    draw();
  };
  draw();
}

start();
