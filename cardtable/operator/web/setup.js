// The set-up wizard (cardtable/operator/wizard.py): the table, its players, each pad learned
// by pressing it, the card source, displays elsewhere; then table.toml is written. Text goes
// into the page as text only; the page's own words are in WORDS, in the page's language
// (i18n.js).
"use strict";

const WORDS = {
  seat: (k) => fmt(t("Seat {n}"), { n: k }),
  press: (name, role) => fmt(role === "call" ? t("Press {name}'s call pad now…")
    : t("Press {name}'s slap pad now…"), { name: name }),
  learned: (line) => "GPIO " + line,
  get none() { return t("none"); },
  get learn() { return t("Learn"); },
  get forget() { return t("Forget"); },
  where: (path, exists) => fmt(exists ? t("Changing {path}") : t("Writing {path}"), { path: path }),
  get noCamera() { return t("no camera found on this machine"); },
  get sources() {
    return { board: t("The table board (card reader)"), camera: t("A camera over the pile"),
      console: t("Typed at the console"), virtual: t("A virtual deck (no cards)") };
  },
  roles: (role) => (role === "call" ? t("call") : t("slap")),
  get running() { return t("The table is running: what you save is used when the referee starts again."); },
  get systemLanguage() { return t("the system's"); },
  enrolCount: (k, n) => fmt(t("Card {k} of {n}"), { k: k, n: n }),
  deck: (name) => (name ? fmt(t("Deck: {name} (enrolled: its cards are read by their own faces)"), { name: name })
    : t("No deck enrolled: cards are read out of the box.")),
  enrolled: (name) => fmt(t("The deck is enrolled as {name}: save the set-up to use it."), { name: name }),
  prints: (letters) => fmt(t("Its index prints {letters}."), { letters: letters }),
  get allRead() { return t("Self-check: each card, read again from its photo turned round and askew, was read right."); },
  unread: (cards) => fmt(t("Self-check: read again from their photos turned round and askew, these were not read right: {cards}. The table may leave them unclear (type them at the console); enrol again with the cards better lit to read them."),
    { cards: cards }),
  unclear: (card) => fmt(t("{card} left unclear"), { card: card }),
  readAs: (card, got) => fmt(t("{card} read as {other}"), { card: card, other: got }),
  get checking() { return t("Checking the deck: each card is read again from its photo…"); },
  get seeing() {
    return { "no card": t("The camera sees no card."),
      "the card before": t("The card before is still there: take it away."),
      moving: t("A card is there: hold still…"), still: t("A card is lying still: taking it…") };
  },
  get enrolStopped() { return t("Enrolling stopped: nothing was written."); },
  enrolFailed: (why) => fmt(t("Enrolling failed: {why}"), { why: why }),
  get writeAgain() { return t("The deck is kept until then: make room, then write it again."); },
};
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const ROLES = ["slap", "call"];

const wiz = { answers: null, state: null, learning: false, enrolTimer: null, pictureAt: 0 };

function onUnpaired() {
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "pair";
  showLocalCode();
}

function taken() {
  const lines = [];
  for (const pad of wiz.answers.pads) for (const r of ROLES) if (pad[r] != null) lines.push(pad[r]);
  return lines;
}

function spec() { return wiz.state.games.find((g) => g.name === wiz.answers.game); }

function draw() {
  const a = wiz.answers;
  const g = spec() || wiz.state.games[0];
  while (a.seats.length < g.min_seats) a.seats.push("");
  if (a.seats.length > g.max_seats) a.seats.length = g.max_seats;
  while (a.pads.length < a.seats.length) a.pads.push({ slap: null, call: null, led: null });
  $("table-id").value = a.table_id;
  $("game").replaceChildren(...wiz.state.games.map((x) => {
    const o = el("option", "", x.title);
    o.value = x.name;
    o.selected = x.name === a.game;
    return o;
  }));
  $("seat-count").textContent = String(a.seats.length);
  $("fewer").disabled = a.seats.length <= g.min_seats;
  $("more").disabled = a.seats.length >= g.max_seats;
  $("seats").replaceChildren(...seatInputs(a.seats, (k, text) => {
    a.seats[k] = text;
    drawPads();
  }));
  drawPads();
  $("sources").replaceChildren(...Object.keys(WORDS.sources).map((s) => {
    const label = el("label", "choice");
    const input = el("input");
    input.type = "radio";
    input.name = "source";
    input.value = s;
    input.checked = s === a.card_source;
    input.addEventListener("change", () => { a.card_source = s; drawSources(); });
    label.append(input, el("span", "", WORDS.sources[s]));
    return label;
  }));
  drawSources();
  $("broker").value = a.broker_url || "";
  $("language").replaceChildren(...[["", WORDS.systemLanguage]].concat(wiz.state.languages || [])
    .map(([code, name]) => {
      const o = el("option", "", name);
      o.value = code;
      if (code) o.lang = code;
      o.selected = code === (a.language || "");
      return o;
    }));
}

function drawPads() {
  const a = wiz.answers;
  $("learn-note").textContent = wiz.state.learn || "";
  $("pads").replaceChildren(...a.seats.map((name, k) => {
    const row = el("div", "pad-row");
    row.dataset.seat = String(k);
    row.append(el("div", "name", name || WORDS.seat(k + 1)));
    for (const role of ROLES) {
      const line = a.pads[k][role];
      const cell = el("div", "row");
      cell.append(el("span", "pad-line", WORDS.roles(role) + ": " + (line == null ? WORDS.none
        : WORDS.learned(line))));
      const b = el("button", "", line == null ? WORDS.learn : WORDS.forget);
      b.type = "button";
      b.dataset.role = role;
      b.disabled = Boolean(wiz.state.learn) || wiz.learning;
      b.addEventListener("click", () => (line == null ? learn(k, role)
        : (a.pads[k][role] = null, drawPads())));
      cell.append(b);
      row.append(cell);
    }
    return row;
  }));
}

async function learn(seat, role) {
  say("");
  wiz.learning = true;
  drawPads();
  $("learning").hidden = false;
  $("learning-text").textContent = WORDS.press(wiz.answers.seats[seat] || WORDS.seat(seat + 1),
    role);
  $("mock-press").hidden = !wiz.state.mock;
  $("learning").scrollIntoView({ block: "nearest" });
  const answer = await api("learn", { seat: seat, role: role, taken: taken() });
  wiz.learning = false;
  $("learning").hidden = true;
  if (answer.ok) wiz.answers.pads[seat][role] = answer.line;
  say(answer.text, answer.ok ? "ok" : "error");
  drawPads();
}

function drawSources() {
  const a = wiz.answers;
  $("board-part").hidden = a.card_source !== "board";
  $("camera-part").hidden = a.card_source !== "camera";
  const ports = wiz.ports || (a.board_port ? [a.board_port] : []);
  $("board-port").replaceChildren(...ports.map((p) => {
    const o = el("option", "", p);
    o.value = p;
    o.selected = p === a.board_port;
    return o;
  }));
  const cams = wiz.state.cameras.length ? wiz.state.cameras : [];
  $("camera").replaceChildren(...(cams.length ? cams : [WORDS.noCamera]).map((c) => {
    const o = el("option", "", c);
    o.value = cams.length ? c : "";
    o.selected = c === a.camera_source;
    return o;
  }));
  $("enrol").disabled = !cams.length || Boolean(wiz.state.enrol);
  $("enrol-note").textContent = wiz.state.enrol || "";
  $("enrol-note").hidden = !wiz.state.enrol;
  $("preview-button").disabled = !cams.length;
  drawDeck();
}

// A card's code as the index shows it ("10♥"), the red suits marked for their colour.
function cardMark(code) {
  const suit = code.slice(-1);
  const span = el("span", suit === "H" || suit === "D" ? "red" : "", code.slice(0, -1) + (SUITS[suit] || suit));
  span.setAttribute("aria-label", code);
  return span;
}

function drawDeck() {
  $("deck-note").textContent = WORDS.deck(wiz.answers.camera_deck);
}

function drawEnrolment(e) {
  const running = e.state === "running";
  const cameraless = !wiz.state.cameras.length;
  $("enrolling").hidden = !running;
  $("enrol").disabled = running || cameraless || Boolean(wiz.state.enrol);
  $("preview-button").disabled = running || cameraless;  // the enrolment holds the camera
  if (!running) return;
  $("enrol-count").textContent = e.checking ? WORDS.checking
    : WORDS.enrolCount(Math.min(e.done + 1, e.total), e.total);
  $("enrol-card").replaceChildren(...(e.card ? [cardMark(e.card)] : []));
  $("enrol-colour").hidden = !e.no_colour;
  $("enrol-seeing").textContent = (!e.checking && WORDS.seeing[e.seeing]) || "";
  if (e.seeing && Date.now() - wiz.pictureAt > 900) {  // what the camera sees, once a second
    wiz.pictureAt = Date.now();
    $("enrol-picture").src = "api/enrol.jpg?at=" + wiz.pictureAt;  // shown once it loads
  }
}

function enrolEnded(e) {
  if (e.state === "done") {
    wiz.answers.camera_deck = e.deck;
    const letters = Object.entries(e.letters || {}).map(([rank, printed]) => rank + " = "
      + printed.join("/")).join(", ");
    say(WORDS.enrolled(e.deck), "ok");
    // what it learned and its self-check stay on the page (the message above fades)
    $("enrol-result").textContent = [letters ? WORDS.prints(letters) : "",
      e.unread.length ? WORDS.unread(e.unread.map(([card, got]) => (got ? WORDS.readAs(card, got)
        : WORDS.unclear(card))).join(", ")) : WORDS.allRead].filter(Boolean).join(" ");
    $("enrol-result").hidden = false;
  } else if (e.state === "stopped") {
    say(WORDS.enrolStopped, "ok");
  } else if (e.state === "failed") {
    say(WORDS.enrolFailed(e.why || "") + (e.can_write_again ? " " + WORDS.writeAgain : ""),
      "error");
  }
  $("enrol-write").hidden = !(e.state === "failed" && e.can_write_again);
  drawDeck();
}

async function followEnrolment() {
  clearTimeout(wiz.enrolTimer);
  const e = await api("enrol");
  if (e.state === undefined) {  // no answer: try again
    wiz.enrolTimer = setTimeout(followEnrolment, 2000);
    return;
  }
  drawEnrolment(e);
  if (e.state === "running") wiz.enrolTimer = setTimeout(followEnrolment, 400);
  else enrolEnded(e);
}

async function writeAgain() {
  const answer = await api("enrol/write", {});
  if (answer.ok) enrolEnded(answer);
  else say(answer.text, "error");
}

async function enrol() {
  say("");
  $("enrol-write").hidden = true;
  $("enrol-result").hidden = true;
  const answer = await api("enrol", { source: $("camera").value });
  if (!answer.ok) {
    say(answer.text, "error");
    return;
  }
  $("preview").hidden = true;
  $("enrol-picture").hidden = true;
  drawEnrolment(answer);
  followEnrolment();
}

async function probe() {
  say(t("Asking every serial port…"), "ok");
  const answer = await api("probe", {});
  say(answer.text, answer.ok ? "ok" : "error");
  wiz.ports = (answer.boards || []).map((b) => b.port);
  if (wiz.ports.length) wiz.answers.board_port = wiz.ports[0];
  drawSources();
}

async function save(event) {
  event.preventDefault();
  const a = wiz.answers;
  a.table_id = $("table-id").value.trim();
  a.game = $("game").value;
  a.broker_url = $("broker").value.trim() || null;
  a.language = $("language").value || null;
  if (a.card_source === "board") a.board_port = $("board-port").value || null;
  if (a.card_source === "camera") a.camera_source = $("camera").value || null;
  const body = Object.assign({}, a, { pads: a.pads.slice(0, a.seats.length) });
  if (!body.pads.some((p) => p.slap != null)) body.pads = [];
  const answer = await api("save", { answers: body });
  say(answer.text, answer.ok ? "ok" : "error");
  if (answer.ok && !wiz.state.running) {  // the answer says the table starts now
    setTimeout(() => { location.href = "/operator/"; }, 3000);
  }
}

async function start() {
  const s = await api("/operator/api/session");
  session.tableScreen = s.table_screen === true;
  if (await pageLanguage(s) !== false) wirePairing(start);
  if (!s.paired) {
    onUnpaired();
    return;
  }
  session.csrf = s.csrf;
  $("who").textContent = s.name;
  wiz.state = await api("state");
  wiz.answers = wiz.state.answers;
  $("where").textContent = WORDS.where(wiz.state.path, wiz.state.exists)
    + (wiz.state.running ? ". " + WORDS.running : "");
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "wizard";
  draw();
  const e = wiz.state.enrolment;
  if (e && e.state === "running") followEnrolment();
  // a deck enrolled before the page was opened again (and not saved since): it is this one's
  if (e && e.state === "done" && e.deck && e.deck !== wiz.answers.camera_deck) enrolEnded(e);
}

function wire() {
  wirePairing(start);
  $("wizard").addEventListener("submit", save);
  $("game").addEventListener("change", () => { wiz.answers.game = $("game").value; draw(); });
  $("fewer").addEventListener("click", () => { wiz.answers.seats.pop(); draw(); });
  $("more").addEventListener("click", () => { wiz.answers.seats.push(""); draw(); });
  $("table-id").addEventListener("input", () => { wiz.answers.table_id = $("table-id").value; });
  $("mock-press").addEventListener("click", () => api("mock-press", { taken: taken() }));
  $("probe").addEventListener("click", probe);
  $("enrol").addEventListener("click", enrol);
  $("enrol-write").addEventListener("click", writeAgain);
  $("enrol-picture").addEventListener("load", () => { $("enrol-picture").hidden = false; });
  $("enrol-stop").addEventListener("click", () => api("enrol/stop", {}));
  $("preview-button").addEventListener("click", () => {
    const img = $("preview");
    img.src = "api/camera.jpg?source=" + encodeURIComponent($("camera").value);
    img.hidden = false;
  });
}

wire();
start();
