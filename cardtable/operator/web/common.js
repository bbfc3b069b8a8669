// What the operator page and the set-up wizard share: building the page from text only
// (textContent, never markup: a name typed on a phone cannot become HTML or script), the
// answers of the API ({ok, text} in words), confirmation, pairing a phone.
"use strict";

const session = { csrf: null, tableScreen: false };

// The words of what both pages show, in the page's language (i18n.js).
const COMMON_WORDS = {
  get pairTitle() { return t("Pair this phone"); },
  get pairHow() { return t("Type the code the table's display shows (or scan its QR code with the camera)."); },
  get code() { return t("Code"); },
  get phoneName() { return t("This phone's name"); },
  get phoneNameExample() { return t("e.g. Anna's phone"); },
  get pair() { return t("Pair"); },
  get showCode() { return t("Show the code on the table's display"); },
  get codeShown() { return t("The table's display shows the code now."); },
  get ownScreen() { return t("This is the table's own screen. Code: "); },
  get qr() { return t("QR code of the pairing link"); },
  seat: (k) => fmt(t("Seat {n}"), { n: k }),
};

// The page's language: the one its address asks for, else the table's (the session says).
async function pageLanguage(session) {
  return loadLanguage(askedLanguage() || (session && session.lang) || "en");
}

function $(id) { return document.getElementById(id); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function say(text, kind) {
  const box = $("message");
  box.hidden = !text;
  box.textContent = text || "";
  box.className = "message " + (kind || "");
  if (text) clearTimeout(say.timer);
  if (text && kind !== "error") say.timer = setTimeout(() => say(""), 6000);
}

// A call of the API: "name" is under this page's api/, "/operator/api/…" is absolute. A change
// (body given) carries this phone's CSRF token. The answer is an object; a failure has ok false
// and the referee's words in text.
async function api(path, body) {
  const options = { credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    if (session.csrf) options.headers["X-CSRF-Token"] = session.csrf;
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(withLanguage(path.startsWith("/") ? path : "api/" + path), options);
  } catch (err) {
    return { ok: false, text: t("no answer from the referee: is it running?") };
  }
  let answer;
  try {
    answer = await response.json();
  } catch (err) {
    answer = { ok: false, text: fmt(t("the referee answered {status}"), { status: response.status }) };
  }
  if (response.status === 401 && typeof onUnpaired === "function") onUnpaired();
  if (!response.ok && answer.ok === undefined) answer.ok = false;
  return answer;
}

function confirmed(text) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
    dialog.showModal();
  });
}

// Pairing: the code typed (and a name for this phone); on the table's own screen the code is
// shown right here (pairing.json answers that machine only: the session says whether this is
// it, so that a phone does not ask to be told 404).
async function pairWith(code, name) {
  const answer = await api("/operator/api/pair", { code: code, name: name });
  say(answer.text, answer.ok ? "ok" : "error");
  return answer.ok;
}

async function showLocalCode() {
  const box = $("pair-local");
  if (!box) return;
  let answer = null;
  if (session.tableScreen) {
    try {
      const response = await fetch("/pairing.json", { cache: "no-store" });
      if (response.ok) answer = await response.json();
    } catch (err) {
      answer = null;
    }
  }
  if (answer && !answer.code) answer = null;  // not asked for now
  box.hidden = !answer;
  if (!answer) return;
  $("pair-local-code").textContent = answer.code;
  $("pair-local-qr").src = "/pairing.svg?c=" + encodeURIComponent(answer.code);
}

// The pairing view, built into <section id="pair">.
function buildPairing() {
  const w = COMMON_WORDS;
  const field = (label, id, attrs) => {
    const input = el("input");
    input.id = id;
    for (const [k, v] of Object.entries(attrs)) input.setAttribute(k, v);
    const l = el("label", "", label + " ");
    l.append(input);
    return l;
  };
  const form = el("form", "stack");
  form.id = "pair-form";
  form.autocomplete = "off";
  const submit = el("button", "primary", w.pair);
  submit.type = "submit";
  form.append(field(w.code, "pair-code", { inputmode: "numeric", maxlength: "12",
    autocomplete: "one-time-code", required: "" }),
  field(w.phoneName, "pair-name", { maxlength: "40", placeholder: w.phoneNameExample }), submit);
  const show = el("button", "", w.showCode);
  show.type = "button";
  show.id = "show-code";
  const local = el("div", "panel pair-local");
  local.id = "pair-local";
  local.hidden = true;
  const code = el("strong");
  code.id = "pair-local-code";
  const qr = el("img");
  qr.id = "pair-local-qr";
  qr.alt = w.qr;
  qr.width = 240;
  qr.height = 240;
  const said = el("p", "", w.ownScreen);
  said.append(code);
  local.append(said, qr);
  $("pair").replaceChildren(el("h1", "", w.pairTitle), el("p", "", w.pairHow), form, show,
    local);
}

// The seats' name fields of a form: one per name, "Seat k" before it; onInput(k, text).
function seatInputs(names, onInput) {
  return names.map((name, k) => {
    const label = el("label", "", COMMON_WORDS.seat(k + 1) + " ");
    const input = el("input");
    input.value = name;
    input.maxLength = 40;
    input.required = true;
    input.dataset.seat = String(k);
    input.addEventListener("input", () => onInput(k, input.value));
    label.append(input);
    return label;
  });
}

function wirePairing(after) {
  buildPairing();
  $("pair-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await pairWith($("pair-code").value, $("pair-name").value)) after();
  });
  $("show-code").addEventListener("click", async () => {
    const answer = await api("/operator/api/show-code", {});
    say(answer.ok ? COMMON_WORDS.codeShown : answer.text, answer.ok ? "ok" : "error");
    showLocalCode();
  });
}
