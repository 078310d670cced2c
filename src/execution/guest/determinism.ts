/**
 * Record and replay of what makes a run's code non-deterministic, inside the guest: `Date.now()`
 * (and `new Date()` without arguments), `Math.random()` and `crypto.randomUUID()`. A durable run
 * (src/runs/) prepends `determinismPrologue(config)` to the agent's code, so the same guest code
 * works in every TypeScript executor (in process, child process, QuickJS, deno, container).
 *
 * - Math.random and crypto.randomUUID draw from a PRNG (sfc32) seeded with the run's 128-bit seed,
 *   kept in the ledger: the same seed gives the same sequence on replay, whatever the executor.
 * - Date.now is taped: a replay first serves the recorded values in order, then reads the clock.
 *   Fresh readings are sent to the host just before the next namespace call (`runs.tape`), which
 *   stores them with that call's ledger entry: everything the code read before a logged call is
 *   therefore in the ledger when the call is.
 *
 * `take()` runs before every namespace call: it hands over the fresh readings without copying, and
 * allocates nothing when there are none (the common case).
 *
 * The prologue replaces the realm's `Date`, `Math.random` and `crypto` (a wrapper: the host's own
 * crypto object is never modified, which matters in process) until `determinismEpilogue` restores
 * them. It is a source string, not a function of this module, so no bundler helper can leak into it.
 */

import { BEFORE_CALL_KEY } from "./namespaces.js";

/** Where the prologue keeps its state on the guest's global (Symbol.for: the same across realms of one process). */
export const DETERMINISM_KEY = "ts-code-mode.determinism";

export interface DeterminismConfig {
  /** 32 hex digits. */
  seed: string;
  /** Date.now() values to serve before reading the clock. */
  tape: number[];
}

const SHIM = `(function (g, cfg) {
  var KEY = Symbol.for(${JSON.stringify(DETERMINISM_KEY)});
  var prev = g[KEY];
  if (prev && typeof prev.restore === "function") prev.restore();
  var RealDate = prev ? prev.RealDate : g.Date;
  var realNow = RealDate.now;
  var realRandom = prev ? prev.realRandom : g.Math.random;
  var realCrypto = prev ? prev.realCrypto : g.crypto;
  var s = [0, 1, 2, 3].map(function (i) { return parseInt(cfg.seed.slice(i * 8, i * 8 + 8), 16) >>> 0; });
  var a = s[0], b = s[1], c = s[2], d = s[3];
  function rand() {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    var t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
  for (var i = 0; i < 15; i++) rand();
  var tape = cfg.tape.slice();
  var served = 0;
  var fresh = [];
  var NONE = [];
  function now() {
    if (served < tape.length) return tape[served++];
    var v = realNow.call(RealDate);
    if (fresh.length < 100000) fresh.push(v);
    return v;
  }
  function uuid() {
    var h = "";
    for (var i = 0; i < 16; i++) {
      var byte = Math.floor(rand() * 256);
      if (i === 6) byte = (byte & 0x0f) | 0x40;
      if (i === 8) byte = (byte & 0x3f) | 0x80;
      h += (byte < 16 ? "0" : "") + byte.toString(16);
      if (i === 3 || i === 5 || i === 7 || i === 9) h += "-";
    }
    return h;
  }
  function Date() {
    var args = Array.prototype.slice.call(arguments);
    if (!new.target) return new RealDate(now()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  }
  Object.setPrototypeOf(Date, RealDate);
  Date.prototype = RealDate.prototype;
  Date.now = now;
  g.Date = Date;
  g.Math.random = rand;
  if (realCrypto) {
    g.crypto = {
      randomUUID: uuid,
      getRandomValues: function (arr) { return realCrypto.getRandomValues(arr); },
      get subtle() { return realCrypto.subtle; },
    };
  }
  var state = {
    RealDate: RealDate, realRandom: realRandom, realCrypto: realCrypto,
    take: function () {
      if (fresh.length === 0) return NONE;
      var taken = fresh;
      fresh = [];
      return taken;
    },
    restore: function () {
      g.Date = RealDate;
      g.Math.random = realRandom;
      if (realCrypto) g.crypto = realCrypto;
      delete g[KEY];
      var off = g.tools && g.tools[Symbol.for(${JSON.stringify(BEFORE_CALL_KEY)})];
      if (typeof off === "function") off(null);
    },
  };
  Object.defineProperty(g, KEY, { value: state, configurable: true, enumerable: false, writable: true });
  var hook = g.tools && g.tools[Symbol.for(${JSON.stringify(BEFORE_CALL_KEY)})];
  if (typeof hook === "function") hook(state.take);
})`;

/** The shim on one line (line numbers of the agent's code stay as written), built once. */
const SHIM_LINE = SHIM.replace(/\n\s*/g, " ");

/** One line that installs record/replay for this run, to put before the agent's code. */
export function determinismPrologue(config: DeterminismConfig): string {
  if (!/^[0-9a-f]{32}$/.test(config.seed)) throw new TypeError("determinism seed must be 32 hex digits");
  const tape = config.tape.filter((v) => typeof v === "number" && Number.isFinite(v));
  return `${SHIM_LINE}(globalThis, ${JSON.stringify({ seed: config.seed, tape })});`;
}

/** A snippet that puts the realm's own Date, Math.random and crypto back (a no-op when nothing was installed). */
export const determinismEpilogue = `(function (g) { var s = g[Symbol.for(${JSON.stringify(DETERMINISM_KEY)})]; if (s) s.restore(); })(globalThis);`;
