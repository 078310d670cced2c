/**
 * The HTTP tool YAML format (`type: http`) and its normalised, checked form. `parseHttpTool` is the
 * only way a YAML document becomes an `HttpToolSpec`: zod checks the shape, then cross-field checks
 * catch what a shape cannot (a `{param}` in a path that no param declares, a body param on a GET, a
 * default of the wrong type, a `${VAR}` that is not a variable name). Every problem is reported with
 * the file, the field path and what is accepted, all at once — the same style as cli/schema.ts.
 *
 * Environment variables in `headers` are only checked for syntax here; their values are read when a
 * call is made (secrets.ts), so a missing token does not stop the other tools from loading and the
 * tool can still be listed and described.
 */
import { z } from "zod";
import { lazy } from "../../../lazy.js";
import { fail, isMapping, orEmpty, Problems, strict } from "../yaml-schema.js";
import type { JsonValue } from "../../../storage/protocol.js";
import type { ParamSpec, ParamType } from "../../protocol.js";
import { IDENTIFIER_RE, describeValue, toolNameProblem, valueProblem } from "../../validate.js";
import { hasControlChar, templateProblem } from "./secrets.js";

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const PARAM_LOCATIONS = ["path", "query", "body", "header"] as const;
export type ParamLocation = (typeof PARAM_LOCATIONS)[number];

const PARAM_TYPES = ["string", "integer", "number", "boolean", "array", "object"] as const;
export type HttpParamType = (typeof PARAM_TYPES)[number];
const ITEM_TYPES = ["string", "integer", "number", "boolean", "object"] as const;

/** Methods whose remaining params go into a JSON body by default (the others: query string). */
export const BODY_METHODS: ReadonlySet<HttpMethod> = new Set(["POST", "PUT", "PATCH"]);

export interface HttpParam {
  name: string;
  type: HttpParamType;
  /** Element type of an array param, when declared. */
  items?: ParamType;
  in: ParamLocation;
  description: string;
  required: boolean;
  default?: JsonValue;
  enum?: JsonValue[];
}

export interface HttpEndpoint {
  name: string;
  method: HttpMethod;
  /** Starts with `/`; `{name}` placeholders are path params. Appended to the base URL's path. */
  path: string;
  description: string;
  params: HttpParam[];
}

export interface HeaderTemplate {
  name: string;
  /** Header value, possibly with `${VAR}` references resolved from the environment at call time. */
  template: string;
}

export interface HttpToolSpec {
  name: string;
  description: string;
  tags: string[];
  /** `http(s)://host[:port][/prefix]` without a trailing slash, query, fragment or credentials. */
  baseUrl: string;
  headers: HeaderTemplate[];
  timeoutMs: number;
  endpoints: HttpEndpoint[];
  /** Where the definition came from (a file path), for messages. */
  source: string;
}

export const DEFAULT_HTTP_TIMEOUT_SECONDS = 30;

/** RFC 9110 token: what a header name may consist of. */
const HEADER_NAME_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers the HTTP client computes itself; setting them by hand breaks the request. */
const CLIENT_HEADERS: ReadonlySet<string> = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "expect", "te", "trailer"]);
const PLACEHOLDER_RE = /\{([^{}]*)\}/g;
const UNSAFE_PARAM_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);



/** A base URL in the form requests are built from, or the reason it is not acceptable. */
export function normaliseBaseUrl(raw: string): { url: string } | { problem: string } {
  const expected = "expected an http:// or https:// URL like https://api.example.com/v1";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: `${expected}; got ${describeValue(raw)}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { problem: `${expected}; got the scheme ${JSON.stringify(url.protocol.slice(0, -1))}` };
  // Credentials in the URL would end up in error messages; headers are where secrets belong.
  if (url.username || url.password) return { problem: "must not contain credentials (user:password@); send them in headers, e.g. Authorization: Bearer ${API_TOKEN}" };
  if (url.search || url.hash) return { problem: "must not contain a query string or fragment; declare query values as params (in: query) with a default" };
  return { url: `${url.origin}${url.pathname.replace(/\/+$/, "")}` };
}

const ParamSchema = lazy(() => orEmpty(
  strict({
    type: z.enum(PARAM_TYPES, { error: `expected one of ${PARAM_TYPES.join(", ")}` }).default("string"),
    items: z.enum(ITEM_TYPES, { error: `expected one of ${ITEM_TYPES.join(", ")}` }).optional(),
    in: z.enum(PARAM_LOCATIONS, { error: `expected one of ${PARAM_LOCATIONS.join(", ")}` }).optional(),
    description: z.string().default(""),
    required: z.boolean().optional(),
    default: z.json().optional(),
    enum: z.array(z.union([z.string(), z.number()])).min(1, "enum needs at least one value").optional(),
  }),
  () => ({}),
));

const EndpointSchema = lazy(() => strict({
  method: z
    .preprocess((v) => (typeof v === "string" ? v.toUpperCase() : v), z.enum(HTTP_METHODS, { error: `expected one of ${HTTP_METHODS.join(", ")}` }))
    .default("GET"),
  path: z.string({ error: "expected a path starting with /, like /users/{id}" }).regex(/^\//, "expected a path starting with /, like /users/{id}"),
  description: z.string().default(""),
  params: orEmpty(z.record(z.string(), ParamSchema), () => ({})),
}));

/** Top-level fields, checked one by one; each endpoint is checked on its own below. */
const TOP_FIELDS = lazy(() => ({
  name: z.string({ error: "expected the tool name (a string)" }),
  type: z.literal("http", { error: "expected http" }),
  description: z.string().default(""),
  tags: orEmpty(z.array(z.string()), () => []),
  // Checked inside the schema so that a bad URL is reported together with any other shape problem.
  base_url: z.string({ error: "expected an http:// or https:// URL like https://api.example.com/v1" }).transform((raw, ctx) => {
    const base = normaliseBaseUrl(raw);
    if ("url" in base) return base.url;
    ctx.issues.push({ code: "custom", message: base.problem, input: raw });
    return z.NEVER;
  }),
  headers: orEmpty(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: "expected a header value (a string)" }).transform(String)), () => ({})),
  timeout: z.number().positive("expected a positive number of seconds").default(DEFAULT_HTTP_TIMEOUT_SECONDS),
  endpoints: z.record(z.string(), z.unknown(), { error: "expected a mapping of endpoint names to { method, path, description, params }" }),
}));





/** A tool's `headers:` mapping as templates; problems (bad names, client headers, bad `${VAR}`s) go to `problems`. */
export function headerTemplates(raw: Record<string, string>, problems: string[], field = "headers"): HeaderTemplate[] {
  const headers: HeaderTemplate[] = [];
  const seenHeaders = new Set<string>();
  for (const [name, template] of Object.entries(raw)) {
    const at = `${field}.${name}`;
    const lower = name.toLowerCase();
    if (!HEADER_NAME_RE.test(name)) problems.push(`${at}: not a valid header name (letters, digits and !#$%&'*+-.^_\`|~)`);
    else if (CLIENT_HEADERS.has(lower)) problems.push(`${at}: the HTTP client sets ${name} itself; remove it`);
    if (seenHeaders.has(lower)) problems.push(`${at}: header names are case-insensitive and ${name} is given twice`);
    seenHeaders.add(lower);
    const problem = templateProblem(template);
    if (problem) problems.push(`${at}: ${problem}`);
    headers.push({ name, template });
  }
  return headers;
}

/** The parameter spec a param has for argument checks and discovery. */
export function httpParamSpec(p: HttpParam): ParamSpec {
  const spec: ParamSpec = { name: p.name, type: p.type, required: p.required && p.default === undefined };
  if (p.items) spec.items = p.items;
  if (p.description) spec.description = p.description;
  if (p.default !== undefined) spec.default = p.default;
  if (p.enum) spec.enum = p.enum;
  return spec;
}

/** Names of the `{placeholders}` of a path, in order, with the problems of its syntax. */
export function pathPlaceholders(path: string): { names: string[]; problems: string[] } {
  const names: string[] = [];
  const problems: string[] = [];
  for (const m of path.matchAll(PLACEHOLDER_RE)) {
    const name = m[1] ?? "";
    if (!IDENTIFIER_RE.test(name)) problems.push(`placeholder {${name}} must name a param with an identifier name, like {user_id}`);
    else if (!names.includes(name)) names.push(name);
  }
  const rest = path.replace(PLACEHOLDER_RE, "");
  if (/[{}]/.test(rest)) problems.push("unbalanced { or }; placeholders look like /users/{id}");
  if (/[?#]/.test(rest)) problems.push("must not contain ? or #; declare query values as params (in: query)");
  return { names, problems };
}

interface RawParam {
  type: HttpParamType;
  items?: (typeof ITEM_TYPES)[number] | undefined;
  in?: ParamLocation | undefined;
  description: string;
  required?: boolean | undefined;
  default?: JsonValue | undefined;
  enum?: Array<string | number> | undefined;
}

function checkParam(at: string, name: string, raw: RawParam, location: ParamLocation, method: HttpMethod, inPath: boolean, problems: string[]): HttpParam {
  if (!name || hasControlChar(name) || UNSAFE_PARAM_NAMES.has(name)) problems.push(`${at}: ${JSON.stringify(name)} cannot be a param name`);
  if (location === "path" && !inPath) problems.push(`${at}.in: 'path' but the path has no {${name}} placeholder`);
  if (inPath && location !== "path") problems.push(`${at}.in: {${name}} appears in the path, so the param must be in: path (or absent); got ${location}`);
  if (location === "body" && !BODY_METHODS.has(method) && method !== "DELETE") {
    problems.push(`${at}.in: a ${method} request has no body; use in: query or in: header`);
  }
  if (location === "header" && !HEADER_NAME_RE.test(name)) problems.push(`${at}: ${JSON.stringify(name)} is not a valid header name`);
  if ((location === "path" || location === "header") && (raw.type === "array" || raw.type === "object")) {
    problems.push(`${at}.type: a ${location} param must be a string, integer, number or boolean; got ${raw.type}`);
  }
  if (raw.items && raw.type !== "array") problems.push(`${at}.items: only array params have items`);
  if (raw.enum && !["string", "integer", "number"].includes(raw.type)) problems.push(`${at}.enum: enum is only for string, integer and number params`);
  // A path segment cannot be left out, so a path param is required unless it has a default.
  if (location === "path" && raw.required === false && raw.default === undefined) {
    problems.push(`${at}.required: a path param cannot be optional; remove required: false or give it a default`);
  }
  const param: HttpParam = {
    name,
    type: raw.type,
    in: location,
    description: raw.description,
    required: raw.required ?? location === "path",
  };
  if (raw.items) param.items = raw.items;
  if (raw.default !== undefined) param.default = raw.default;
  if (raw.enum) param.enum = raw.enum;
  if (param.default !== undefined) {
    const problem = valueProblem(httpParamSpec(param), param.default, "default");
    if (problem) problems.push(`${at}: ${problem}`);
  }
  return param;
}

/** Parse and check one HTTP tool document. Throws ValidationError naming `source` and each bad field. */
export function parseHttpTool(doc: unknown, source: string): HttpToolSpec {
  if (!isMapping(doc)) fail(source, ["(top level): expected a mapping with name, type: http, base_url, endpoints"]);
  // Every problem at once: each field and each endpoint is checked even when another one is broken.
  const collected = new Problems(doc);
  const { data: d } = collected.fields(TOP_FIELDS, doc, []);
  const problems = collected.list;

  if (d.name !== undefined) {
    const nameProblem = toolNameProblem(d.name);
    if (nameProblem) problems.push(`name: ${nameProblem}`);
  }

  const headers = headerTemplates(d.headers ?? {}, problems);

  const endpoints: HttpEndpoint[] = [];
  if (d.endpoints && Object.keys(d.endpoints).length === 0) problems.push("endpoints: expected at least one endpoint, like get_user: { method: GET, path: /users/{id} }");
  for (const [ename, raw] of Object.entries(d.endpoints ?? {})) {
    const at = `endpoints.${ename}`;
    if (!IDENTIFIER_RE.test(ename) || UNSAFE_PARAM_NAMES.has(ename) || ename === "then") {
      problems.push(`${at}: endpoint names must be identifiers like get_user (letters, digits, _), and not then/constructor/prototype`);
    }
    const e = collected.parse(EndpointSchema, raw, ["endpoints", ename]);
    if (!e) continue;
    const placeholders = pathPlaceholders(e.path);
    for (const p of placeholders.problems) problems.push(`${at}.path: ${p}`);
    for (const name of placeholders.names) {
      if (!(name in e.params)) {
        problems.push(`${at}.path: {${name}} is not a declared param; add params.${name} (declared: ${Object.keys(e.params).join(", ") || "none"})`);
      }
    }
    const params: HttpParam[] = [];
    const seenParamHeaders = new Set<string>();
    for (const [pname, raw] of Object.entries(e.params)) {
      const inPath = placeholders.names.includes(pname);
      const location: ParamLocation = raw.in ?? (inPath ? "path" : BODY_METHODS.has(e.method) ? "body" : "query");
      const param = checkParam(`${at}.params.${pname}`, pname, raw, location, e.method, inPath, problems);
      if (location === "header") {
        if (seenParamHeaders.has(pname.toLowerCase())) problems.push(`${at}.params.${pname}: header names are case-insensitive and ${pname} is given twice`);
        seenParamHeaders.add(pname.toLowerCase());
        if (CLIENT_HEADERS.has(pname.toLowerCase())) problems.push(`${at}.params.${pname}: the HTTP client sets ${pname} itself`);
      }
      params.push(param);
    }
    endpoints.push({ name: ename, method: e.method, path: e.path, description: e.description, params });
  }

  collected.throwIfAny(source);
  // Every field parsed (else throwIfAny threw): the required ones are present.
  return {
    name: d.name!,
    description: d.description ?? "",
    tags: d.tags ?? [],
    baseUrl: d.base_url!,
    headers,
    timeoutMs: Math.round((d.timeout ?? DEFAULT_HTTP_TIMEOUT_SECONDS) * 1000),
    endpoints,
    source,
  };
}
