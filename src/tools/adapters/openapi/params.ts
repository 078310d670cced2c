/**
 * One OpenAPI operation's arguments and result type, resolved from the document on first use:
 * path, query and header parameters, and the request body — flattened into top-level arguments
 * when it is an object whose property names clash with no parameter (`tools.gh.issues_create({
 * owner, repo, title })`), else one `body` argument. `$ref`s, `allOf` and `oneOf` are resolved by
 * the shared JSON Schema converter (mcp/json-schema.ts), which bounds depth, `$ref` hops and the
 * number of nodes, so a cyclic or exploding spec costs a bounded amount of work per operation.
 */
import type { ParamSpec } from "../../protocol.js";
import { isPlainObject } from "../../validate.js";
import type { RequestEndpoint } from "../http/request.js";
import { bodyKind, mediaType } from "../http/response.js";
import { paramFromSchema, paramsFromObjectSchema, pointer, typeTextFromSchema } from "../mcp/json-schema.js";
import type { OpenApiOperation } from "./operations.js";

/** Object properties of an argument are shown this deep (`tools.describe` of one operation stays short). */
const PARAM_DEPTH = 3;
/** The result type: two levels of properties, and its loose form past this many characters. */
const RETURN_DEPTH = 2;
const MAX_RETURN_TYPE_CHARS = 600;
/** A parameter's description is cut here (the vendor's docs have the rest). */
const MAX_PARAM_DESCRIPTION = 300;
/** `$ref` hops followed for a parameter, request body or response object. */
const MAX_REF_HOPS = 16;
/** Headers OpenAPI says are described elsewhere (RFC: ignored as parameters). */
const IGNORED_HEADERS: ReadonlySet<string> = new Set(["accept", "content-type", "authorization"]);

export interface ResolvedOperation {
  params: ParamSpec[];
  returns: string;
  endpoint: RequestEndpoint;
  /** Why the operation cannot be called (a multipart body), or undefined. */
  unsupported?: string;
}

/** Follow `$ref`s of a parameter / requestBody / response object. */
function deref(raw: unknown, root: unknown): Record<string, unknown> | undefined {
  let cur = raw;
  for (let i = 0; i < MAX_REF_HOPS && isPlainObject(cur) && typeof cur["$ref"] === "string"; i++) cur = pointer(root, cur["$ref"]);
  return isPlainObject(cur) && typeof cur["$ref"] !== "string" ? cur : undefined;
}

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Descriptions cut to MAX_PARAM_DESCRIPTION, at every level. */
function trimmed(p: ParamSpec): ParamSpec {
  const out: ParamSpec = { ...p };
  if (out.description !== undefined) {
    out.description = cut(out.description, MAX_PARAM_DESCRIPTION);
    if (!out.description) delete out.description;
  }
  if (out.properties) out.properties = out.properties.map(trimmed);
  return out;
}

/** The media type and schema a `content` map is read with: JSON first, then form, then anything else. */
function pickContent(content: unknown): { type: string; schema: unknown } | undefined {
  if (!isPlainObject(content)) return undefined;
  const entries = Object.entries(content).map(([type, media]) => ({ type: mediaType(type), schema: isPlainObject(media) ? media["schema"] : undefined }));
  return (
    entries.find((e) => bodyKind(e.type) === "json") ??
    entries.find((e) => e.type === "application/x-www-form-urlencoded") ??
    entries.find((e) => e.type === "*/*") ??
    entries[0]
  );
}

function returnsOf(responses: unknown, root: unknown): string {
  if (!isPlainObject(responses)) return "unknown";
  const key = Object.keys(responses).find((k) => /^2\d\d$/.test(k)) ?? Object.keys(responses).find((k) => /^2XX$/i.test(k));
  if (key === undefined) return "unknown";
  const response = deref(responses[key], root);
  if (key === "204" || (response && !isPlainObject(response["content"]))) return "null";
  const picked = pickContent(response?.["content"]);
  if (!picked) return "unknown";
  const kind = picked.type === "*/*" ? "json" : bodyKind(picked.type);
  if (kind === "json") return typeTextFromSchema(picked.schema, { root, maxDepth: RETURN_DEPTH, maxChars: MAX_RETURN_TYPE_CHARS });
  if (kind === "text") return "string";
  if (kind === "binary") return "Uint8Array";
  return "unknown";
}

/** Resolve one operation against the document it came from. Never throws; what cannot be read degrades to `unknown`. */
export function resolveOperation(op: OpenApiOperation, root: unknown): ResolvedOperation {
  const convert = { root, maxDepth: PARAM_DEPTH, mergeObjects: true };
  // Operation-level parameters override path-level ones with the same name and location.
  const byKey = new Map<string, Record<string, unknown>>();
  for (const raw of op.parameters) {
    const p = deref(raw, root);
    if (!p || typeof p["name"] !== "string" || typeof p["in"] !== "string") continue;
    byKey.set(`${p["in"]}:${p["name"]}`, p);
  }
  const params: ParamSpec[] = [];
  const wire: Array<RequestEndpoint["params"][number]> = [];
  const names = new Set<string>();
  const add = (spec: ParamSpec, location: "path" | "query" | "header" | "body") => {
    if (names.has(spec.name)) return;
    names.add(spec.name);
    params.push(trimmed(spec));
    // No `default` on the wire: an OpenAPI default is what the server assumes when the value is left out.
    wire.push({ name: spec.name, in: location });
  };
  for (const p of byKey.values()) {
    const name = p["name"] as string;
    const location = p["in"];
    if (location !== "path" && location !== "query" && location !== "header") continue; // cookie parameters are not sent
    if (location === "header" && IGNORED_HEADERS.has(name.toLowerCase())) continue;
    const schema = p["schema"] ?? pickContent(p["content"])?.schema;
    const spec = paramFromSchema(name, schema ?? {}, location === "path" || p["required"] === true, convert);
    if (typeof p["description"] === "string" && p["description"]) spec.description = p["description"];
    if (location === "path") spec.required = true;
    add(spec, location);
  }
  // A placeholder the spec forgot to declare is still a required path argument.
  for (const m of op.path.matchAll(/\{([^{}]+)\}/g)) {
    if (!names.has(m[1]!)) add({ name: m[1]!, type: "string", required: true }, "path");
  }

  const endpoint: RequestEndpoint = { name: op.name, method: op.method, path: op.path, params: wire };
  let unsupported: string | undefined;
  const body = deref(op.requestBody, root);
  const picked = body ? pickContent(body["content"]) : undefined;
  if (body && picked) {
    const bodyRequired = body["required"] === true;
    const contentType = picked.type === "*/*" ? "application/json" : picked.type;
    if (contentType.startsWith("multipart/")) unsupported = `${contentType} request bodies are not supported`;
    const structured = bodyKind(contentType) === "json" || contentType === "application/x-www-form-urlencoded";
    const props = structured ? paramsFromObjectSchema(picked.schema ?? {}, convert) : null;
    if (props && props.length > 0 && props.every((p) => !names.has(p.name))) {
      for (const p of props) add({ ...p, required: p.required && bodyRequired }, "body");
      endpoint.body = { contentType };
    } else {
      const name = names.has("body") ? "requestBody" : "body";
      const spec = structured || contentType === "*/*" ? paramFromSchema(name, picked.schema ?? {}, bodyRequired, convert) : { name, type: "string" as const, required: bodyRequired };
      if (typeof body["description"] === "string" && body["description"]) spec.description = body["description"];
      else spec.description ??= `The request body (${contentType})`;
      add(spec, "body");
      endpoint.body = { contentType, wholeBody: name };
    }
  }
  const resolved: ResolvedOperation = { params, returns: returnsOf(op.responses, root), endpoint };
  if (unsupported) resolved.unsupported = unsupported;
  return resolved;
}
