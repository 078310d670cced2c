/**
 * The OpenAPI tool source from code, the peer of `type: openapi` YAML:
 *
 *   new SubprocessExecutor({ tools: { github: openapiTools({ spec: "./github.json", baseUrl, bearer: "${GITHUB_TOKEN}" }) } })
 *
 * The options are the YAML fields in camelCase and go through the same parser, so both accept and
 * refuse the same things with the same messages; misuse fails here, at the call (TypeError), not at
 * the session's start. Credentials are `${VAR}` templates read at each call, as in YAML; a literal
 * value works too, and is redacted like a variable's when the header is Authorization, Cookie or a
 * `bearer`/`query` value.
 */
import path from "node:path";
import { ValidationError } from "../../../errors.js";
import { defineToolSource, type CodeToolSource } from "../../code/tool-set.js";
import { OpenApiToolAdapter, type OpenApiToolAdapterOptions } from "./adapter.js";
import { parseOpenApiTool, type OpenApiToolSpec } from "./schema.js";

export interface OpenApiToolsOptions extends Pick<OpenApiToolAdapterOptions, "env" | "maxResponseBytes" | "maxOperations"> {
  /** The document: a file path (relative to the working directory), an http(s) URL, or the parsed document. */
  spec: string | URL | Record<string, unknown>;
  /** Where requests go; default the spec's first `servers` URL. */
  baseUrl?: string;
  /** Sent with every request; values may hold `${VAR}` references. */
  headers?: Record<string, string>;
  /** `Authorization: Bearer <bearer>`; usually `"${API_TOKEN}"`. */
  bearer?: string;
  /** Query parameters added to every request (API keys); values may hold `${VAR}` references. */
  query?: Record<string, string>;
  /** Keep only operations with one of these tags, under one of these path globs (`*`, `**`). */
  operations?: { tags?: string[]; paths?: string[] };
  /** Default: the spec's title and description. */
  description?: string;
  tags?: string[];
  /** Per call; default 30 000. */
  timeoutMs?: number;
  /** The tool's name when the source is given in an array (`tools: [openapiTools({ name: "gh", ... })]`). */
  name?: string;
}

/** Placeholder name while checking the options, before the `tools` option names the tool. */
const CHECK_NAME = "openapi";

function parse(options: OpenApiToolsOptions, name: string): OpenApiToolSpec {
  const isDocument = typeof options.spec === "object" && !(options.spec instanceof URL);
  const doc: Record<string, unknown> = {
    name,
    type: "openapi",
    spec: isDocument ? "(document)" : String(options.spec),
    ...(options.baseUrl !== undefined ? { base_url: options.baseUrl } : {}),
    ...(options.headers !== undefined ? { headers: options.headers } : {}),
    ...(options.bearer !== undefined ? { bearer: options.bearer } : {}),
    ...(options.query !== undefined ? { query: options.query } : {}),
    ...(options.operations !== undefined ? { operations: options.operations } : {}),
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.tags !== undefined ? { tags: options.tags } : {}),
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs / 1000 } : {}),
  };
  const spec = parseOpenApiTool(doc, { file: `openapiTools(${name === CHECK_NAME ? "" : `'${name}'`})`, dir: process.cwd() });
  return isDocument ? { ...spec, spec: { kind: "document", document: options.spec } } : { ...spec, spec: spec.spec.kind === "file" ? { kind: "file", path: path.resolve(spec.spec.path) } : spec.spec };
}

/** An OpenAPI 3.0/3.1 document as a tool source for the `tools` option of an executor or Session. */
export function openapiTools(options: OpenApiToolsOptions): CodeToolSource {
  if (typeof options !== "object" || options === null) throw new TypeError("openapiTools: expected options { spec, baseUrl?, bearer?, headers?, query?, operations? }");
  const adapterOptions: OpenApiToolAdapterOptions = {
    ...(options.env ? { env: options.env } : {}),
    ...(options.maxResponseBytes !== undefined ? { maxResponseBytes: options.maxResponseBytes } : {}),
    ...(options.maxOperations !== undefined ? { maxOperations: options.maxOperations } : {}),
  };
  try {
    parse(options, options.name ?? CHECK_NAME);
  } catch (e) {
    if (e instanceof ValidationError) throw new TypeError(e.message.replace(/^Invalid tool definition in /, "Invalid options of "));
    throw e;
  }
  return defineToolSource({
    ...(options.name !== undefined ? { name: options.name } : {}),
    // The spec is read on the tool's first use (info()), not here: a session that never touches it never parses it.
    createAdapter: (name) => new OpenApiToolAdapter(parse(options, name), adapterOptions),
  });
}
