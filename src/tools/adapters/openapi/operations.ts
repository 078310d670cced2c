/**
 * The operations of an OpenAPI 3.0/3.1 document, as callables: one per method of each path, named
 * from `operationId` (or method + path) as an identifier, kept or dropped by the tool's tag and
 * path filters. Only what search and listing need is read here (names, summaries, tags); the
 * parameters of an operation are resolved when it is first described or called (params.ts), so a
 * spec of thousands of operations registers in the time it takes to parse it.
 */
import { ValidationError } from "../../../errors.js";
import { isPlainObject } from "../../validate.js";
import type { HttpMethod } from "../http/schema.js";
import type { OperationFilter } from "./schema.js";

/** Most operations one tool keeps; a spec with more must be narrowed with `operations:` filters. */
export const MAX_OPERATIONS = 10_000;
/** Most paths read from a spec (each may hold several operations). */
const MAX_PATHS = 20_000;
/** Longest summary or description kept for an operation (the full text is in the vendor's docs). */
const MAX_TEXT = 2_000;

/** The methods an operation may have; OPTIONS and TRACE are not offered (no API uses them for data). */
const METHODS: ReadonlyArray<[string, HttpMethod]> = [
  ["get", "GET"],
  ["post", "POST"],
  ["put", "PUT"],
  ["patch", "PATCH"],
  ["delete", "DELETE"],
  ["head", "HEAD"],
];

export interface OpenApiOperation {
  /** The callable name: an identifier, unique in the tool. */
  name: string;
  method: HttpMethod;
  path: string;
  operationId: string | undefined;
  summary: string;
  description: string;
  tags: string[];
  deprecated: boolean;
  /** Raw parameter objects (maybe `$ref`s): the path item's, then the operation's. */
  parameters: unknown[];
  requestBody: unknown;
  responses: unknown;
}

export interface OperationSet {
  operations: OpenApiOperation[];
  /** Operations the filters dropped. */
  filteredOut: number;
}

function text(v: unknown): string {
  return typeof v === "string" ? v.slice(0, MAX_TEXT) : "";
}

/** Names that break the guest's proxies (see validate.ts) get a trailing underscore. */
export const UNSAFE_CALLABLE_NAMES: ReadonlySet<string> = new Set(["then", "constructor", "prototype", "__proto__"]);

/**
 * An identifier from an operationId (`issues/create` → `issues_create`, `zones-get` → `zones_get`,
 * `getUser` stays) or, without one, from the method and path (`GET /users/{id}` → `get_users_id`).
 */
export function callableName(operationId: string | undefined, method: HttpMethod, path: string): string {
  const source = operationId && operationId.trim() ? operationId : `${method.toLowerCase()} ${path.replace(/[{}]/g, "")}`;
  let name = source.slice(0, 200).replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  if (!name) name = `${method.toLowerCase()}_root`;
  if (/^[0-9]/.test(name)) name = `op_${name}`;
  if (UNSAFE_CALLABLE_NAMES.has(name)) name = `${name}_`;
  return name;
}

/** `*` matches within one path segment, `**` across segments; `{param}` in a glob matches itself literally. */
export function pathGlob(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        re += ".*";
        i++;
      } else re += "[^/]*";
    } else re += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

function keeps(filter: OperationFilter): (tags: readonly string[], path: string) => boolean {
  const tags = new Set(filter.tags.map((t) => t.toLowerCase()));
  const globs = filter.paths.map(pathGlob);
  return (opTags, path) => (tags.size === 0 || opTags.some((t) => tags.has(t.toLowerCase()))) && (globs.length === 0 || globs.some((g) => g.test(path)));
}

/** The operations of `doc` that pass `filter`. Throws ValidationError when the document is not OpenAPI 3 or has too many. */
export function readOperations(doc: unknown, filter: OperationFilter, label: string, maxOperations = MAX_OPERATIONS): OperationSet {
  if (!isPlainObject(doc)) throw new ValidationError(`${label}: the spec is not an OpenAPI document (expected an object with openapi, info and paths)`);
  const version = doc["openapi"];
  if (typeof version !== "string" || !/^3\.[01]\./.test(version)) {
    const swagger = typeof doc["swagger"] === "string" ? ` (this is Swagger ${String(doc["swagger"])}; convert it to OpenAPI 3 first)` : "";
    throw new ValidationError(`${label}: expected an OpenAPI 3.0 or 3.1 document (openapi: 3.0.x or 3.1.x); got ${typeof version === "string" ? `openapi: ${version.slice(0, 20)}` : "no openapi field"}${swagger}`);
  }
  const paths = doc["paths"];
  if (paths !== undefined && !isPlainObject(paths)) throw new ValidationError(`${label}: paths must be an object of path → operations`);
  const keep = keeps(filter);
  const operations: OpenApiOperation[] = [];
  const used = new Set<string>();
  let filteredOut = 0;
  let seenPaths = 0;
  for (const [path, item] of Object.entries(paths ?? {})) {
    if (++seenPaths > MAX_PATHS) throw new ValidationError(`${label}: the spec has more than ${MAX_PATHS} paths; narrow it with operations: { tags, paths }`);
    if (!isPlainObject(item) || !path.startsWith("/")) continue;
    const shared = Array.isArray(item["parameters"]) ? item["parameters"] : [];
    for (const [key, method] of METHODS) {
      const op = item[key];
      if (!isPlainObject(op)) continue;
      const tags = Array.isArray(op["tags"]) ? op["tags"].filter((t): t is string => typeof t === "string").slice(0, 20) : [];
      if (!keep(tags, path)) {
        filteredOut++;
        continue;
      }
      if (operations.length >= maxOperations) {
        throw new ValidationError(`${label}: the spec has more than ${maxOperations} operations; narrow it with operations: { tags: [...], paths: [...] }`);
      }
      const operationId = typeof op["operationId"] === "string" ? op["operationId"] : undefined;
      const base = callableName(operationId, method, path);
      let name = base;
      for (let i = 2; used.has(name); i++) name = `${base}_${i}`;
      used.add(name);
      operations.push({
        name,
        method,
        path,
        operationId,
        summary: text(op["summary"]),
        description: text(op["description"]),
        tags,
        deprecated: op["deprecated"] === true,
        parameters: [...shared, ...(Array.isArray(op["parameters"]) ? op["parameters"] : [])],
        requestBody: op["requestBody"],
        responses: op["responses"],
      });
    }
  }
  return { operations, filteredOut };
}
