// Short distinct sounds for tables that prefer them to words, made by the page itself (Web
// Audio, no sound files): a slap that won the pile (a thump), a pile won otherwise (two rising
// notes), a photo finish (three quick high beeps), a false slap (a low falling buzz). A browser
// lets a page make sound only after a tap or a key on it (the Sounds button), or with
// Chromium's --autoplay-policy=no-user-gesture-required on a screen nobody touches.
"use strict";

const SOUNDS = { ctx: null, played: [] };

// Each sound: notes of [start s, frequency Hz (end Hz), length s, wave, volume].
const SOUND_NOTES = {
  slap: [[0, 140, 0.09, "square", 0.5], [0, 70, 0.14, "sine", 0.8]],
  pile: [[0, 523, 0.12, "triangle", 0.5], [0.13, 784, 0.18, "triangle", 0.5]],
  photo: [[0, 1568, 0.05, "square", 0.3], [0.09, 1568, 0.05, "square", 0.3],
    [0.18, 2093, 0.08, "square", 0.3]],
  false: [[0, [220, 110], 0.35, "sawtooth", 0.35]],
};

function unlockSounds() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!SOUNDS.ctx) SOUNDS.ctx = new Ctx();
  if (SOUNDS.ctx.state === "suspended") SOUNDS.ctx.resume();
  return SOUNDS.ctx;
}

function playSound(kind) {
  const notes = SOUND_NOTES[kind];
  if (!notes) return;
  SOUNDS.played.push(kind);
  if (SOUNDS.played.length > 20) SOUNDS.played.shift();
  const ctx = unlockSounds();
  if (!ctx) return;
  const now = ctx.currentTime;
  for (const [at, freq, length, wave, volume] of notes) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = wave;
    const [from, to] = Array.isArray(freq) ? freq : [freq, freq];
    osc.frequency.setValueAtTime(from, now + at);
    osc.frequency.linearRampToValueAtTime(to, now + at + length);
    gain.gain.setValueAtTime(volume, now + at);
    gain.gain.exponentialRampToValueAtTime(0.001, now + at + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(now + at);
    osc.stop(now + at + length + 0.02);
  }
}
