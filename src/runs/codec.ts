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

type Tagged = null | boolean | number | string | Tagged[];

export function encodeValue(value: unknown): EncodedValue {
  switch (typeof value) {
    case "string":
      if (value.length <= FAST_STRING_CHARS) return { json: JSON.stringify(value), buffers: [] };
      break;
    case "number":
      if (Number.isFinite(value) && !Object.is(value, -0)) return { json: JSON.stringify(value), buffers: [] };
      break;
    case "boolean":
      return { json: value ? "true" : "false", buffers: [] };
    case "object":
      if (value === null) return { json: "null", buffers: [] };
      break;
  }
  if (typeof value === "object" && value !== null) {
    const tree = fastTree(value);
    if (tree !== undefined) return { json: JSON.stringify(tree), buffers: [] };
  }
  return toWire(value, "data");
}

/**
 * The codec's tagged tree of `value` (["a", ...] for an array, ["o", key, value, ...] for an
 * object, ["u"] for undefined) when it holds nothing but plain objects, arrays and primitives the
 * codec writes as themselves, each object once; undefined otherwise.
 */
function fastTree(root: object): Tagged[] | undefined {
  let nodes = 0;
  let chars = 0;
  const seen = new Set<object>();
  const walk = (v: unknown, depth: number): Tagged | undefined => {
    if (++nodes > FAST_TREE_NODES) return undefined;
    switch (typeof v) {
      case "string":
        chars += v.length;
        return chars > FAST_TREE_CHARS ? undefined : v;
      case "number":
        return Number.isFinite(v) && !Object.is(v, -0) ? v : undefined;
      case "boolean":
        return v;
      case "undefined":
        return ["u"];
      case "object":
        break;
      default:
        return undefined;
    }
    if (v === null) return null;
    if (depth >= FAST_TREE_DEPTH || seen.has(v)) return undefined;
    seen.add(v);
    if (Array.isArray(v)) {
      const out: Tagged[] = ["a"];
      for (let i = 0; i < v.length; i++) {
        const t = walk(v[i], depth + 1);
        if (t === undefined) return undefined;
        out.push(t);
      }
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return undefined;
    const out: Tagged[] = ["o"];
    for (const key of Object.keys(v)) {
      chars += key.length;
      const t = walk((v as Record<string, unknown>)[key], depth + 1);
      if (t === undefined) return undefined;
      out.push(key, t);
    }
    return out;
  };
  return walk(root, 0) as Tagged[] | undefined;
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
