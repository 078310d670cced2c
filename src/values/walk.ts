/**
 * The one bounded walk over a value the guest controls. Every place the host renders, encodes,
 * validates or sizes such a value measures it here first, and only hands it to an unbounded native
 * routine (util.inspect, JSON.stringify) once the walk says that routine's work is bounded.
 *
 * The walk counts what those routines would do, not what the value costs in memory: a shared
 * object is counted once per path that reaches it, because JSON and a rendering repeat it. That is
 * what makes it safe against a DAG of 40 objects with 2^40 paths: the walk stops at `maxNodes`
 * visits instead of following them all. It is iterative (no recursion), reads children lazily
 * (a cut never pays for the rest of a wide array), and never throws: a getter or proxy trap that
 * throws makes its value a leaf.
 */
import { types } from "node:util";

export interface WalkLimits {
  /** Most values visited, each shared object once per path to it. */
  maxNodes: number;
  /** Most levels of nesting below the root. */
  maxDepth: number;
  /** Most characters (or bytes, for binary data) of the value's text. */
  maxBytes: number;
}

/**
 * What the walk descends into and how it sizes leaves:
 * - `json`: arrays and plain objects, sized as JSON text (with `indent`); anything else is a leaf.
 * - `data`: what a structured clone copies (arrays, objects, Map, Set, binary data by byte length).
 * - `display`: what util.inspect shows with DISPLAY_INSPECT options: at most `displayItems` items
 *   of a list, no getters called, nothing below `displayDepth` (a leaf there, not a cut).
 */
export type WalkMode = "json" | "data" | "display";

export interface WalkOptions {
  mode: WalkMode;
  /** json: spaces of indentation the text will use (0 = compact). */
  indent?: number;
  /** display: levels shown (util.inspect's `depth`). */
  displayDepth?: number;
  /** display: items shown per array, Map, Set (util.inspect's `maxArrayLength`). */
  displayItems?: number;
  /** display: characters shown per string (util.inspect's `maxStringLength`). */
  displayString?: number;
  /** A property name longer than this stops the walk and is reported as `longKey`. */
  maxKey?: number;
}

export type CutReason = "nodes" | "depth" | "bytes";

export interface WalkReport {
  nodes: number;
  bytes: number;
  /** Where and why the walk stopped; null when it saw the whole value. */
  cut: { reason: CutReason; path: string } | null;
  /** Some object was reached by two different paths (a shared reference, not a cycle). */
  shared: boolean;
  /**
   * display: the value holds something util.inspect would render beyond what the walk measured
   * (a Promise's settled value, a proxy, a BigInt too long to print): render a bounded copy instead.
   */
  exotic: boolean;
  /** json: the first part JSON would not hold exactly (the walk stops there); null otherwise. */
  problem: { path: string; text: string } | null;
  /** A property name longer than `maxKey` (the walk stops there); null otherwise. */
  longKey: { path: string; length: number } | null;
}

/** A display leaf BigInt with more digits than this is not rendered in full (its toString is superlinear). */
export const MAX_BIGINT_DIGITS = 10_000;

/** How a frame's children are read: array items, own enumerable keys, Map/Set entries. */
const Kind = { List: 0, Keys: 1, Entries: 2 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

interface Frame {
  obj: object;
  depth: number;
  parent: Frame | null;
  /** Key under which `obj` sits in its parent, raw (the path is built only for a cut). */
  key: PathKey;
  kind: Kind;
  /** List: the array; Keys: the object. */
  items: unknown[] | Record<string, unknown> | null;
  keys: string[] | null;
  iterator: Iterator<unknown> | null;
  isMap: boolean;
  /** Next child index, and how many children are read at most. */
  i: number;
  end: number;
  /** A Map entry's value, visited right after its key. */
  pending: unknown;
  hasPending: boolean;
}

/** A path segment: an array index, a property name, or a Map/Set position (`<3>`). */
type PathKey = number | string | { entry: number; part: "key" | "value" | "item" } | null;

const PLAIN_KEY = /^[A-Za-z_$][\w$]*$/;

/** Values a quick measure of small data looks at before leaving it to the full walk. */
const QUICK_NODES = 32;

/** Measures `value` within `limits`; stops at the first limit exceeded. */
export function walk(value: unknown, limits: WalkLimits, options: WalkOptions): WalkReport {
  if (options.mode === "data" && limits.maxNodes >= QUICK_NODES && limits.maxDepth >= QUICK_NODES) {
    // Most namespace calls carry a few strings in a small object: measure those without the
    // walk's bookkeeping (it is on the path of every call). The same sizes as the walk below; a
    // key longer than maxKey leaves it to the walk, which reports where.
    const budget = { nodes: QUICK_NODES };
    const bytes = quickDataBytes(value, budget, 0, options.maxKey ?? Number.POSITIVE_INFINITY);
    if (bytes >= 0 && bytes <= limits.maxBytes) {
      return { nodes: QUICK_NODES - budget.nodes, bytes, cut: null, shared: false, exotic: false, problem: null, longKey: null };
    }
  }
  const mode = options.mode;
  const json = mode === "json";
  const display = mode === "display";
  const indent = options.indent ?? 0;
  const displayDepth = options.displayDepth ?? 6;
  const displayItems = options.displayItems ?? 200;
  const displayString = options.displayString ?? Number.POSITIVE_INFINITY;
  const { maxNodes, maxDepth, maxBytes } = limits;
  const maxKey = options.maxKey ?? Number.POSITIVE_INFINITY;
  // Created at the first object: most values walked are small, and many are a single string.
  const sets = { ancestors: null as Set<object> | null, seen: null as Set<object> | null };
  const report: WalkReport = { nodes: 0, bytes: 0, cut: null, shared: false, exotic: false, problem: null, longKey: null };
  const stack: Frame[] = [];
  let nodes = 0;
  let bytes = 0;

  const stop = (reason: CutReason, parent: Frame | null, key: PathKey): false => {
    report.cut = { reason, path: pathOf(parent, key) };
    return false;
  };
  const refuse = (text: string, parent: Frame | null, key: PathKey): false => {
    report.problem = { path: pathOf(parent, key), text };
    return false;
  };

  /** Visits one value; false when a limit is exceeded (or, for json, the value is not JSON). */
  const visit = (v: unknown, parent: Frame | null, key: PathKey, depth: number): boolean => {
    if (++nodes > maxNodes) return stop("nodes", parent, key);
    if (v === null || (typeof v !== "object" && typeof v !== "function")) {
      if (json) {
        const problem = jsonLeafProblem(v);
        if (problem) return refuse(problem, parent, key);
      }
      bytes += leafBytes(v, mode, displayString);
      if (display && typeof v === "bigint" && bigintDigits(v) > MAX_BIGINT_DIGITS) report.exotic = true;
      return bytes > maxBytes ? stop("bytes", parent, key) : true;
    }
    const obj = v as object;
    if (json && typeof v === "function") return refuse("a function", parent, key);
    const ancestors = (sets.ancestors ??= new Set());
    const seen = (sets.seen ??= new Set());
    if (ancestors.has(obj)) {
      if (json) return refuse("a circular reference", parent, key);
      bytes += 12; // "[Circular *1]"
      return true;
    }
    if (seen.has(obj)) report.shared = true;
    else seen.add(obj);
    if (display && depth > displayDepth) {
      bytes += 10; // "[Object]"
      return true;
    }
    let frame: Frame | null;
    try {
      frame = open(obj, parent, key, depth);
    } catch {
      frame = null; // a throwing trap or getter: the value is a leaf
    }
    if (report.problem) return false;
    if (bytes > maxBytes) return stop("bytes", parent, key);
    if (!frame) return true;
    if (depth >= maxDepth) return stop("depth", parent, key);
    ancestors.add(obj);
    stack.push(frame);
    return true;
  };

  /** A frame to walk `obj`'s children, or null for a leaf (its size added to `bytes`). */
  const open = (obj: object, parent: Frame | null, key: PathKey, depth: number): Frame | null => {
    const frame = (kind: Kind, items: Frame["items"], keys: string[] | null, end: number, iterator: Iterator<unknown> | null = null, isMap = false): Frame =>
      newFrame(obj, depth, parent, key, kind, items, keys, end, iterator, isMap);
    // Values from another process are copies and hold no proxy; only a live in-process value
    // (a run's value being displayed, or JSON-checked) can. Reading one would run its traps.
    if (mode !== "data" && types.isProxy(obj)) {
      if (json) refuse("a Proxy", parent, key);
      report.exotic = true;
      bytes += 8;
      return null;
    }
    if (Array.isArray(obj)) {
      bytes += 2;
      const arr = obj as unknown[];
      if (json && Object.getOwnPropertySymbols(arr).length > 0) refuse("an array with Symbol keys", parent, key);
      return frame(Kind.List, arr, null, display ? Math.min(arr.length, displayItems) : arr.length);
    }
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto === Object.prototype || proto === null || (json && isPlainObject(obj))) {
      bytes += 2;
      if (json && Object.getOwnPropertySymbols(obj).length > 0) refuse("an object with Symbol keys", parent, key);
      const keys = Object.keys(obj);
      return frame(Kind.Keys, obj as Record<string, unknown>, keys, keys.length);
    }
    const tag = Object.prototype.toString.call(obj);
    if (json) {
      refuse(`a ${tag.slice(8, -1)}`, parent, key);
      return null;
    }
    if (ArrayBuffer.isView(obj)) {
      bytes += display ? Math.min(obj.byteLength, displayItems) * 4 + 20 : obj.byteLength;
      return null;
    }
    if (tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]") {
      bytes += display ? 40 : (obj as ArrayBuffer).byteLength;
      return null;
    }
    if (tag === "[object Map]" || tag === "[object Set]") {
      bytes += 10;
      const size = (obj as Map<unknown, unknown>).size;
      const iterator = tag === "[object Map]" ? (obj as Map<unknown, unknown>).entries() : (obj as Set<unknown>).values();
      return frame(Kind.Entries, null, null, display ? Math.min(size, displayItems) : size, iterator, tag === "[object Map]");
    }
    if (display && (tag === "[object Promise]" || tag === "[object WeakMap]" || tag === "[object WeakSet]")) {
      // util.inspect shows a settled promise's value, which this walk cannot see.
      report.exotic = true;
      bytes += 30;
      return null;
    }
    if (!display && typeof obj === "function") return null;
    bytes += display ? displayLeafBytes(obj, tag) : 2;
    const keys = Object.keys(obj);
    return frame(Kind.Keys, obj as Record<string, unknown>, keys, keys.length);
  };

  if (!visit(value, null, null, 0)) return finish();
  while (stack.length > 0) {
    const f = stack[stack.length - 1] as Frame;
    let child: unknown;
    let key: PathKey;
    try {
      if (f.hasPending) {
        f.hasPending = false;
        child = f.pending;
        key = { entry: f.i - 1, part: "value" };
        bytes += 4; // " => "
      } else if (f.i >= f.end) {
        stack.pop();
        sets.ancestors?.delete(f.obj);
        continue;
      } else if (f.kind === Kind.List) {
        const index = f.i++;
        const arr = f.items as unknown[];
        if (json && !(index in arr)) return (refuse("an empty array slot", f, index), finish());
        child = arr[index];
        key = index;
        bytes += (index > 0 ? 1 : 0) + (indent ? 1 + indent * (f.depth + 1) : 0);
      } else if (f.kind === Kind.Keys) {
        const name = (f.keys as string[])[f.i++] as string;
        if (name.length > maxKey) {
          report.longKey = { path: pathOf(f, name), length: name.length };
          return finish();
        }
        key = name;
        bytes += name.length + 3 + (indent ? 1 + indent * (f.depth + 1) : 0);
        if (display) {
          // util.inspect with getters: false shows an accessor as [Getter] without calling it.
          const d = Object.getOwnPropertyDescriptor(f.obj, name);
          child = d && "value" in d ? d.value : undefined;
        } else {
          child = (f.items as Record<string, unknown>)[name];
        }
      } else {
        const step = (f.iterator as Iterator<unknown>).next();
        if (step.done) {
          f.end = f.i;
          continue;
        }
        const index = f.i++;
        if (f.isMap) {
          const [k, v] = step.value as [unknown, unknown];
          f.pending = v;
          f.hasPending = true;
          child = k;
          key = { entry: index, part: "key" };
        } else {
          child = step.value;
          key = { entry: index, part: "item" };
        }
        bytes += 2;
      }
    } catch {
      f.end = f.i; // a throwing getter or trap ends this object's children
      f.hasPending = false;
      continue;
    }
    if (!visit(child, f, key, f.depth + 1)) return finish();
  }
  return finish();

  function finish(): WalkReport {
    report.nodes = nodes;
    report.bytes = bytes;
    return report;
  }
}

/**
 * Bytes of a small tree of strings, numbers, booleans, null, plain arrays and plain objects, as
 * `walk` counts them in data mode; -1 when the value is anything else or passes `budget.nodes`
 * (so a cycle or shared reference always ends up in the full walk).
 */
function quickDataBytes(v: unknown, budget: { nodes: number }, depth: number, maxKey: number): number {
  if (--budget.nodes < 0) return -1;
  switch (typeof v) {
    case "string":
      return v.length;
    case "number":
      return 8;
    case "boolean":
      return 5;
    case "undefined":
      return 9;
    case "object":
      break;
    default:
      return -1;
  }
  if (v === null) return 4;
  if (depth > 4) return -1;
  if (Array.isArray(v)) {
    const arr = v as unknown[];
    if (arr.length > QUICK_NODES) return -1;
    let bytes = 2;
    for (let i = 0; i < arr.length; i++) {
      const b = quickDataBytes(arr[i], budget, depth + 1, maxKey);
      if (b < 0) return -1;
      bytes += b + (i > 0 ? 1 : 0);
    }
    return bytes;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return -1;
  let bytes = 2;
  for (const key in v) {
    if (!Object.hasOwn(v, key) || key.length > maxKey) return -1;
    const b = quickDataBytes((v as Record<string, unknown>)[key], budget, depth + 1, maxKey);
    if (b < 0) return -1;
    bytes += b + key.length + 3;
  }
  return bytes;
}

function newFrame(
  obj: object,
  depth: number,
  parent: Frame | null,
  key: PathKey,
  kind: Kind,
  items: Frame["items"],
  keys: string[] | null,
  end: number,
  iterator: Iterator<unknown> | null,
  isMap: boolean,
): Frame {
  return { obj, depth, parent, key, kind, items, keys, iterator, isMap, i: 0, end, pending: undefined, hasPending: false };
}

/** `$.a[3]["odd key"]`: where the walk stopped, as an agent would write it. */
function pathOf(parent: Frame | null, key: PathKey): string {
  const parts = [segment(key)];
  for (let f = parent; f; f = f.parent) parts.push(segment(f.key));
  const joined = parts.reverse().join("");
  // A pathological depth is cut by maxDepth first; still, keep the path readable.
  return `$${joined.length > 200 ? `${joined.slice(0, 100)}…${joined.slice(-100)}` : joined}`;
}

function segment(key: PathKey): string {
  if (key === null) return "";
  if (typeof key === "number") return `[${key}]`;
  if (typeof key === "string") {
    const shown = key.length > 60 ? `${key.slice(0, 60)}…` : key;
    return PLAIN_KEY.test(key) ? `.${shown}` : `[${JSON.stringify(shown)}]`;
  }
  return key.part === "item" ? `<item ${key.entry}>` : `<${key.part} ${key.entry}>`;
}

/** Why a primitive (or function) is not JSON, or null. */
function jsonLeafProblem(v: unknown): string | null {
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) ? null : `${String(v)} (JSON has no NaN or Infinity)`;
    case "undefined":
      return "undefined";
    case "bigint":
      return "a BigInt";
    case "symbol":
      return "a Symbol";
    case "function":
      return "a function";
    default:
      return null;
  }
}

function leafBytes(v: unknown, mode: WalkMode, displayString: number): number {
  switch (typeof v) {
    case "string":
      if (mode === "json") return jsonStringLength(v);
      if (mode === "display") return Math.min(v.length, displayString) + 2;
      return v.length;
    case "number":
      return 8;
    case "boolean":
      return 5;
    case "bigint":
      return bigintDigits(v);
    case "symbol":
      return (v.description?.length ?? 0) + 8;
    case "undefined":
      return 9;
    default:
      return 4;
  }
}

/** Length of JSON.stringify(s), counting escapes only when the string has characters that need them. */
function jsonStringLength(s: string): number {
  // eslint-disable-next-line no-control-regex
  return /["\\\u0000-\u001f\ud800-\udfff]/.test(s) ? JSON.stringify(s).length : s.length + 2;
}

/** Decimal digits of a BigInt, estimated from its bit length without converting it (which is superlinear). */
export function bigintDigits(v: bigint): number {
  let n = v < 0n ? -v : v;
  let bits = 0;
  // Halve in big steps: each shift is linear, and there are logarithmically many.
  for (let step = 1 << 20; step >= 1; step >>= 1) {
    const s = BigInt(step);
    while (n >> s > 0n) {
      n >>= s;
      bits += step;
    }
  }
  return Math.floor(bits * 0.30103) + 1;
}

function displayLeafBytes(obj: object, tag: string): number {
  if (tag === "[object RegExp]") return (obj as RegExp).source.length + 8;
  if (tag === "[object Error]") {
    const e = obj as Error;
    const stack = typeof e.stack === "string" ? e.stack.length : 0;
    return stack + (typeof e.message === "string" ? e.message.length : 0) + 10;
  }
  if (typeof obj === "function") return 20 + nameLength(obj);
  return tag === "[object Object]" ? 2 : 30;
}

function nameLength(fn: object): number {
  const name = (fn as { name?: unknown }).name;
  return typeof name === "string" ? name.length : 0;
}

/** A plain object of any realm (values come from a vm context or over IPC). */
export function isPlainObject(value: object): boolean {
  if (Object.prototype.toString.call(value) !== "[object Object]") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}
