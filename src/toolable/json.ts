/**
 * JSON text exactly as Python's `json.dumps` writes it (what the reference toolable prints), so a
 * caller comparing bytes cannot tell our executables from Python ones: `", "` and `": "` separators
 * (or `indent=2` with `","` at line ends), non-ASCII escaped as `\uXXXX` (ensure_ascii), NaN and
 * Infinity written as Python does.
 */

function str(s: string): string {
  // JSON.stringify escapes what JSON needs; ensure_ascii also escapes every non-ASCII code unit.
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function num(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "Infinity";
  if (n === -Infinity) return "-Infinity";
  return JSON.stringify(n);
}

/** `json.dumps(value)` (indent undefined) or `json.dumps(value, indent=2)`. Undefined object members are left out. */
export function pyDumps(value: unknown, indent?: number): string {
  const walk = (v: unknown, depth: number): string | undefined => {
    if (v === null) return "null";
    if (typeof v === "string") return str(v);
    if (typeof v === "number") return num(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "bigint") return v.toString();
    if (v === undefined || typeof v === "function" || typeof v === "symbol") return undefined;
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return walk((toJSON as () => unknown).call(v), depth);
    const pad = indent === undefined ? "" : `\n${" ".repeat(indent * (depth + 1))}`;
    const end = indent === undefined ? "" : `\n${" ".repeat(indent * depth)}`;
    const sep = indent === undefined ? ", " : ",";
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      return `[${v.map((x) => pad + (walk(x, depth + 1) ?? "null")).join(sep)}${end}]`;
    }
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const t = walk(x, depth + 1);
      if (t !== undefined) parts.push(`${pad}${str(k)}: ${t}`);
    }
    if (parts.length === 0) return "{}";
    return `{${parts.join(sep)}${end}}`;
  };
  return walk(value, 0) ?? "null";
}
