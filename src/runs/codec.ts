/**
 * How the ledger keeps values: the ts-code-mode value codec (tagged JSON + base64 buffers, see
 * execution/remote/wire.ts), so a replayed reply is the same value the guest first got —
 * Uint8Array, Map, Date and undefined included.
 *
 * Most logged values are primitives (a CLI tool's stdout is a string), and the codec writes a
 * string, a finite number other than -0, a boolean or null as its plain JSON text; every tagged
 * value's text starts with "[". So primitives take a fast path both ways (JSON.stringify /
 * JSON.parse, no walk, no buffers), with output identical to the codec's (test/runs/codec.test.ts).
 *
 * A call's arguments are mostly small trees of plain objects, arrays and primitives
 * (`["wc", "lines", { path: "a.txt" }]`): those are tagged here without the codec's per-node path
 * strings and bookkeeping, again with identical output. Anything else — a Map, a Date, bytes, an
 * object met twice, NaN or -0, a deep or large tree — goes through the codec.
 */
import { fromWire, toWire } from "../execution/remote/wire.js";
import type { EncodedValue } from "../storage/runs.js";

/** Longer strings go through the codec, which enforces the wire's size bound. */
const FAST_STRING_CHARS = 1_048_576;

/** Bounds of the tagged fast path; past them the codec (with its own bounds) takes the value. */
const FAST_TREE_NODES = 4_096;
const FAST_TREE_DEPTH = 32;
const FAST_TREE_CHARS = 1_048_576;

/** Strings up to this long are checked for characters JSON must escape and, if none, quoted as they are. */
const PLAIN_STRING_CHARS = 256;

/**
 * `JSON.stringify(s)`: short strings without anything to escape (most names and outputs) skip its
 * call. The check is a loop, not a regular expression: a call's few short strings (a tool's name,
 * its callable, a short result) are checked on every call, and entering the regexp engine from a
 * cold cache (a container's calls arrive between the engine connection's I/O) cost more than the loop.
 */
function jsonString(s: string): string {
  if (s.length > PLAIN_STRING_CHARS) return JSON.stringify(s);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // What JSON.stringify escapes: control characters, quote, backslash; surrogates may be lone ones.
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/**
 * The `buffers` of every value the fast paths encode: one shared empty array (frozen, so a slip
 * that pushes into it throws) rather than a fresh one per value, two allocations fewer a call.
 */
const NO_BUFFERS = Object.freeze([]) as unknown as string[];

export function encodeValue(value: unknown): EncodedValue {
  switch (typeof value) {
    case "string":
      if (value.length <= FAST_STRING_CHARS) return { json: jsonString(value), buffers: NO_BUFFERS };
      break;
    case "number":
      if (Number.isFinite(value) && !Object.is(value, -0)) return { json: JSON.stringify(value), buffers: NO_BUFFERS };
      break;
    case "boolean":
      return { json: value ? "true" : "false", buffers: NO_BUFFERS };
    case "object":
      if (value === null) return { json: "null", buffers: NO_BUFFERS };
      break;
  }
  if (typeof value === "object" && value !== null) {
    const json = fastTreeJson(value);
    if (json !== undefined) return { json, buffers: NO_BUFFERS };
  }
  return toWire(value, "data");
}

/** What one fastTreeJson walk has counted so far, against the fast path's bounds. */
interface Walk {
  nodes: number;
  chars: number;
  /**
   * Objects met: none, the one, a short list, or (past SEEN_LIST) a Set; an object met twice
   * leaves the fast path. A tool call's arguments hold two objects (the argument array and the
   * tool's arguments): a Set for them was one allocation of the ledger's largest per call.
   */
  seen: object | object[] | Set<object> | null;
  /** `seen` is the list (the one object met may itself be an array). */
  seenIsList: boolean;
}

/** Objects a walk lists in an array before it takes a Set (a linear search is cheaper up to here). */
const SEEN_LIST = 8;

/**
 * The codec's text of `root` — its tagged tree (["a", ...] for an array, ["o", key, value, ...]
 * for an object, ["u"] for undefined) as JSON — written directly, when `root` holds nothing but
 * plain objects, arrays and primitives the codec writes as themselves, each object once;
 * undefined otherwise. Written as text rather than built as a tree and stringified: a tool call's
 * arguments are encoded on every call, and the tree's arrays were most of the ledger's garbage.
 */
function fastTreeJson(root: object): string | undefined {
  return treeJson(root, 0, { nodes: 0, chars: 0, seen: null, seenIsList: false });
}

function treeJson(v: unknown, depth: number, walk: Walk): string | undefined {
  if (++walk.nodes > FAST_TREE_NODES) return undefined;
  switch (typeof v) {
    case "string":
      walk.chars += v.length;
      return walk.chars > FAST_TREE_CHARS ? undefined : jsonString(v);
    case "number":
      // A finite number other than -0: JSON.stringify writes what String() does.
      return Number.isFinite(v) && !Object.is(v, -0) ? String(v) : undefined;
    case "boolean":
      return v ? "true" : "false";
    case "undefined":
      return '["u"]';
    case "object":
      break;
    default:
      return undefined;
  }
  if (v === null) return "null";
  if (depth >= FAST_TREE_DEPTH) return undefined;
  const isArray = Array.isArray(v);
  if (!isArray) {
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return undefined;
  }
  if (!firstMeeting(walk, v)) return undefined;
  if (isArray) {
    let out = '["a"';
    for (let i = 0; i < v.length; i++) {
      const t = treeJson(v[i], depth + 1, walk);
      if (t === undefined) return undefined;
      out += `,${t}`;
    }
    return `${out}]`;
  }
  let out = '["o"';
  for (const key of Object.keys(v)) {
    walk.chars += key.length;
    const t = treeJson((v as Record<string, unknown>)[key], depth + 1, walk);
    if (t === undefined) return undefined;
    out += `,${jsonString(key)},${t}`;
  }
  return `${out}]`;
}

/** True the first time `o` (a plain object or array) is met in this walk (no Set for the common case of a few). */
function firstMeeting(walk: Walk, o: object): boolean {
  const seen = walk.seen;
  if (seen === null) walk.seen = o;
  else if (seen instanceof Set) {
    if (seen.has(o)) return false;
    seen.add(o);
  } else if (walk.seenIsList) {
    const list = seen as object[];
    if (list.includes(o)) return false;
    if (list.length < SEEN_LIST) list.push(o);
    else walk.seen = new Set([...list, o]);
  } else {
    if (seen === o) return false;
    walk.seen = [seen, o];
    walk.seenIsList = true;
  }
  return true;
}

export function decodeValue(encoded: EncodedValue): unknown {
  // Only a tagged value (array, object, special number, undefined, bytes, ...) starts with "[".
  if (encoded.buffers.length === 0 && encoded.json.length > 0 && encoded.json[0] !== "[") return JSON.parse(encoded.json) as unknown;
  return fromWire(encoded);
}

/** Bytes an encoded value takes in the ledger (what the size bounds count). */
export function encodedBytes(v: EncodedValue): number {
  let n = v.json.length;
  for (const b of v.buffers) n += b.length;
  return n;
}
