/**
 * Hand-written checks that answer "certainly valid" for the plain options a cold path passes
 * (issue 24: zod costs ~60 ms of a fresh process to load and ~30 ms more to compile its parsers, and
 * a CLI `run` or an MCP handshake needs no error message). They only ever accept: anything they do
 * not accept, or a key they do not know, goes to the zod schema, which decides and words the error,
 * so what is accepted and every message stay as they were.
 */
export type Check = (v: unknown) => boolean;

export const isFn: Check = (v) => typeof v === "function";
export const isNonEmptyString: Check = (v) => typeof v === "string" && v.length > 0;
export const isBool: Check = (v) => typeof v === "boolean";
export const isIntIn =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;
export const isArrayOf =
  (each: Check): Check =>
  (v) => {
    if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
    // An index loop, not every(): a hole is undefined to zod, and fails it.
    for (let i = 0; i < v.length; i++) if (!each(v[i])) return false;
    return true;
  };

/** A plain object (no class instance, array or proxy-ish prototype) without symbol keys. */
export function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(v).length === 0;
}

/** Every own property of `o` is a data property named in `checks` whose value is undefined or passes it. */
export function hasOnly(o: Record<string, unknown>, checks: Readonly<Record<string, Check>>): boolean {
  for (const [k, d] of Object.entries(Object.getOwnPropertyDescriptors(o))) {
    if (!Object.hasOwn(checks, k) || !("value" in d)) return false;
    if (d.value !== undefined && !checks[k]!(d.value)) return false;
  }
  return true;
}

/**
 * What a strict zod object parse would return for `options` (undefined taken as {}), when `checks`
 * alone can tell it is valid; else undefined (ask zod). Arrays and objects are copied, as zod does.
 */
export function quickParse(options: unknown, checks: Readonly<Record<string, Check>>): Record<string, unknown> | undefined {
  const o = options ?? {};
  if (!isPlain(o) || !hasOnly(o, checks)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = Array.isArray(v) ? [...(v as unknown[])] : isPlain(v) ? { ...v } : v;
  return out;
}
