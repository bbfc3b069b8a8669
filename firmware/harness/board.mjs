// The MicroPython board harness: runs firmware/pico/main.py, as shipped, in the real MicroPython
// VM (the WebAssembly port, npm @micropython/micropython-webassembly-pyscript 1.27) under Node.js.
//
//   node board.mjs --firmware main.py --serial-fd 3 [--vectors vectors.json] [--mpy main.mpy]
//                  [--drift-ppm P] [--tick-start-us T] [--corrupt F] [--drop F] [--seed S]
//
// What differs from a Pico, and only that:
// - USB CDC: the VM's own stdin and stdout (sys.stdin.buffer / sys.stdout.buffer, select.poll,
//   exactly what the firmware uses on the rp2) are wired to the serial fd (the master end of a
//   pseudo-terminal the Python side opened and passed in), through optional byte faults
//   (corrupted: XOR with a random non-zero byte; dropped) in both directions. select.poll
//   says readable only when a byte has arrived (this port's stdin would always say so), and
//   poll(2) waits for one up to 2 ms, as on the Pico. The VM starts with a 192 kB heap, about
//   a Pico's (this port grows it on demand).
// - the crystal: the VM's own ticks have 1 ms resolution, so `time` is replaced by shim/
//   board_time.py, whose microsecond ticks (wrapping at 2**30 as on the rp2) come from the host's
//   monotonic clock here, running --drift-ppm fast and starting at --tick-start-us.
// - machine, neopixel and the card reader driver: shim/machine.py, shim/neopixel.py,
//   shim/card_readers.py. Button edges and card reads come in on the control channel and are
//   stamped by the firmware on the board's clock (a pin's irq handler runs at once, between two
//   bytecodes, as an interrupt would); pixel writes and buzzer (PWM) settings go out on it.
// - os.urandom, which this port lacks (the rp2 has it), comes from the host's crypto.
//
// The control channel is JSON lines on fd 0 (in) and fd 1 (out). In: {"gpio": 2, "level": 0}
// or {"gpio": 2, "levels": [0, 1, 0], "gap_us": 100} (a bouncing contact),
// {"tag": "04a1…", "reader": 0}, {"mute": true}, {"faults": {"corrupt": 0.01, "drop": 0.01}},
// {"quit": true}. Out: {"ready": …}, {"edge": …}, {"read": …}, {"pixels": […]}, {"pwm": …},
// {"crash": …}; each carries "host_ns", the host's CLOCK_MONOTONIC (Python's
// time.monotonic_ns()) when it was sent, and "tick_ns", that clock when the board's ticks
// were last read (for an edge, sent once its irq handler returned: when the handler stamped
// it).

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { fileURLToPath } from "node:url";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const HERE = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const opts = {
    firmware: null, mpy: null, vectors: null, serialFd: null, ctlIn: 0, ctlOut: 1,
    driftPpm: 0, tickStartUs: 0, corrupt: 0, drop: 0, seed: 1, heap: 192 * 1024,
  };
  const names = {
    "--firmware": "firmware", "--mpy": "mpy", "--vectors": "vectors", "--serial-fd": "serialFd",
    "--ctl-in-fd": "ctlIn", "--ctl-out-fd": "ctlOut", "--drift-ppm": "driftPpm",
    "--tick-start-us": "tickStartUs", "--corrupt": "corrupt", "--drop": "drop", "--seed": "seed",
    "--heap": "heap",
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (key === undefined || i + 1 >= argv.length) {
      throw new Error(`unknown or incomplete option ${argv[i]}`);
    }
    const text = argv[i + 1];
    opts[key] = ["firmware", "mpy", "vectors"].includes(key) ? text : Number(text);
  }
  if (opts.serialFd === null || (opts.firmware === null && opts.mpy === null)) {
    throw new Error("--serial-fd and --firmware (or --mpy) are needed");
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

// -- the host's clock and a seeded random source for the faults -------------------------------

const hostNs = () => process.hrtime.bigint();
const T0 = hostNs();
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleepMs = (ms) => Atomics.wait(sleeper, 0, 0, ms);

let lastTickNs = T0;
// A bouncing contact's edge n is stamped at its first edge's time plus n gaps, as the Pico's
// irq stamps it within microseconds: on a loaded host the spin between two edges can stall
// for longer than the firmware's 5 ms debounce window (seen once: 5.1 ms).
let edgeStartNs = T0;
let heldNs = null;
function ticksUs() {
  lastTickNs = heldNs ?? hostNs();
  const elapsedNs = Number(lastTickNs - T0);
  const t = opts.tickStartUs + Math.floor(elapsedNs * (1 + opts.driftPpm * 1e-6) / 1000);
  return t % 2 ** 30;
}

let rngState = (opts.seed >>> 0) || 1;
function random() { // mulberry32
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const faults = { corrupt: opts.corrupt, drop: opts.drop };
let muted = false;

function damage(bytes) {
  if (!faults.corrupt && !faults.drop) return bytes;
  const out = [];
  for (let b of bytes) {
    if (faults.drop && random() < faults.drop) continue;
    if (faults.corrupt && random() < faults.corrupt) b ^= 1 + Math.floor(random() * 255);
    out.push(b);
  }
  return out;
}

// -- the control channel ------------------------------------------------------------------------

const ctlBuf = Buffer.alloc(65536);
let ctlText = "";
let lastCtlCheck = 0n;

function report(obj) {
  obj.host_ns = hostNs().toString();
  obj.tick_ns = lastTickNs.toString();
  const line = Buffer.from(JSON.stringify(obj) + "\n");
  let off = 0;
  while (off < line.length) {
    try {
      off += fs.writeSync(opts.ctlOut, line, off);
    } catch (e) {
      if (e.code === "EAGAIN") { sleepMs(1); continue; }
      if (e.code === "EPIPE") process.exit(0); // the test side went away
      throw e;
    }
  }
}

function readCtl() {
  for (;;) {
    let n;
    try {
      n = fs.readSync(opts.ctlIn, ctlBuf, 0, ctlBuf.length, null);
    } catch (e) {
      if (e.code === "EAGAIN") return;
      throw e;
    }
    if (n === 0) process.exit(0); // the test side closed the channel: power off
    ctlText += ctlBuf.toString("utf8", 0, n);
  }
}

// Control lines for the shims (what the VM does not handle here itself), newline-separated.
function take() {
  const now = hostNs();
  if (now - lastCtlCheck < 200_000n && ctlText === "") return "";
  lastCtlCheck = now;
  readCtl();
  const cut = ctlText.lastIndexOf("\n");
  if (cut < 0) return "";
  const lines = ctlText.slice(0, cut).split("\n");
  ctlText = ctlText.slice(cut + 1);
  const forShims = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.quit) process.exit(0);
    if (msg.mute !== undefined) muted = Boolean(msg.mute);
    else if (msg.faults !== undefined) Object.assign(faults, msg.faults);
    else forShims.push(line);
  }
  return forShims.join("\n");
}

// -- the serial line (USB CDC on a Pico) ----------------------------------------------------------

const OUT_LIMIT = 65536;
const rxBuf = Buffer.alloc(4096);
let rx = [];
let rxPos = 0;
let tx = [];
let pendingOut = Buffer.alloc(0);

function flushOut() {
  if (tx.length) {
    const bytes = muted ? [] : damage(tx);
    tx = [];
    if (bytes.length) {
      let out = Buffer.concat([pendingOut, Buffer.from(bytes)]);
      if (out.length > OUT_LIMIT) out = out.subarray(out.length - OUT_LIMIT);
      pendingOut = out;
    }
  }
  while (pendingOut.length) {
    let n;
    try {
      n = fs.writeSync(opts.serialFd, pendingOut);
    } catch (e) {
      if (e.code === "EAGAIN") return; // the host is not reading: keep it (up to OUT_LIMIT)
      pendingOut = Buffer.alloc(0); // EIO: no host has the port open
      return;
    }
    pendingOut = pendingOut.subarray(n);
  }
}

function pullIn() {
  for (;;) {
    let n;
    try {
      n = fs.readSync(opts.serialFd, rxBuf, 0, rxBuf.length, null);
    } catch (e) {
      if (e.code === "EAGAIN" || e.code === "EIO") return; // nothing (EIO: no host on the port)
      throw e;
    }
    if (n === 0) return;
    if (muted) continue;
    const bytes = damage(rxBuf.subarray(0, n));
    if (rxPos >= rx.length) { rx = []; rxPos = 0; }
    for (const b of bytes) rx.push(b);
  }
}

// The VM's stdin: one byte, or null (nothing: the firmware's read returns b"") after up to 2 ms.
function stdin() {
  flushOut();
  if (rxPos >= rx.length) {
    pullIn();
    const until = hostNs() + 2_000_000n;
    while (rxPos >= rx.length && hostNs() < until) {
      sleepMs(0.25);
      pullIn();
    }
    if (rxPos >= rx.length) return null;
  }
  return rx[rxPos++];
}

// The VM's stdout: each frame goes out once its 0x00 delimiter is written (a Pico's USB stack
// sends what was written at its next 1 ms frame).
function stdout(bytes) {
  for (const b of bytes) tx.push(b);
  if (tx.length >= 256 || bytes[bytes.length - 1] === 0) flushOut();
}

// select.poll on the VM's stdin: readable only when a byte is there (the stdin device of this
// port has no poll of its own and would always say readable). MicroPython's poll(timeout) asks
// again and again until the timeout; between two asks this one sleeps a little.
const POLLIN = 1, POLLOUT = 4;
let emptyPolls = 0;
function pollStdin() {
  flushOut();
  if (rxPos >= rx.length) pullIn();
  if (rxPos < rx.length) {
    emptyPolls = 0;
    return POLLIN | POLLOUT;
  }
  if (++emptyPolls > 1) sleepMs(0.2);
  return POLLOUT;
}

// -- the VM ---------------------------------------------------------------------------------------

const mp = await loadMicroPython({
  heapsize: opts.heap, linebuffer: false, stdin, stdout,
  stderr: (bytes) => process.stderr.write(Buffer.from(bytes)),
});


mp.FS.getStream(0).stream_ops.poll = pollStdin;
mp.registerJsModule("harness", {
  ticks_us: ticksUs,
  ticks_ms: () => Math.floor(ticksUs() / 1000) % 2 ** 30,
  sleep_us: (us) => { flushOut(); sleepMs(us / 1000); },
  // Busy, for the gaps between a bouncing contact's edges: a sleeping process on a loaded
  // machine wakes up milliseconds late.
  spin_us: (us) => { const until = hostNs() + BigInt(Math.round(us * 1000)); while (hostNs() < until); },
  // The ticks read while edge n of a contact's edges (gap_us apart) is handled; -1: the clock.
  edge_at: (n, gapUs) => {
    if (n === 0) edgeStartNs = hostNs();
    heldNs = n < 0 ? null : edgeStartNs + BigInt(Math.round(n * gapUs * 1000));
  },
  take,
  report: (text) => report(JSON.parse(text)),
  urandom_hex: (n) => crypto.randomBytes(n).toString("hex"),
});

mp.FS.mkdir("/shim");
for (const name of fs.readdirSync(path.join(HERE, "shim"))) {
  if (name.endsWith(".py")) {
    mp.FS.writeFile(`/shim/${name}`, fs.readFileSync(path.join(HERE, "shim", name)));
  }
}
if (opts.vectors) mp.FS.writeFile("/vectors.json", fs.readFileSync(opts.vectors));

mp.runPython(`
import sys
sys.path.insert(0, "/shim")
import board_time
sys.modules["time"] = board_time
import os
os.urandom = board_time.urandom
`);

report({ ready: true, mpy: opts.mpy !== null, version: mp.pyimport("sys").version });
try {
  if (opts.mpy !== null) {
    // The mpy-cross output: imported as a module (on a Pico, main.py runs as a script).
    mp.FS.writeFile("/main.mpy", fs.readFileSync(opts.mpy));
    mp.runPython("import main\nmain.run()");
  } else {
    // The firmware file as shipped, run as __main__ as the Pico runs main.py at boot.
    mp.runPython(fs.readFileSync(opts.firmware, "utf8"));
  }
  report({ crash: "the firmware's main loop returned" });
  process.exit(3);
} catch (e) {
  report({ crash: String(e && e.message ? e.message : e), type: e && e.type });
  process.exit(3);
}
