/**
 * Values over HTTP between `serve` and RemoteExecutor. JSON alone loses what a run's value or a
 * namespace reply may hold (Uint8Array, Map, Date, undefined, BigInt, cycles), so values travel in
 * the sandbox's codec (../sandbox/codec.ts: one JSON string plus byte buffers), the buffers as
 * base64. Decoding is bounded (depth, size) and never lets a key change a prototype.
 */
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { boundedJson } from "../../values/json.js";
import { decode, encode } from "../sandbox/codec.js";

/** Deepest nesting and largest encoded size accepted either way; the executors' own caps are smaller. */
export const WIRE_MAX_DEPTH = 200;
export const WIRE_MAX_BYTES = 64 * 1_048_576;

export const wireValueSchema = lazy(() => z
  .strictObject({
    json: z.string().describe("the value in the ts-code-mode value codec (tagged JSON)"),
    buffers: z.array(z.string()).describe("byte buffers the JSON refers to, base64").max(100_000),
  })
  .describe("A value that keeps Uint8Array, Map, Set, Date, BigInt, undefined and shared references"));
export type WireValue = z.infer<typeof wireValueSchema>;

/** `mode: "display"` turns what cannot be copied (a function) into a placeholder instead of failing. */
export function toWire(value: unknown, mode: "data" | "display" = "display"): WireValue {
  const { json, buffers } = encode(value, { mode, maxDepth: WIRE_MAX_DEPTH, maxBytes: WIRE_MAX_BYTES });
  return { json, buffers: buffers.map((b) => Buffer.from(b).toString("base64")) };
}

export function fromWire(wire: WireValue): unknown {
  const buffers = wire.buffers.map((b) => {
    const bytes = Buffer.from(b, "base64");
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  });
  return decode(wire.json, buffers, { maxDepth: WIRE_MAX_DEPTH, strictKeys: true, opaque: (text) => `[${text}]` }).value;
}

/** Bounds on the JSON rendering: a DAG of 40 arrays has 2^40 paths that JSON.stringify would repeat. */
const PLAIN_JSON_LIMITS = { maxNodes: 1_000_000, maxDepth: 1_000, maxBytes: WIRE_MAX_BYTES };

/**
 * A JSON rendering for plain HTTP clients: the value if JSON can carry it exactly within the
 * bounds, else undefined (the `wire` form is always exact).
 */
export function plainJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const json = boundedJson(value, PLAIN_JSON_LIMITS);
  return json.ok ? (JSON.parse(json.text) as unknown) : undefined;
}
