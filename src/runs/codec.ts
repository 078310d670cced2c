/**
 * How the ledger keeps values: the ts-code-mode value codec (tagged JSON + base64 buffers, see
 * execution/remote/wire.ts), so a replayed reply is the same value the guest first got —
 * Uint8Array, Map, Date and undefined included.
 *
 * Most logged values are primitives (a CLI tool's stdout is a string), and the codec writes a
 * string, a finite number other than -0, a boolean or null as its plain JSON text; every tagged
 * value's text starts with "[". So primitives take a fast path both ways (JSON.stringify /
 * JSON.parse, no walk, no buffers), with output identical to the codec's (test/runs/codec.test.ts).
 */
import { fromWire, toWire } from "../execution/remote/wire.js";
import type { EncodedValue } from "../storage/runs.js";

/** Longer strings go through the codec, which enforces the wire's size bound. */
const FAST_STRING_CHARS = 1_048_576;

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
  return toWire(value, "data");
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
