/**
 * Validation shared by every tool adapter: tool and callable names, and call arguments checked
 * against a callable's `ParamSpec[]`. The registry runs `validateArgs` before it hands arguments to
 * an adapter, so adapters (cli, mcp, http) see only well-typed, known parameters and every tool
 * reports bad input with the same wording.
 */
import { ToolError, ValidationError, didYouMean } from "../errors.js";
import type { CallableInfo, ParamSpec, ParamType } from "./protocol.js";

export const IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Methods of the `tools` namespace itself; a tool with one of these names would be unreachable. */
export const RESERVED_NAMESPACE_METHODS: readonly string[] = ["list", "search", "describe", "call"];

/**
 * Names that break either the guest proxies (`then` makes `tools.x` look like a Promise; the
 * others are object internals) or the generated declarations (`const delete: ...` does not parse).
 */
const UNSAFE_NAMES: ReadonlySet<string> = new Set([
  "then", "constructor", "prototype", "__proto__",
  "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
  "else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
  "instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof",
  "var", "void", "while", "with", "yield", "let", "static", "implements", "interface", "package",
  "private", "protected", "public", "await", "arguments", "eval", "undefined",
]);

/** Why `name` cannot be a tool name, or null when it can. */
export function toolNameProblem(name: string): string | null {
  if (!IDENTIFIER_RE.test(name)) return `tool name ${JSON.stringify(name)} must be an identifier (letters, digits, _; not starting with a digit)`;
  if (RESERVED_NAMESPACE_METHODS.includes(name)) {
    return `tool name '${name}' is reserved (tools.${name} is a method of the tools namespace: ${RESERVED_NAMESPACE_METHODS.join(", ")})`;
  }
  if (UNSAFE_NAMES.has(name)) return `tool name '${name}' is a reserved word; choose another name`;
  return null;
}

/** Why `name` cannot be a recipe (callable) name of a YAML tool, or null when it can. */
export function recipeNameProblem(name: string): string | null {
  if (!IDENTIFIER_RE.test(name)) return `recipe name ${JSON.stringify(name)} must be an identifier (letters, digits, _; not starting with a digit)`;
  if (["then", "constructor", "prototype", "__proto__"].includes(name)) return `recipe name '${name}' is reserved; choose another name`;
  return null;
}

const PLAIN_KEY_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Names in a label are cut here: a name comes from agent code and may be megabytes long. */
const MAX_LABEL_NAME = 80;

function labelPart(name: string): string {
  return name.length > MAX_LABEL_NAME ? `${name.slice(0, MAX_LABEL_NAME)}…` : name;
}

/**
 * A call as the agent wrote it, for messages: `tools.wc.lines`, `tools.date` (the direct call),
 * `tools.math["get-weather"]`. Long names are cut.
 */
export function callLabel(tool: string, callable: string | null): string {
  const t = labelPart(tool);
  const head = PLAIN_KEY_RE.test(tool) ? `tools.${t}` : `tools[${JSON.stringify(t)}]`;
  if (callable === null) return head;
  const c = labelPart(callable);
  return PLAIN_KEY_RE.test(callable) ? `${head}.${c}` : `${head}[${JSON.stringify(c)}]`;
}

/** Throws ValidationError when `name` cannot be a tool name. `where` names the source (a file). */
export function assertToolName(name: string, where: string): void {
  const problem = toolNameProblem(name);
  if (problem) throw new ValidationError(`${where}: ${problem}`);
}

/** A short, readable rendering of a value's kind for "expected X, got Y" messages. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `string ${JSON.stringify(shown)}`;
  }
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "NaN";
    if (!Number.isFinite(value)) return String(value);
    return `number ${value}`;
  }
  if (typeof value === "boolean") return `boolean ${value}`;
  if (typeof value === "bigint") return "bigint";
  if (typeof value === "function") return "function";
  if (typeof value === "object") return isPlainObject(value) ? "object" : (value.constructor?.name ?? "object");
  return typeof value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function typeMatches(type: ParamType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    case "unknown":
      return true;
  }
}

/** TypeScript-ish name of a param's expected type, for messages. */
export function expectedText(spec: Pick<ParamSpec, "type" | "items" | "enum">): string {
  if (spec.enum && spec.enum.length > 0) return `one of ${spec.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  if (spec.type === "array") return `array of ${spec.items ?? "unknown"}`;
  return spec.type;
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Why `value` does not fit `spec`, or null when it fits. `path` prefixes nested problems
 * (`header[1]`, `opts.depth`). Used for call arguments and, at load time, for YAML defaults/presets.
 */
export function valueProblem(spec: ParamSpec, value: unknown, path: string = spec.name): string | null {
  if (!typeMatches(spec.type, value)) {
    return `'${path}' expected ${expectedText({ type: spec.type, items: spec.items })}, got ${describeValue(value)}`;
  }
  if (spec.enum && spec.enum.length > 0 && !spec.enum.some((e) => sameJson(e, value))) {
    return `'${path}' expected ${expectedText(spec)}, got ${describeValue(value)}`;
  }
  if (spec.type === "array" && Array.isArray(value) && spec.items && spec.items !== "unknown") {
    const items = spec.items;
    for (let i = 0; i < value.length; i++) {
      const el: unknown = value[i];
      if (!typeMatches(items, el)) return `'${path}[${i}]' expected ${items}, got ${describeValue(el)}`;
    }
  }
  if (spec.type === "object" && isPlainObject(value) && spec.properties) {
    for (const prop of spec.properties) {
      const v = value[prop.name];
      if (v === undefined) {
        if (prop.required) return `'${path}.${prop.name}' is required`;
        continue;
      }
      const p = valueProblem(prop, v, `${path}.${prop.name}`);
      if (p) return p;
    }
  }
  return null;
}

/** Params of a callable up to which validateArgs scans them instead of building a Map. */
const FEW_PARAMS = 8;

/** The param named `name`; the last one, as a Map built from the list would keep. */
function lastNamed(params: readonly ParamSpec[], name: string): ParamSpec | undefined {
  for (let i = params.length - 1; i >= 0; i--) if ((params[i] as ParamSpec).name === name) return params[i];
  return undefined;
}

/**
 * Check `args` against a callable's params and return the arguments to pass on: a fresh object
 * without `undefined`/`null` entries (both mean "not given", which is what an LLM writing
 * `{ header: null }` means). Throws ToolError INVALID_INPUT / MISSING_PARAM.
 * Requiredness is taken from `ParamSpec.required` as is: an adapter that fills a value from a
 * default or a recipe preset reports that param as not required.
 */
export function validateArgs(tool: string, callable: string | null, info: CallableInfo, args: unknown): Record<string, unknown> {
  // Messages start with the call as the agent wrote it; HostServices adds no second prefix to them.
  // The label and the list of names are built only for a message: this runs on every tool call.
  const fail = (code: "INVALID_INPUT" | "MISSING_PARAM", message: string): never => {
    throw new ToolError({ tool, callable, code, message });
  };
  if (args === undefined || args === null) args = {};
  if (!isPlainObject(args)) {
    return fail("INVALID_INPUT", `${callLabel(tool, callable)}: takes one argument, an object of named parameters like { ${info.params[0]?.name ?? "name"}: ... }; got ${describeValue(args)}`);
  }
  const params = info.params;
  // A few params are found faster by a scan than through a Map built for the call; many are not.
  const accepted = params.length > FEW_PARAMS ? new Map(params.map((p) => [p.name, p])) : null;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(args)) {
    const value = args[key];
    const spec = accepted ? accepted.get(key) : lastNamed(params, key);
    if (!spec && info.open) {
      if (value !== undefined && value !== null) out[key] = value;
      continue;
    }
    if (!spec) {
      const label = callLabel(tool, callable);
      const names = params.map((p) => p.name);
      const listed = names.length ? ` Accepted: ${names.join(", ")}.` : ` ${label} takes no arguments.`;
      return fail("INVALID_INPUT", `${label}: Unknown argument '${key}'.${didYouMean(key, names)}${listed}`);
    }
    if (value === undefined || value === null) continue;
    const problem = valueProblem(spec, value);
    if (problem) fail("INVALID_INPUT", `${callLabel(tool, callable)}: Invalid argument ${problem}`);
    out[key] = value;
  }
  for (const spec of params) {
    if (spec.required && out[spec.name] === undefined) {
      const what = spec.description ? ` (${spec.description})` : "";
      fail("MISSING_PARAM", `${callLabel(tool, callable)}: Missing required argument '${spec.name}'${what}: expected ${expectedText(spec)}`);
    }
  }
  return out;
}
