/**
 * The Deno engine's guest program: the QuickJS guest bundle (guest/runtime.ts + codec + shared
 * namespaces, see ../guest-bundle.ts) followed by a small Deno-specific driver that plays the part
 * the host plays for QuickJS — it reads frames from stdin, evaluates prepared snippets with an
 * indirect eval (global scope, so `var`s persist), runs timers, and writes calls, console output
 * and outcomes to stdout as frames. The values inside frames are the codec's encoding, so what
 * crosses follows the same rules in both engines.
 *
 * A frame (both directions): the four bytes "TCM1", u32 LE length of the rest, u32 LE length of a
 * JSON header, the header (UTF-8), then the binary buffers the header's `b` array gives the sizes
 * of. The magic makes stray bytes on the channel fail at once instead of looking like a length.
 *
 * Agent code could write to Deno.stdout itself; the worst it can do is send frames the host
 * validates like any other (calls go through the same RpcProvider), or garble the channel, which
 * the host treats as a crash. The driver's own functions are captured before any agent code runs.
 */
import { GUEST_BUNDLE } from "../guest-bundle.js";
import type { GuestLimits } from "../guest/runtime.js";

const DRIVER = String.raw`
const reflectApply = Reflect.apply;
const promiseThen = Promise.prototype.then;
const PromiseCtor = Promise;
const realSetTimeout = setTimeout;
const realSetInterval = setInterval;
const realClearTimeout = clearTimeout;
const realClearInterval = clearInterval;
const jsonStringify = JSON.stringify;
const jsonParse = JSON.parse;
const MapCtor = Map;
const U8 = Uint8Array;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const encodeText = (s) => reflectApply(TextEncoder.prototype.encode, encoder, [s]);
const decodeText = (b) => reflectApply(TextDecoder.prototype.decode, decoder, [b]);
const stdin = Deno.stdin;
const stdout = Deno.stdout;
const readIn = stdin.read.bind(stdin);
const writeOut = stdout.writeSync.bind(stdout);
const exit = Deno.exit.bind(Deno);
const indirectEval = eval;
const MAGIC = 0x314d4354;
// Microtask turns the read loop waits after handling frames (see the loop at the end).
const REACT_TURNS = 8;

addEventListener("unhandledrejection", (e) => e.preventDefault());
addEventListener("error", (e) => e.preventDefault());

// Web storage would write into the deno dir, which the host makes unusable (see process.ts); the
// globals go too, so agent code gets "not defined" instead of an OS error. The flags and the dir
// are the guarantee, not this.
for (const name of ["localStorage", "sessionStorage", "caches"]) delete globalThis[name];

// The key that tags every frame this driver writes (16 bytes, the first thing on stdin). It lives
// only in this Uint8Array, whose bytes are outside V8's heap: agent code shares this process's
// stdout (Deno.stdout, node:process) and can take heap snapshots (node:v8), so a frame without
// the key is refused by the host — agent code cannot forge a "stopped" or a report.
// (V8 keeps typed arrays of up to 64 bytes inside its heap: these views are over larger buffers.)
const KEY = new U8(new ArrayBuffer(256), 0, 16);

function send(header, buffers) {
  const sizes = [];
  let total = 0;
  for (const b of buffers) { sizes.push(b.byteLength); total += b.byteLength; }
  header.b = sizes;
  const head = encodeText(jsonStringify(header));
  const size = 28 + head.byteLength + total;
  const frame = new U8(new ArrayBuffer(size < 256 ? 256 : size), 0, size);
  const view = new DataView(frame.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, 20 + head.byteLength + total, true);
  frame.set(KEY, 8);
  view.setUint32(24, head.byteLength, true);
  frame.set(head, 28);
  let at = 28 + head.byteLength;
  for (const b of buffers) { frame.set(new U8(b), at); at += b.byteLength; }
  let off = 0;
  while (off < frame.byteLength) off += writeOut(frame.subarray(off));
}

let seq = 0;
let ended = true;
// Python mode (PY, see pyodide.ts): the display Python gave the value (its repr), sent with the report.
let pyDisplay = null;
const realTimers = new MapCtor();
let entry;
const host = {
  call(id, ns, op, json, ...buffers) { send({ t: "call", id, ns, op, json }, buffers); },
  console(method, json, ...buffers) { send({ t: "console", method, json }, buffers); },
  report(kind, json, ...buffers) {
    ended = true;
    const header = { t: "report", seq, kind, json };
    if (pyDisplay !== null) { header.display = pyDisplay; pyDisplay = null; }
    send(header, buffers);
  },
  timer(id, ms, repeat) {
    const old = realTimers.get(id);
    if (old !== undefined) { realClearTimeout(old); realClearInterval(old); realTimers.delete(id); }
    if (ms < 0) return;
    const fire = () => {
      if (!repeat) realTimers.delete(id);
      entry.fireTimer(id);
      // A callback that threw ended the run (reported as "uncaught"): no other timer fires after it.
      if (ended) endTimers();
    };
    realTimers.set(id, repeat ? realSetInterval(fire, ms) : realSetTimeout(fire, ms));
  },
  compile(name, body) {
    return indirectEval("(function (exports, require, module, tools, workflows, artifacts, deps) {" + body + "\n})\n//# sourceURL=workflows/" + name + ".ts");
  },
};
entry = boot(host, LIMITS);

// ---- Python mode: values cross in the CPython guest's wire format (JSON with tags) ----------
const TAG_KEYS = ["$bytes", "$int", "$float", "$dict"];
const objectEntries = Object.entries;
const objectFromEntries = Object.fromEntries;
const objectKeys = Object.keys;
const fromBase64 = Uint8Array.fromBase64;
const toBase64 = Uint8Array.prototype.toBase64;
const BigIntCtor = BigInt;
const isView = ArrayBuffer.isView;
function untag(key, value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const keys = objectKeys(value);
  if (keys.length !== 1) return value;
  const raw = value[keys[0]];
  switch (keys[0]) {
    case "$bytes": return typeof raw === "string" ? reflectApply(fromBase64, U8, [raw]) : value;
    case "$int": return typeof raw === "string" && /^-?[0-9]{1,5000}$/.test(raw) ? BigIntCtor(raw) : value;
    case "$float": return raw === "nan" ? NaN : raw === "inf" ? Infinity : raw === "-inf" ? -Infinity : value;
    case "$dict": return Array.isArray(raw) ? objectFromEntries(raw) : value;
  }
  return value;
}
function tag(key, value) {
  if (typeof value === "bigint") return { $int: String(value) };
  if (typeof value === "number" && value !== value) return { $float: "nan" };
  if (value === Infinity) return { $float: "inf" };
  if (value === -Infinity) return { $float: "-inf" };
  if (value instanceof ArrayBuffer) value = new U8(value);
  if (isView(value)) return { $bytes: reflectApply(toBase64, new U8(value.buffer, value.byteOffset, value.byteLength), []) };
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const keys = objectKeys(value);
    if (keys.length === 1 && TAG_KEYS.includes(keys[0])) return { $dict: objectEntries(value) };
  }
  return value;
}
function pyCall(ns, op, argsJson) {
  let args;
  try { args = jsonParse(argsJson, untag); } catch (err) { return PromiseCtor.reject(err); }
  return reflectApply(promiseThen, entry.call(ns, op, args), [
    (v) => jsonStringify({ ok: true, v }, tag),
    (e) => jsonStringify({ ok: false, e: pyError(e) }, tag),
  ]);
}
// A host error as runtime.py reads it: name, message and the details a ToolError carries (code,
// recoverable, suggestion, context, ...), which become the Python exception's attributes.
const PY_DETAIL_KEYS = ["tool", "callable", "code", "recoverable", "exitCode", "status", "stderr", "suggestions", "suggestion", "context"];
function pyError(e) {
  const out = { name: String(e && e.name || "Error"), message: String(e && e.message !== undefined ? e.message : e) };
  if (e !== null && typeof e === "object") {
    const details = {};
    let any = false;
    for (let i = 0; i < PY_DETAIL_KEYS.length; i++) {
      const v = e[PY_DETAIL_KEYS[i]];
      if (v !== undefined) { details[PY_DETAIL_KEYS[i]] = v; any = true; }
    }
    if (any) out.details = details;
  }
  return out;
}
function pyWrite(stream, text) {
  if ((stream === "stdout" || stream === "stderr") && typeof text === "string") send({ t: "write", stream, text }, []);
}
function pyOutcome(json) {
  const r = jsonParse(json, untag);
  if (r.ok) {
    pyDisplay = typeof r.display === "string" ? r.display : "";
    return r.has ? r.value : undefined;
  }
  const e = new Error(String(r.error.message));
  e.name = String(r.error.name);
  // The traceback without its last line ("Name: message"), which the host puts first (codec.ts).
  const stack = typeof r.error.stack === "string" ? r.error.stack : "";
  const last = stack.lastIndexOf("\n");
  e.stack = last > 0 && stack.slice(last + 1) === e.name + ": " + e.message ? stack.slice(0, last) : stack;
  throw e;
}
if (PY) PY.setup(pyCall, pyWrite);

function clearTimers() {
  for (const t of realTimers.values()) { realClearTimeout(t); realClearInterval(t); }
  realTimers.clear();
}
function endTimers() {
  clearTimers();
  entry.forget(false);
}

function run(runSeq, script) {
  seq = runSeq;
  ended = false;
  let main;
  try {
    main = PY ? reflectApply(promiseThen, PromiseCtor.resolve(PY.run(script)), [pyOutcome]) : indirectEval(script + "\n//# sourceURL=snippet.ts");
  } catch (err) {
    entry.reportError(err);
    endTimers();
    return;
  }
  const settle = (ok) => (v) => {
    seq = runSeq;
    if (ok) entry.exportValue(v); else entry.reportError(v);
    // The run is over: its timers go now, before any of them can fire again.
    endTimers();
  };
  reflectApply(promiseThen, PromiseCtor.resolve(main), [settle(true), settle(false)]);
}

function handle(header, buffers) {
  switch (header.t) {
    case "run": run(header.seq, header.script); break;
    case "settle": entry.settle(header.id, header.ok === true, header.json, ...buffers); break;
    case "interrupt":
      // Python mode: the host stopped this run while it awaited; its task is cancelled to unwind it.
      if (PY && header.seq === seq) PY.interrupt();
      break;
    case "end":
      clearTimers();
      entry.forget(header.calls === true);
      seq = 0;
      // Confirmed from a timer, which runs only once the microtask queue is empty: a guest still
      // spinning in promise callbacks never lets it run, so the host sees it busy and ends the
      // process. Frames themselves may be read inside such a flood (a read whose bytes are already
      // there resolves without an event-loop turn), so handling "end" proves nothing by itself.
      realSetTimeout(() => send({ t: "stopped", seq: header.seq }, []), 0);
      break;
  }
}

// Chunks are joined only once a whole frame is there (a large reply arrives in many reads).
let chunks = [];
let buffered = 0;
function join() {
  const all = new U8(buffered);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.byteLength; }
  chunks = [all];
}
function drain() {
  for (;;) {
    if (buffered < 12) return;
    if (chunks[0].byteLength < 12) join();
    let first = chunks[0];
    let view = new DataView(first.buffer, first.byteOffset, first.byteLength);
    if (view.getUint32(0, true) !== MAGIC) exit(70);
    const len = view.getUint32(4, true);
    if (buffered < 8 + len) return;
    if (first.byteLength < 8 + len) { join(); first = chunks[0]; view = new DataView(first.buffer, first.byteOffset, first.byteLength); }
    const headLen = view.getUint32(8, true);
    const header = jsonParse(decodeText(first.subarray(12, 12 + headLen)));
    const buffers = [];
    let at = 12 + headLen;
    for (const size of header.b || []) {
      buffers.push(first.slice(at, at + size).buffer);
      at += size;
    }
    const rest = first.subarray(8 + len);
    chunks = rest.byteLength ? [rest] : [];
    buffered -= 8 + len;
    handle(header, buffers);
  }
}

(async () => {
  // The key first: exactly 16 bytes, before any frame and before any agent code runs.
  let have = 0;
  while (have < 16) {
    const n = await readIn(KEY.subarray(have));
    if (n === null) exit(0);
    have += n;
  }
  send({ t: "ready" }, []);
  for (;;) {
    const chunk = new U8(1 << 16);
    const n = await readIn(chunk);
    if (n === null) exit(0);
    chunks.push(chunk.subarray(0, n));
    buffered += n;
    drain();
    // The next read is asked for only once the guest has reacted to these frames: a settled call's
    // continuation runs within a turn or two and writes its next call. Asked for first, the read
    // (deno hands it to an I/O thread) stood between a reply and the next call: ~70 µs of a
    // ~250 µs call on a loaded 2-core machine, where the bare round trip writes before it reads.
    for (let turn = 0; turn < REACT_TURNS; turn++) await null;
  }
})();
`;

/** The whole guest program, ready to be written to a file and run as Deno's main module. */
export function denoGuestProgram(limits: GuestLimits, pythonPrelude?: string): string {
  // Python mode: the prelude (pyodide.ts) defines PY before the driver; otherwise PY is null.
  const prelude = pythonPrelude ?? "const PY = null;\n";
  return `${prelude}const boot = ${GUEST_BUNDLE};\nconst LIMITS = ${JSON.stringify(JSON.stringify(limits))};\n${DRIVER}`;
}
