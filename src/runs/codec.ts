/**
 * How the ledger keeps values: the ts-code-mode value codec (tagged JSON + base64 buffers, see
 * execution/remote/wire.ts), so a replayed reply is the same value the guest first got —
 * Uint8Array, Map, Date and undefined included.
 */
import { fromWire, toWire } from "../execution/remote/wire.js";
import type { EncodedValue } from "../storage/runs.js";

export function encodeValue(value: unknown): EncodedValue {
  return toWire(value, "data");
}

export function decodeValue(encoded: EncodedValue): unknown {
  return fromWire(encoded);
}

/** Bytes an encoded value takes in the ledger (what the size bounds count). */
export function encodedBytes(v: EncodedValue): number {
  let n = v.json.length;
  for (const b of v.buffers) n += b.length;
  return n;
}
