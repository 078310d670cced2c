/**
 * An OpenAPI 3.0/3.1 document as a tool (`type: openapi`): each operation is a callable
 * `tools.<name>.<operation>(args)`. The spec is read on the first `info()` (as an MCP server is
 * connected then, not at load), so a spec that cannot be read shows the tool as unavailable
 * instead of failing every other tool, and a run that calls no tool never parses it. A call is an
 * HTTP tool's call: the request is built and sent by the http adapter's request.ts and send.ts,
 * with its secret handling (`${VAR}`s read at call time, redacted from every message).
 */
import { ToolError, ValidationError, didYouMean } from "../../../errors.js";
import type { CallContext, CallableInfo, ParamSpec, ToolAdapter, ToolInfo } from "../../protocol.js";
import { DEFAULT_ACCEPT, mergeHeaders } from "../http/adapter.js";
import { buildRequest } from "../http/request.js";
import { normaliseBaseUrl } from "../http/schema.js";
import { resolveHeaders, unresolvedMessage } from "../http/secrets.js";
import { sendRequest } from "../http/send.js";
import { isPlainObject } from "../../validate.js";
import type { ToolSource } from "../index.js";
import { decompressSpec, parseSpecSync, readSpecRaw, yamlParserFor, type SpecLimits, type YamlParse } from "./document.js";
import { indexFile, indexKey, readOperationIndex, specHash, writeOperationIndex, type OperationIndex } from "./operation-index.js";
import { MAX_OPERATIONS, readOperations, type OpenApiOperation } from "./operations.js";
import { resolveOperation, type ResolvedOperation } from "./params.js";
import { parseOpenApiTool, type OpenApiToolSpec } from "./schema.js";

export interface OpenApiToolAdapterOptions extends SpecLimits {
  /** Where `${VAR}` references are read from at each call. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Response size cap in bytes; default 10 MiB (as for HTTP tools). */
  maxResponseBytes?: number;
  /** Most operations kept (default MAX_OPERATIONS). */
  maxOperations?: number;
  /**
   * Folder for the operation index (operation-index.ts): with it, a new process lists and searches
   * a spec whose bytes are unchanged without parsing it. Sessions on a file base use
   * `<base>/tool-index/openapi`; without it every load parses the spec.
   */
  indexDir?: string;
}

/** A callable description: the summary (or the description's first sentence), then the route. */
const MAX_CALLABLE_DESCRIPTION = 400;
/** The tool's description when the YAML gives none: the spec's title and the start of its description. */
const MAX_TOOL_DESCRIPTION = 300;

function firstParagraph(text: string): string {
  const para = text.split(/\n\s*\n/)[0] ?? "";
  return para.replace(/\s+/g, " ").trim();
}

function callableDescription(op: OpenApiOperation): string {
  const route = `${op.method} ${op.path}`;
  let lead = op.summary.replace(/\s+/g, " ").trim();
  const detail = firstParagraph(op.description);
  if (!lead) lead = detail;
  else if (detail && detail !== lead) lead = `${lead.replace(/\.$/, "")}. ${detail}`;
  if (lead.length > MAX_CALLABLE_DESCRIPTION) lead = `${lead.slice(0, MAX_CALLABLE_DESCRIPTION - 1)}…`;
  return `${op.deprecated ? "(deprecated) " : ""}${lead ? `${lead} ` : ""}(${route})`;
}

/**
 * A callable whose params and result type are resolved on first read: listing or searching 2,500
 * operations reads their names and summaries only; describing or calling one resolves that one
 * (and, after a load from the operation index, parses the document first).
 */
function lazyCallable(name: string, description: string, resolve: () => ResolvedOperation): CallableInfo {
  const c = { name, description } as CallableInfo;
  Object.defineProperty(c, "params", { enumerable: true, get: (): ParamSpec[] => resolve().params });
  Object.defineProperty(c, "returns", { enumerable: true, get: (): string => resolve().returns });
  return c;
}

/** The request target: the YAML's base_url, else the spec's first server (its variables at their defaults). */
function serverUrl(doc: Record<string, unknown>, spec: OpenApiToolSpec): string {
  if (spec.baseUrl !== undefined) return spec.baseUrl;
  const servers = Array.isArray(doc["servers"]) ? doc["servers"] : [];
  const first: unknown = servers[0];
  if (!isPlainObject(first) || typeof first["url"] !== "string") {
    throw new ValidationError(`${spec.source}: the spec names no servers; set base_url: in the tool file`);
  }
  const variables = isPlainObject(first["variables"]) ? first["variables"] : {};
  const raw = first["url"].replace(/\{([^{}]+)\}/g, (whole, v: string) => {
    const d = isPlainObject(variables[v]) ? variables[v]["default"] : undefined;
    return typeof d === "string" ? d : whole;
  });
  let absolute = raw;
  if (spec.spec.kind === "url") absolute = new URL(raw, spec.spec.url).href;
  const base = normaliseBaseUrl(absolute);
  if ("problem" in base) throw new ValidationError(`${spec.source}: the spec's server URL ${JSON.stringify(raw.slice(0, 200))} cannot be used (${base.problem}); set base_url: in the tool file`);
  return base.url;
}

/**
 * What operations are resolved against later: the document without `components.examples`, which
 * `$ref`s of parameters and schemas never point into and which is most of a large spec's size
 * (GitHub's: about half), so it can be garbage-collected after indexing.
 */
function retained(doc: Record<string, unknown>): Record<string, unknown> {
  const components = doc["components"];
  if (!isPlainObject(components) || !("examples" in components)) return doc;
  const { examples: _examples, ...rest } = components;
  return { ...doc, components: rest };
}

interface Loaded {
  info: ToolInfo;
  baseUrl: string;
  /** Operation name → its resolved parameters and route (computed on first use). */
  byName: Map<string, () => ResolvedOperation>;
}

/** The parsed document, ready to resolve operations against. */
interface ParsedSpec {
  root: Record<string, unknown>;
  operations: OpenApiOperation[];
}

export class OpenApiToolAdapter implements ToolAdapter {
  readonly name: string;
  private loading: Promise<Loaded> | null = null;

  constructor(
    readonly spec: OpenApiToolSpec,
    private readonly options: OpenApiToolAdapterOptions = {},
  ) {
    this.name = spec.name;
  }

  /** Parse a YAML document (already loaded) from `source`. Throws ValidationError. Reads no spec yet. */
  static fromDocument(doc: unknown, source: ToolSource, options: OpenApiToolAdapterOptions = {}): OpenApiToolAdapter {
    return new OpenApiToolAdapter(parseOpenApiTool(doc, source), options);
  }

  async info(): Promise<ToolInfo> {
    return (await this.load()).info;
  }

  /** Reads and indexes the spec once; a failure is not kept, so a fixed file or a server back up is read on the next use. */
  private load(): Promise<Loaded> {
    if (!this.loading) {
      this.loading = this.read();
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  private get label(): string {
    return `${this.spec.source} (tool ${this.name})`;
  }

  /** Parses a document's operations; throws ValidationError when it is not OpenAPI 3 or has too many. */
  private parsed(doc: unknown): ParsedSpec {
    const { operations } = readOperations(doc, this.spec.filter, this.label, this.options.maxOperations);
    return { root: retained(doc as Record<string, unknown>), operations };
  }

  private async read(): Promise<Loaded> {
    const where = this.spec.spec;
    if (where.kind === "document") return this.fromParsed(this.parsed(where.document));
    const raw = await readSpecRaw(where, this.label, this.options);
    const parseRaw = async () => {
      const bytes = decompressSpec(raw, this.label, this.options);
      const yaml = await yamlParserFor(bytes);
      return { loaded: this.fromParsed(this.parsed(parseSpecSync(bytes, this.label, this.options, yaml))), yaml: yaml !== undefined };
    };
    const indexDir = this.options.indexDir;
    if (indexDir === undefined) return (await parseRaw()).loaded;

    // The hash is of the bytes as stored: an unchanged gzip spec is recognised without inflating it.
    const file = indexFile(indexDir, JSON.stringify([this.spec.source, this.name]));
    const key = indexKey(specHash(raw), {
      location: where.kind === "file" ? where.path : where.url,
      filter: this.spec.filter,
      maxOperations: this.options.maxOperations ?? MAX_OPERATIONS,
      baseUrl: this.spec.baseUrl ?? null,
      maxBytes: this.options.maxBytes ?? null,
      maxYamlBytes: this.options.maxYamlBytes ?? null,
    });
    const index = await readOperationIndex(file, key, this.options.maxOperations ?? MAX_OPERATIONS);
    if (index) return this.fromIndex(index, raw);
    const { loaded, yaml } = await parseRaw();
    await writeOperationIndex(file, key, {
      title: loaded.title,
      about: loaded.about,
      baseUrl: loaded.baseUrl,
      yaml,
      operations: loaded.info.callables.map((c) => ({ name: c.name, description: c.description })),
    });
    return loaded;
  }

  /** Operations from a parsed document. */
  private fromParsed({ root, operations }: ParsedSpec): Loaded & { title: string; about: string } {
    const baseUrl = serverUrl(root, this.spec);
    const byName = new Map<string, () => ResolvedOperation>();
    const callables: CallableInfo[] = [];
    for (const op of operations) {
      let resolved: ResolvedOperation | undefined;
      const resolve = () => (resolved ??= resolveOperation(op, root));
      byName.set(op.name, resolve);
      callables.push(lazyCallable(op.name, callableDescription(op), resolve));
    }
    const docInfo = isPlainObject(root["info"]) ? root["info"] : {};
    const title = typeof docInfo["title"] === "string" ? docInfo["title"].trim() : "";
    const about = typeof docInfo["description"] === "string" ? firstParagraph(docInfo["description"]) : "";
    return { info: this.toolInfo(title, about, baseUrl, callables), baseUrl, byName, title, about };
  }

  /**
   * Operations from a valid index: the document is parsed (synchronously, from the bytes kept
   * until then) the first time an operation's parameters are read. The index's key is the hash of
   * these very bytes, so the document holds the same operations under the same names.
   */
  private async fromIndex(index: OperationIndex, raw: Uint8Array): Promise<Loaded> {
    const yaml: YamlParse | undefined = index.yaml ? ((await import("yaml")).parse as YamlParse) : undefined;
    let kept: Uint8Array | null = raw;
    let document: { root: Record<string, unknown>; byName: Map<string, OpenApiOperation> } | null = null;
    const parsedDocument = () => {
      if (!document) {
        const { root, operations } = this.parsed(parseSpecSync(decompressSpec(kept!, this.label, this.options), this.label, this.options, yaml));
        document = { root, byName: new Map(operations.map((op) => [op.name, op])) };
        kept = null;
      }
      return document;
    };
    const byName = new Map<string, () => ResolvedOperation>();
    const callables: CallableInfo[] = [];
    for (const { name, description } of index.operations) {
      let resolved: ResolvedOperation | undefined;
      const resolve = () => {
        if (resolved) return resolved;
        const { root, byName: ops } = parsedDocument();
        const op = ops.get(name);
        // Only an index written by other code for these bytes can name an operation the document lacks.
        if (!op) throw new ToolError({ tool: this.name, callable: name, code: "INTERNAL", message: `${this.label}: operation '${name}' is in the operation index but not in the spec; delete ${this.options.indexDir ?? "the index"} and retry` });
        return (resolved = resolveOperation(op, root));
      };
      byName.set(name, resolve);
      callables.push(lazyCallable(name, description, resolve));
    }
    return { info: this.toolInfo(index.title, index.about, index.baseUrl, callables), baseUrl: index.baseUrl, byName };
  }

  private toolInfo(title: string, about: string, baseUrl: string, callables: CallableInfo[]): ToolInfo {
    let description = this.spec.description || [title, about].filter(Boolean).join(": ") || `OpenAPI ${baseUrl}`;
    if (description.length > MAX_TOOL_DESCRIPTION) description = `${description.slice(0, MAX_TOOL_DESCRIPTION - 1)}…`;
    return {
      name: this.name,
      type: "openapi",
      description: `${description} (${callables.length} operations: find one with tools.search, read one with tools.describe("${this.name}.<operation>"))`,
      tags: [...this.spec.tags],
      callables,
      direct: null,
    };
  }

  /** `args` are expected to be validated already (ToolRegistry does it). Throws ToolError. */
  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    const loaded = await this.load();
    const entry = callable === null ? undefined : loaded.byName.get(callable);
    if (callable === null || !entry) {
      const names = [...loaded.byName.keys()];
      throw new ToolError({
        tool: this.name,
        callable,
        code: "NOT_FOUND",
        message:
          callable === null
            ? `Tool '${this.name}' cannot be called directly; call one of its operations: tools.${this.name}.<operation>(args) (find one with tools.search)`
            : `Unknown operation '${callable}' of tool '${this.name}'.${didYouMean(callable, names)} Find one with tools.search("what it does")`,
      });
    }
    const label = `tools.${this.name}.${callable}`;
    const resolved = entry();
    if (resolved.unsupported) throw new ToolError({ tool: this.name, callable, code: "INVALID_INPUT", message: `${label}: ${resolved.unsupported}` });

    // Read at each call, as HTTP tools do: a missing token fails only the calls, never discovery.
    const env = this.options.env ?? process.env;
    const headers = resolveHeaders(this.spec.headers, env);
    const query = resolveHeaders(this.spec.query, env);
    const unresolved = unresolvedMessage(label, headers, this.spec.source) ?? unresolvedMessage(label, query, this.spec.source, "query parameter");
    if (unresolved) throw new ToolError({ tool: this.name, callable, code: "DEPENDENCY", message: unresolved });
    // Every query template is a credential (that is what the field is for): its value is redacted too.
    const secrets = [...headers.secrets, ...query.secrets, ...Object.values(query.headers).filter((v) => v.trim())];

    const request = buildRequest(this.name, loaded.baseUrl, resolved.endpoint, args);
    for (const [k, v] of Object.entries(query.headers)) request.url.searchParams.set(k, v);
    request.headers = mergeHeaders({ accept: DEFAULT_ACCEPT }, headers.headers, request.headers);
    const timeoutMs = ctx.timeoutMs !== undefined ? Math.min(this.spec.timeoutMs, ctx.timeoutMs) : this.spec.timeoutMs;
    return sendRequest(request, {
      tool: this.name,
      callable,
      timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(this.options.maxResponseBytes !== undefined ? { maxResponseBytes: this.options.maxResponseBytes } : {}),
      secrets,
      secretHeaders: headers.secretHeaders,
    });
  }

  async close(): Promise<void> {
    // Nothing to release: fetch's connection pool is shared; the parsed spec goes with the adapter.
  }
}
