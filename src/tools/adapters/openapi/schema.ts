/**
 * The OpenAPI tool YAML format (`type: openapi`) and its checked form. The document names a spec
 * (a file next to the YAML, or an http(s) URL), where to send requests, the credentials to send
 * (`${VAR}` templates in headers, query parameters or a bearer token, resolved at call time as in
 * `type: http`), and which operations to keep. Every problem is reported at once, naming its
 * field, like the other adapters' schemas.
 *
 *   name: github
 *   type: openapi
 *   spec: ./api.github.com.json.gz        # or https://example.com/openapi.json
 *   base_url: https://api.github.com      # default: the spec's first `servers` URL
 *   bearer: ${GITHUB_TOKEN}               # Authorization: Bearer …
 *   headers: { X-GitHub-Api-Version: "2022-11-28" }
 *   query: { api_key: ${API_KEY} }        # added to every request's query string
 *   operations: { tags: [issues], paths: ["/repos/**"] }
 */
import path from "node:path";
import { z } from "zod";
import { lazy } from "../../../lazy.js";
import { toolNameProblem } from "../../validate.js";
import { headerTemplates, normaliseBaseUrl, type HeaderTemplate } from "../http/schema.js";
import { hasControlChar, templateProblem } from "../http/secrets.js";
import { fail, isMapping, orEmpty, Problems } from "../yaml-schema.js";
import type { ToolSource } from "../index.js";

export const DEFAULT_OPENAPI_TIMEOUT_SECONDS = 30;

/** Where the document comes from: a file, a URL, or (from code) the parsed document itself. */
export type SpecLocation = { kind: "file"; path: string } | { kind: "url"; url: string } | { kind: "document"; document: unknown };

export interface OperationFilter {
  /** Keep operations with at least one of these tags (case-insensitive); empty: any. */
  tags: string[];
  /** Keep operations whose path matches one of these globs (`*` within a segment, `**` across); empty: any. */
  paths: string[];
}

export interface OpenApiToolSpec {
  name: string;
  /** From the YAML; empty means "use the spec's info.title and description". */
  description: string;
  tags: string[];
  spec: SpecLocation;
  /** Normalised like an HTTP tool's base_url; undefined: the spec's first server. */
  baseUrl?: string;
  headers: HeaderTemplate[];
  /** Query parameters added to every request (API keys), `${VAR}` templates like headers. */
  query: HeaderTemplate[];
  filter: OperationFilter;
  timeoutMs: number;
  /** The YAML file, for messages. */
  source: string;
}

const stringMap = () =>
  orEmpty(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: "expected a value (a string)" }).transform(String)), () => ({}));

const TOP_FIELDS = lazy(() => ({
  name: z.string({ error: "expected the tool name (a string)" }),
  type: z.literal("openapi", { error: "expected openapi" }),
  description: z.string().default(""),
  tags: orEmpty(z.array(z.string()), () => []),
  spec: z.string({ error: "expected a path to an OpenAPI document (JSON or YAML, may be .gz) relative to this file, or an http(s):// URL" }).min(1, "expected a path or URL"),
  base_url: z.string({ error: "expected an http:// or https:// URL like https://api.example.com/v1" }).optional(),
  headers: stringMap(),
  query: stringMap(),
  bearer: z.string({ error: "expected a token template like ${API_TOKEN}" }).optional(),
  operations: orEmpty(
    z.strictObject(
      {
        tags: orEmpty(z.array(z.string()), () => []),
        paths: orEmpty(z.array(z.string().min(1, "a path glob cannot be empty").regex(/^\//, "a path glob starts with /, like /repos/**")), () => []),
      },
      { error: "expected { tags: [...], paths: [...] }" },
    ),
    () => ({}),
  ),
  timeout: z.number().positive("expected a positive number of seconds").default(DEFAULT_OPENAPI_TIMEOUT_SECONDS),
}));

/** Names of credentials in the YAML are shown in messages; their values never are. */
const isSecret = (at: readonly PropertyKey[]) => at[0] === "headers" || at[0] === "query" || at[0] === "bearer";

/** Parse and check one OpenAPI tool document. Throws ValidationError naming the file and each bad field. */
export function parseOpenApiTool(doc: unknown, source: ToolSource): OpenApiToolSpec {
  if (!isMapping(doc)) fail(source.file, ["(top level): expected a mapping with name, type: openapi, spec"]);
  const collected = new Problems(doc, isSecret);
  const { data: d } = collected.fields(TOP_FIELDS, doc, []);
  const problems = collected.list;

  if (d.name !== undefined) {
    const nameProblem = toolNameProblem(d.name);
    if (nameProblem) problems.push(`name: ${nameProblem}`);
  }

  let baseUrl: string | undefined;
  if (d.base_url !== undefined) {
    const base = normaliseBaseUrl(d.base_url);
    if ("url" in base) baseUrl = base.url;
    else problems.push(`base_url: ${base.problem}`);
  }

  const headers = headerTemplates(d.headers ?? {}, problems);
  if (d.bearer !== undefined) {
    if (headers.some((h) => h.name.toLowerCase() === "authorization")) problems.push("bearer: headers already set Authorization; keep one of them");
    const problem = templateProblem(d.bearer);
    if (problem) problems.push(`bearer: ${problem}`);
    headers.push({ name: "Authorization", template: `Bearer ${d.bearer}` });
  }
  const query: HeaderTemplate[] = [];
  for (const [name, template] of Object.entries(d.query ?? {})) {
    if (!name || hasControlChar(name)) problems.push(`query.${name}: not a valid query parameter name`);
    const problem = templateProblem(template);
    if (problem) problems.push(`query.${name}: ${problem.replace("header values", "query values")}`);
    query.push({ name, template });
  }

  let spec: SpecLocation | undefined;
  if (d.spec !== undefined) {
    if (/^https?:\/\//i.test(d.spec)) {
      try {
        const url = new URL(d.spec);
        if (url.username || url.password) problems.push("spec: the URL must not contain credentials (user:password@)");
        spec = { kind: "url", url: url.href };
      } catch {
        problems.push(`spec: not a valid URL: ${d.spec.slice(0, 200)}`);
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(d.spec)) {
      problems.push(`spec: expected a file path or an http(s):// URL; got the scheme ${JSON.stringify(d.spec.split(":")[0])}`);
    } else {
      spec = { kind: "file", path: path.resolve(source.dir, d.spec) };
    }
  }

  collected.throwIfAny(source.file);
  return {
    name: d.name!,
    description: d.description ?? "",
    tags: d.tags ?? [],
    spec: spec!,
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    headers,
    query,
    filter: { tags: d.operations?.tags ?? [], paths: d.operations?.paths ?? [] },
    timeoutMs: Math.round((d.timeout ?? DEFAULT_OPENAPI_TIMEOUT_SECONDS) * 1000),
    source: source.file,
  };
}
