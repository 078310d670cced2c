/**
 * Turn an endpoint and a call's (already validated) arguments into a request: path params
 * substituted and percent-encoded, query params appended (arrays repeat the key), header params
 * set, and the body params sent as one JSON object (or form fields, or one param's value as the
 * whole body: OpenAPI request bodies). Pure: no environment, no network.
 */
import { ToolError } from "../../../errors.js";
import type { HttpEndpoint, HttpMethod, HttpParam } from "./schema.js";
import { bodyKind } from "./response.js";

/** What a request is built from: an HTTP tool's endpoint, or an OpenAPI operation. */
export type RequestEndpoint = Pick<HttpEndpoint, "name" | "method" | "path"> & {
  params: ReadonlyArray<Pick<HttpParam, "name" | "in" | "default">>;
  /**
   * How body params are sent. Default: one JSON object of the body params. `wholeBody` names the
   * one body param whose value is the entire body (an array, a string); `contentType` other than
   * JSON sends `application/x-www-form-urlencoded` fields, or the whole body's text as is.
   */
  body?: { contentType: string; wholeBody?: string };
};

export interface PreparedRequest {
  method: HttpMethod;
  url: URL;
  /** Headers from params and the body's content type; the tool's YAML headers are added by the caller. */
  headers: Record<string, string>;
  body?: string;
}

/** Text of a scalar in a path or query string; objects (inside query arrays, object params) as JSON. */
function scalarText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value) ?? "";
}

/** The value a param takes in this call: the caller's, else its declared default. */
function valueOf(p: Pick<HttpParam, "name" | "default">, args: Record<string, unknown>): unknown {
  const v = args[p.name];
  return v === undefined || v === null ? p.default : v;
}

/** Build the request for `endpoint` under `baseUrl` (normalised: no trailing slash). Throws ToolError INVALID_INPUT / MISSING_PARAM. */
export function buildRequest(tool: string, baseUrl: string, endpoint: RequestEndpoint, args: Record<string, unknown>): PreparedRequest {
  const label = `tools.${tool}.${endpoint.name}`;
  const invalid = (message: string, code: "INVALID_INPUT" | "MISSING_PARAM" = "INVALID_INPUT"): never => {
    throw new ToolError({ tool, callable: endpoint.name, code, message: `${label}: ${message}` });
  };

  const byName = new Map(endpoint.params.map((p) => [p.name, p]));
  const path = endpoint.path.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    const p = byName.get(name);
    const v = p ? valueOf(p, args) : undefined;
    if (v === undefined) return invalid(`missing path param '${name}'`, "MISSING_PARAM");
    const text = scalarText(v);
    // "." and ".." would be resolved away by URL parsing (even percent-encoded), changing the route.
    if (text === "" || text === "." || text === "..") return invalid(`path param '${name}' cannot be ${JSON.stringify(text)}`);
    return encodeURIComponent(text);
  });
  const url = new URL(`${baseUrl}${path}`);

  const headers: Record<string, string> = {};
  const body: Record<string, unknown> = {};
  let hasBody = false;
  for (const p of endpoint.params) {
    if (p.in === "body") hasBody = true;
    const v = valueOf(p, args);
    if (v === undefined || p.in === "path") continue;
    if (p.in === "query") {
      for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(p.name, scalarText(item));
    } else if (p.in === "header") {
      const text = scalarText(v);
      // The value is the caller's own input, but a header cannot carry line breaks (request splitting).
      if (/[\r\n\0]/.test(text)) invalid(`header param '${p.name}' cannot contain line breaks or NUL characters`);
      headers[p.name] = text;
    } else {
      body[p.name] = v;
    }
  }

  const request: PreparedRequest = { method: endpoint.method, url, headers };
  if (!hasBody) return request;
  const contentType = endpoint.body?.contentType ?? "application/json";
  const whole = endpoint.body?.wholeBody;
  const value: unknown = whole !== undefined ? body[whole] : body;
  // An optional whole body left out: no body at all.
  if (value === undefined) return request;
  headers["content-type"] = contentType;
  if (bodyKind(contentType) === "json") request.body = JSON.stringify(value);
  else if (contentType === "application/x-www-form-urlencoded" && whole === undefined) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) for (const item of Array.isArray(v) ? v : [v]) form.append(k, scalarText(item));
    request.body = form.toString();
  } else request.body = scalarText(value);
  return request;
}
