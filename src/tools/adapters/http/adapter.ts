/**
 * An HTTP API defined in YAML (`type: http`): each endpoint is a callable
 * `tools.<name>.<endpoint>(args)`; there is no escape hatch. Arguments are checked before the call
 * by the registry (validate.ts) against the ParamSpecs built here, so `tools.describe` shows exactly
 * what a call accepts. A call resolves the `${VAR}` header references from the environment, builds
 * the request (request.ts) and sends it (send.ts).
 */
import { ToolError, didYouMean } from "../../../errors.js";
import type { CallContext, CallableInfo, ToolAdapter, ToolInfo } from "../../protocol.js";
import { buildRequest } from "./request.js";
import { resolveHeaders, unresolvedMessage } from "./secrets.js";
import { sendRequest } from "./send.js";
import { httpParamSpec, parseHttpTool, type HttpEndpoint, type HttpToolSpec } from "./schema.js";

/** Sent unless the YAML sets `Accept`: most JSON APIs answer in JSON only when asked to. */
export const DEFAULT_ACCEPT = "application/json, text/plain;q=0.9, */*;q=0.8";

export interface HttpToolAdapterOptions {
  /** Where `${VAR}` header references are read from at each call. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Response size cap in bytes; default MAX_RESPONSE_BYTES (10 MiB). */
  maxResponseBytes?: number;
}

function endpointCallable(e: HttpEndpoint): CallableInfo {
  const route = `${e.method} ${e.path}`;
  return {
    name: e.name,
    description: e.description ? `${e.description} (${route})` : route,
    params: e.params.map(httpParamSpec),
    returns: "unknown",
  };
}

/** The discovery/validation view of an HTTP tool. */
export function httpToolInfo(spec: HttpToolSpec): ToolInfo {
  return {
    name: spec.name,
    type: "http",
    description: spec.description || `HTTP API at ${spec.baseUrl}`,
    tags: [...spec.tags],
    callables: spec.endpoints.map(endpointCallable),
    direct: null,
  };
}

/** Header maps merged case-insensitively; later maps win. */
export function mergeHeaders(...maps: Array<Record<string, string>>): Record<string, string> {
  const out = new Map<string, [string, string]>();
  for (const m of maps) for (const [k, v] of Object.entries(m)) out.set(k.toLowerCase(), [k, v]);
  return Object.fromEntries(out.values());
}

export class HttpToolAdapter implements ToolAdapter {
  readonly name: string;
  private readonly toolInfo: ToolInfo;

  constructor(
    readonly spec: HttpToolSpec,
    private readonly options: HttpToolAdapterOptions = {},
  ) {
    this.name = spec.name;
    this.toolInfo = httpToolInfo(spec);
  }

  /** Parse a YAML document (already loaded) from `source`. Throws ValidationError. */
  static fromDocument(doc: unknown, source: string, options: HttpToolAdapterOptions = {}): HttpToolAdapter {
    return new HttpToolAdapter(parseHttpTool(doc, source), options);
  }

  async info(): Promise<ToolInfo> {
    return this.toolInfo;
  }

  /** `args` are expected to be validated already (ToolRegistry does it). Throws ToolError. */
  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    const names = this.spec.endpoints.map((e) => e.name);
    if (callable === null) {
      throw new ToolError({
        tool: this.name,
        callable,
        code: "NOT_FOUND",
        message: `Tool '${this.name}' cannot be called directly; call one of its endpoints: ${names.map((n) => `tools.${this.name}.${n}(...)`).join(", ")}`,
      });
    }
    const endpoint = this.spec.endpoints.find((e) => e.name === callable);
    if (!endpoint) {
      throw new ToolError({
        tool: this.name,
        callable,
        code: "NOT_FOUND",
        message: `Unknown endpoint '${callable}' of tool '${this.name}'.${didYouMean(callable, names)} Available: ${names.join(", ")}`,
      });
    }

    const label = `tools.${this.name}.${callable}`;
    // Read at each call, not at load: a missing token then fails only the calls that need it, and
    // the tool can still be listed and described. Messages name the variable, never a value.
    const resolved = resolveHeaders(this.spec.headers, this.options.env ?? process.env);
    const unresolved = unresolvedMessage(label, resolved, this.spec.source);
    if (unresolved) throw new ToolError({ tool: this.name, callable, code: "DEPENDENCY", message: unresolved });

    const request = buildRequest(this.name, this.spec.baseUrl, endpoint, args);
    request.headers = mergeHeaders({ accept: DEFAULT_ACCEPT }, resolved.headers, request.headers);
    const timeoutMs = ctx.timeoutMs !== undefined ? Math.min(this.spec.timeoutMs, ctx.timeoutMs) : this.spec.timeoutMs;
    return sendRequest(request, {
      tool: this.name,
      callable,
      timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(this.options.maxResponseBytes !== undefined ? { maxResponseBytes: this.options.maxResponseBytes } : {}),
      secrets: resolved.secrets,
      secretHeaders: resolved.secretHeaders,
    });
  }

  async close(): Promise<void> {
    // Nothing to release: fetch's connection pool is shared and idle sockets close on their own.
  }
}
