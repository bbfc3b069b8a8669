// Spoken verdicts on the browser display (the Web Speech API): a voice of the scene's language
// when the browser has one (sv: Swedish, en: English), else its default voice with a note on
// the page saying so. Only the newest of a burst is spoken: while one verdict is being said,
// a newer one waits, and a still newer one takes its place (the game never waits for speech).
"use strict";

const SPEECH = { busy: false, waiting: null };
// The voice language asked of the browser for each of the referee's languages.
const SPEECH_LOCALES = { sv: "sv-SE", en: "en-GB" };

function speechAvailable() {
  return typeof window.speechSynthesis !== "undefined" && typeof window.SpeechSynthesisUtterance !== "undefined";
}

function voiceFor(lang) {
  if (!speechAvailable()) return null;
  const voices = window.speechSynthesis.getVoices() || [];
  const want = (SPEECH_LOCALES[lang] || lang).toLowerCase();
  return voices.find((v) => (v.lang || "").toLowerCase().replace("_", "-") === want)
    || voices.find((v) => (v.lang || "").toLowerCase().startsWith(lang.toLowerCase())) || null;
}

// What the page says about speech in ``lang`` ("" when all is well).
function speechNote(lang) {
  if (!speechAvailable()) return t("This browser cannot speak: the verdicts are only shown.");
  if (!voiceFor(lang)) return t("This browser has no voice in this language: the verdicts are spoken with its default voice.");
  return "";
}

function onVoicesChanged(callback) {
  if (speechAvailable() && window.speechSynthesis.addEventListener) {
    window.speechSynthesis.addEventListener("voiceschanged", callback);
  }
}

function utter(text, lang) {
  const u = new window.SpeechSynthesisUtterance(text);
  u.lang = SPEECH_LOCALES[lang] || lang;
  const voice = voiceFor(lang);
  if (voice) u.voice = voice;
  SPEECH.busy = true;
  const next = () => {
    SPEECH.busy = false;
    const waiting = SPEECH.waiting;
    SPEECH.waiting = null;
    if (waiting) utter(waiting[0], waiting[1]);
  };
  u.onend = next;
  u.onerror = next;
  window.speechSynthesis.speak(u);
}

function speak(text, lang) {
  if (!speechAvailable() || !text) return;
  if (SPEECH.busy) {
    SPEECH.waiting = [text, lang];  // the newest waits; an older one waiting is dropped
    return;
  }
  utter(text, lang);
}

function stopSpeaking() {
  SPEECH.waiting = null;
  SPEECH.busy = false;
  if (speechAvailable()) window.speechSynthesis.cancel();
}
