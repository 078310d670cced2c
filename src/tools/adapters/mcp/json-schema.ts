/**
 * MCP tools describe their arguments (`inputSchema`) and, optionally, their result (`outputSchema`)
 * as JSON Schema. Discovery and argument validation in ts-code-mode speak `ParamSpec`, and
 * `tools.describe` speaks TypeScript, so this module translates:
 *
 *   - `paramsFromInputSchema`: the top-level properties → ParamSpec[] (type, items, enum, default,
 *     description, required, nested object properties);
 *   - `typeTextFromSchema`: any schema → TypeScript type text (for `CallableInfo.returns`).
 *
 * Only what ParamSpec / a type can say is kept. Constructs that do not map (a union of different
 * types, tuples, patterns, numeric bounds) degrade to the loose type (`unknown`, `unknown[]`) and
 * the server's own validation, which still runs, has the final word. Local `$ref`s
 * (`#/$defs/...`, `#/definitions/...`) are followed; recursion and depth are bounded so a hostile
 * or cyclic schema cannot hang discovery.
 */
import type { JsonValue } from "../../../storage/protocol.js";
import type { ParamSpec, ParamType } from "../../protocol.js";
import { isPlainObject } from "../../validate.js";

type Schema = Record<string, unknown>;

/** Nested objects deeper than this are described as plain objects. */
const MAX_DEPTH = 6;
/**
 * Schema nodes one conversion visits at most. Depth alone does not bound the work: `$ref`s make a
 * schema a graph, and 50 properties each pointing at the same 50-property object, six levels
 * deep, is 50^6 nodes from a few kilobytes of JSON. Past the budget, objects lose their properties
 * and types become `unknown`.
 */
const MAX_NODES = 2_000;
/** `$ref` hops followed before giving up (a cycle, or a very indirect schema). */
const MAX_REF_HOPS = 16;
/** A generated type longer than this is replaced by its loose form: nobody reads a 10 kB type. */
const MAX_TYPE_TEXT = 4_000;
const PLAIN_KEY_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function isJsonValue(v: unknown): v is JsonValue {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonValue);
  if (isPlainObject(v)) return Object.values(v).every(isJsonValue);
  return false;
}

/** Follow a local JSON pointer (`#/$defs/Thing`, `#/components/schemas/Issue`) inside `root`; undefined when it leads nowhere. */
export function pointer(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined; // a malformed %-escape: a pointer to nothing
    }
    if (!isPlainObject(cur) && !Array.isArray(cur)) return undefined;
    // Own keys only: "#/__proto__" or "#/constructor" must not reach Object.prototype.
    if (!Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * The schema with `$ref` resolved and the usual wrappers removed: `allOf: [x]`, and `anyOf` /
 * `oneOf` / `type: [T, "null"]` whose only non-null branch is x (how optional/nullable values are
 * often written) when `dropNull`; a parameter that may be null is simply optional, but a result
 * type keeps its `| null`. Sibling keywords (description, default) of the wrapper win over the branch's.
 */
function normalize(schema: unknown, root: unknown, dropNull = true, mergeObjects = false): Schema {
  let cur: unknown = schema;
  const outer: Schema = {};
  for (let hops = 0; hops < MAX_REF_HOPS; hops++) {
    if (!isPlainObject(cur)) return { ...outer };
    const { $ref, allOf, anyOf, oneOf, ...rest } = cur;
    let next: unknown;
    if (typeof $ref === "string") next = pointer(root, $ref);
    else if (Array.isArray(allOf) && allOf.length === 1) next = allOf[0];
    else if (dropNull) {
      const branches = Array.isArray(anyOf) ? anyOf : Array.isArray(oneOf) ? oneOf : null;
      const nonNull = branches?.filter((b) => !(isPlainObject(b) && b["type"] === "null"));
      if (nonNull && nonNull.length === 1 && branches!.length <= 2) next = nonNull[0];
    }
    // One level only (branches are normalised without merging), so a cycle of allOfs cannot recurse.
    if (next === undefined && mergeObjects && (Array.isArray(allOf) || Array.isArray(anyOf) || Array.isArray(oneOf))) {
      next = mergedObject(rest, allOf, anyOf ?? oneOf, root);
    }
    if (next === undefined) {
      const merged: Schema = { ...cur, ...outer };
      const t = merged["type"];
      if (dropNull && Array.isArray(t)) {
        const types = t.filter((x) => x !== "null");
        if (types.length === 1) merged["type"] = types[0];
      }
      return merged;
    }
    // Keep the wrapper's annotations (description, default, title) over the target's.
    for (const key of ["description", "title", "default"] as const) {
      if (rest[key] !== undefined && outer[key] === undefined) outer[key] = rest[key];
    }
    cur = next;
  }
  return { ...outer };
}

/** Branches looked at when merging `allOf` / `oneOf` / `anyOf` into one object. */
const MAX_MERGED_BRANCHES = 16;

/**
 * For parameters (not result types): `allOf` of object schemas is one object with every branch's
 * properties and required names; `oneOf` / `anyOf` of object schemas is one object with every
 * branch's properties, none required (which branch applies is the server's to check). Branches
 * that are not objects leave the schema as it was (then its type is `unknown`). Returns undefined
 * when nothing merges, so the caller keeps the schema as it is.
 */
function mergedObject(rest: Schema, allOf: unknown, either: unknown, root: unknown): Schema | undefined {
  const properties: Record<string, unknown> = isPlainObject(rest["properties"]) ? { ...rest["properties"] } : {};
  const required = new Set(requiredSet(rest));
  const merge = (branches: unknown, keepRequired: boolean): boolean => {
    if (!Array.isArray(branches)) return true;
    for (const raw of branches.slice(0, MAX_MERGED_BRANCHES)) {
      const b = normalize(raw, root, true, false);
      if (b["type"] === "null") continue;
      if (paramTypeOf(b) !== "object") return false;
      if (isPlainObject(b["properties"])) for (const [k, v] of Object.entries(b["properties"])) properties[k] ??= v;
      if (keepRequired) for (const r of requiredSet(b)) required.add(r);
    }
    return true;
  };
  if (!merge(allOf, true) || !merge(either, false)) return undefined;
  const { required: _r, properties: _p, ...annotations } = rest;
  return { ...annotations, type: "object", properties, required: [...required] };
}

function enumOf(s: Schema): JsonValue[] | undefined {
  if (s["const"] !== undefined && isJsonValue(s["const"])) return [s["const"]];
  const e = s["enum"];
  if (!Array.isArray(e) || e.length === 0) return undefined;
  const values = e.filter(isJsonValue);
  return values.length ? values : undefined;
}

function primitiveKind(v: JsonValue): ParamType {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return "unknown";
}

function paramTypeOf(s: Schema): ParamType {
  const t = s["type"];
  switch (t) {
    case "string":
    case "boolean":
    case "integer":
    case "number":
    case "array":
    case "object":
      return t;
  }
  if (t === undefined) {
    if (isPlainObject(s["properties"])) return "object";
    if (s["items"] !== undefined) return "array";
    const values = enumOf(s);
    if (values) {
      const kinds = new Set(values.map(primitiveKind));
      if (kinds.size === 1) return [...kinds][0]!;
      if (kinds.size === 2 && kinds.has("integer") && kinds.has("number")) return "number";
    }
  }
  return "unknown";
}

function requiredSet(s: Schema): Set<string> {
  const r = s["required"];
  return new Set(Array.isArray(r) ? r.filter((x): x is string => typeof x === "string") : []);
}

/** What one conversion shares: the document `$ref`s point into, the depth limit and the node budget left. */
interface Conversion {
  root: unknown;
  maxDepth: number;
  /** Nodes left (see MAX_NODES); at 0 nothing more is expanded. */
  left: number;
  /** Merge `allOf` / `oneOf` / `anyOf` of objects (see mergedObject). */
  mergeObjects: boolean;
}

function paramSpec(name: string, raw: unknown, required: boolean, c: Conversion, depth: number): ParamSpec {
  c.left--;
  if (c.left < 0) return { name, type: "unknown", required };
  const s = normalize(raw, c.root, true, c.mergeObjects);
  const type = paramTypeOf(s);
  const spec: ParamSpec = { name, type, required };
  const description = typeof s["description"] === "string" ? s["description"] : typeof s["title"] === "string" ? s["title"] : "";
  if (description) spec.description = description;
  if (s["default"] !== undefined && isJsonValue(s["default"])) {
    spec.default = s["default"];
    // The server fills a default in itself, so the caller may leave the value out.
    spec.required = false;
  }
  const values = enumOf(s);
  // An enum on a loose type would be checked as-is; on a matching type it becomes a literal union.
  if (values && type !== "array" && type !== "object") spec.enum = values;
  if (type === "array") {
    const items = s["items"];
    if (isPlainObject(items)) spec.items = paramTypeOf(normalize(items, c.root));
  }
  if (type === "object" && depth < c.maxDepth) {
    const props = propertiesOf(s, c, depth + 1);
    if (props.length) spec.properties = props;
  }
  return spec;
}

function propertiesOf(s: Schema, c: Conversion, depth: number): ParamSpec[] {
  const props = s["properties"];
  if (!isPlainObject(props)) return [];
  const required = requiredSet(s);
  const out: ParamSpec[] = [];
  for (const [name, sub] of Object.entries(props)) {
    if (c.left <= 0) break;
    out.push(paramSpec(name, sub, required.has(name), c, depth));
  }
  return out;
}

export interface SchemaConversionOptions {
  /** The document local `$ref`s (`#/components/schemas/X`) point into; default: the schema itself. */
  root?: unknown;
  /** Nesting depth of object properties kept; default 6. */
  maxDepth?: number;
  /** Merge `allOf` / `oneOf` / `anyOf` of object schemas into one object (OpenAPI request bodies). Default false. */
  mergeObjects?: boolean;
}

function conversion(schema: unknown, options: SchemaConversionOptions): Conversion {
  return { root: options.root ?? schema, maxDepth: options.maxDepth ?? MAX_DEPTH, left: MAX_NODES, mergeObjects: options.mergeObjects ?? false };
}

/** One named parameter from its schema (an OpenAPI parameter's `schema`). */
export function paramFromSchema(name: string, schema: unknown, required: boolean, options: SchemaConversionOptions = {}): ParamSpec {
  return paramSpec(name, schema, required, conversion(schema, options), 1);
}

/**
 * The properties of an object schema as parameters, after `$ref`s and (with `mergeObjects`)
 * `allOf`/`oneOf` are resolved; null when the schema is not an object (an array body, a string).
 */
export function paramsFromObjectSchema(schema: unknown, options: SchemaConversionOptions = {}): ParamSpec[] | null {
  const c = conversion(schema, options);
  const s = normalize(schema, c.root, true, c.mergeObjects);
  if (paramTypeOf(s) !== "object") return null;
  return propertiesOf(s, c, 1);
}

/**
 * The parameters of an MCP tool from its `inputSchema` (an object schema). A missing or
 * non-object schema means "takes no arguments".
 */
export function paramsFromInputSchema(inputSchema: unknown): ParamSpec[] {
  if (!isPlainObject(inputSchema)) return [];
  const c = conversion(inputSchema, {});
  return propertiesOf(normalize(inputSchema, inputSchema), c, 1);
}

function keyText(name: string): string {
  return PLAIN_KEY_RE.test(name) ? name : JSON.stringify(name);
}

function arrayOf(item: string): string {
  return /^[\w$.]+(\[\])*$/.test(item) ? `${item}[]` : `Array<${item}>`;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes("unknown")) return "unknown";
  return unique.length ? unique.join(" | ") : "never";
}

function typeText(raw: unknown, c: Conversion, depth: number): string {
  const root = c.root;
  if (raw === true || (isPlainObject(raw) && Object.keys(raw).length === 0)) return "unknown";
  if (raw === false) return "never";
  if (depth > c.maxDepth || --c.left < 0) return "unknown";
  const s = normalize(raw, root, false);
  const values = enumOf(s);
  if (values) return union(values.map((v) => JSON.stringify(v)));
  const branches = Array.isArray(s["anyOf"]) ? s["anyOf"] : Array.isArray(s["oneOf"]) ? s["oneOf"] : null;
  if (branches) return union(branches.map((b) => typeText(b, c, depth + 1)));
  if (Array.isArray(s["allOf"]) && s["allOf"].length > 1) {
    const parts = s["allOf"].map((b) => typeText(b, c, depth + 1)).filter((p) => p !== "unknown");
    return parts.length ? parts.map((p) => (p.includes("|") ? `(${p})` : p)).join(" & ") : "unknown";
  }
  const t = s["type"];
  if (Array.isArray(t)) return union(t.map((one) => typeText({ ...s, type: one }, c, depth + 1)));
  const kind = t ?? (isPlainObject(s["properties"]) ? "object" : s["items"] !== undefined ? "array" : undefined);
  switch (kind) {
    case "string":
      return "string";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "integer":
    case "number":
      return "number";
    case "array": {
      const items = s["items"];
      return isPlainObject(items) || items === true ? arrayOf(typeText(items, c, depth + 1)) : "unknown[]";
    }
    case "object": {
      const props = s["properties"];
      const extra = s["additionalProperties"];
      if (isPlainObject(props) && Object.keys(props).length > 0) {
        const required = requiredSet(s);
        const members = Object.entries(props).map(([k, v]) => `${keyText(k)}${required.has(k) ? "" : "?"}: ${typeText(v, c, depth + 1)}`);
        return `{ ${members.join("; ")} }`;
      }
      if (isPlainObject(extra) && Object.keys(extra).length > 0) return `Record<string, ${typeText(extra, c, depth + 1)}>`;
      return "Record<string, unknown>";
    }
    default:
      return "unknown";
  }
}

/**
 * TypeScript type text for a JSON Schema (e.g. an MCP tool's `outputSchema`); "unknown" when absent.
 * `maxChars` (default 4,000): a longer type is replaced by its loose form.
 */
export function typeTextFromSchema(schema: unknown, options: Omit<SchemaConversionOptions, "mergeObjects"> & { maxChars?: number } = {}): string {
  if (schema === undefined || schema === null) return "unknown";
  const text = typeText(schema, conversion(schema, options), 0);
  if (text.length <= (options.maxChars ?? MAX_TYPE_TEXT)) return text;
  const s = normalize(schema, options.root ?? schema, false);
  return s["type"] === "object" || isPlainObject(s["properties"]) ? "Record<string, unknown>" : s["type"] === "array" ? "unknown[]" : "unknown";
}
