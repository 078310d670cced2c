/**
 * How artifact values become bytes and come back, shared by every backend so that "the same kind of
 * value back" means the same thing everywhere: strings are UTF-8 text, Uint8Array (Buffer included)
 * is bytes, anything else must be a JSON value. Non-JSON values are rejected up front instead of
 * being silently dropped or changed by JSON.stringify (undefined keys vanish, Dates turn into
 * strings, NaN into null), because an agent would only notice after the value came back different.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../errors.js";
import { assertWithinJsonLimits } from "../values/json.js";
import type { ArtifactData, ArtifactKind, JsonValue } from "./protocol.js";

export interface EncodedArtifact {
  kind: ArtifactKind;
  bytes: Uint8Array;
}

const LONE_SURROGATE = /[\ud800-\udfff]/u;
// ignoreBOM keeps a leading U+FEFF, so text starting with one round-trips exactly.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
const strictUtf8 = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });

/** Picks the kind for `data` and serialises it. Throws ValidationError for anything else. */
export function encodeArtifact(data: unknown): EncodedArtifact {
  if (typeof data === "string") {
    if (LONE_SURROGATE.test(data)) {
      throw new ValidationError("Text contains an unpaired surrogate, which UTF-8 cannot store; fix the string or save it as bytes.");
    }
    return { kind: "text", bytes: Buffer.from(data, "utf8") };
  }
  if (data instanceof Uint8Array) return { kind: "bytes", bytes: Uint8Array.from(data) };
  assertJsonValue(data, "Artifact data");
  return { kind: "json", bytes: Buffer.from(JSON.stringify(data, null, 2), "utf8") };
}

/** The value for stored `bytes` of `kind`. Bytes come back as a plain Uint8Array, never a Buffer. */
export function decodeArtifact(kind: ArtifactKind, bytes: Uint8Array): ArtifactData {
  switch (kind) {
    case "text":
      return utf8.decode(bytes);
    case "bytes":
      return Uint8Array.from(bytes);
    case "json":
      return JSON.parse(utf8.decode(bytes)) as JsonValue;
  }
}

/**
 * Kind of bytes that have no trustworthy metadata (a file dropped in by hand, or edited since).
 * `hint` is the kind recorded last time, `name` lets a hand-made `*.json` file load as JSON.
 */
export function inferKind(bytes: Uint8Array, hint?: ArtifactKind, name?: string): ArtifactKind {
  if (hint === "bytes") return "bytes";
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return "bytes";
  }
  if (text.includes("\u0000")) return "bytes";
  if (hint === "json" || (hint === undefined && name?.toLowerCase().endsWith(".json"))) {
    try {
      JSON.parse(text);
      return "json";
    } catch {
      return "text";
    }
  }
  return "text";
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Throws ValidationError naming the first non-JSON part of `value` and where it is. */
export function assertJsonValue(value: unknown, what: string): asserts value is JsonValue {
  // Bounded first (a DAG of 2^40 paths, a deep or huge value): the checks below and JSON.stringify then are too.
  assertWithinJsonLimits(value, what);
  const problem = jsonProblem(value, "$", new Set());
  if (problem) throw new ValidationError(`${what} is not JSON-serialisable: ${problem}.`);
}

/** Metadata is a plain object whose values are JSON. */
export function assertJsonObject(value: unknown, what: string): asserts value is Record<string, JsonValue> {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !isPlainObject(value)) {
    throw new ValidationError(`${what} must be a plain object of JSON values, got ${describe(value)}.`);
  }
  assertJsonValue(value, what);
}

function jsonProblem(value: unknown, path: string, ancestors: Set<object>): string | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : `${path} is ${String(value)} (JSON has no NaN or Infinity)`;
    case "undefined":
      return `${path} is undefined (omit the key or use null)`;
    case "bigint":
      return `${path} is a BigInt (convert it to a string or number first)`;
    case "symbol":
      return `${path} is a Symbol`;
    case "function":
      return `${path} is a function`;
  }
  if (value === null) return null;
  const obj = value as object;
  if (ancestors.has(obj)) return `${path} is a circular reference (cycle back to an enclosing object)`;
  if (Array.isArray(obj)) {
    ancestors.add(obj);
    for (let i = 0; i < obj.length; i++) {
      if (!(i in obj)) return `${path}[${i}] is an empty array slot`;
      const p = jsonProblem(obj[i], `${path}[${i}]`, ancestors);
      if (p) return p;
    }
    ancestors.delete(obj);
    return null;
  }
  if (!isPlainObject(obj)) return `${path} is ${describe(obj)}${conversionHint(obj)}`;
  ancestors.add(obj);
  for (const [key, v] of Object.entries(obj)) {
    const p = jsonProblem(v, `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`, ancestors);
    if (p) return p;
  }
  ancestors.delete(obj);
  return null;
}

function isPlainObject(obj: object): boolean {
  const proto: unknown = Object.getPrototypeOf(obj);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value !== "object") return `a ${typeof value}`;
  const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof ctor === "string" && ctor ? `a ${ctor}` : "a non-plain object";
}

function conversionHint(obj: object): string {
  if (obj instanceof Date) return " (store date.toISOString() instead)";
  if (obj instanceof Map) return " (store Object.fromEntries(map) instead)";
  if (obj instanceof Set) return " (store [...set] instead)";
  if (obj instanceof Uint8Array) return " (save bytes as their own artifact, or encode them as base64)";
  return " (only plain objects, arrays, strings, finite numbers, booleans and null are JSON)";
}
