/**
 * An MCP server defined in YAML (`type: mcp`): every tool the server lists becomes a callable
 * `tools.<yaml name>.<mcp tool>(args)` (non-identifier names too: `tools.x["get-weather"](args)`);
 * there is no escape hatch (`direct: null`).
 *
 * Connection policy:
 *   - lazy: nothing starts at load; the first `info()` or `call()` spawns/reaches the server, does
 *     the handshake and lists the tools; the connection is then reused by every call;
 *   - a server that went away between calls is restarted by the next call;
 *   - a call that fails because the connection closed under it (the server crashed) reconnects and
 *     is retried once; a second loss is a ToolError DEPENDENCY. Note that the retried call runs
 *     again from the start on the new server;
 *   - `close()` closes the connection and ends the stdio child process.
 *
 * Arguments arrive validated by the registry against the ParamSpecs derived from each tool's
 * `inputSchema` (json-schema.ts); results are unwrapped by result.ts. Every message is redacted of
 * the `${VAR}` values of the YAML (schema.ts).
 */
import { ToolError, didYouMean, type ToolErrorCode } from "../../../errors.js";
import type { CallContext, CallableInfo, ToolAdapter, ToolInfo } from "../../protocol.js";
import type { ToolSource } from "../index.js";
import { McpConnection, isConnectionLost, serverLabel } from "./connection.js";
import { paramsFromInputSchema, typeTextFromSchema } from "./json-schema.js";
import { excerpt, redact, resultError, unwrapResult, type CallLabel } from "./result.js";
import { parseMcpTool, type McpToolSpec } from "./schema.js";
import { MCP_ERROR, httpErrorStatus, mcpErrorCode, type Tool } from "./sdk.js";

const PLAIN_KEY_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/**
 * MCP tool names that the guest's `tools.<name>` proxies cannot reach (promise resolution and
 * object internals use them); such tools are left out of discovery.
 */
const UNREACHABLE_NAMES: ReadonlySet<string> = new Set(["then", "catch", "finally", "constructor", "prototype", "__proto__", "toJSON"]);
/** Server instructions used as the tool description are cut here. */
const MAX_INSTRUCTIONS_CHARS = 500;

/** `tools.math.add` or `tools.math["get-weather"]`. */
export function callableLabel(tool: string, callable: string): string {
  return PLAIN_KEY_RE.test(callable) ? `tools.${tool}.${callable}` : `tools.${tool}[${JSON.stringify(callable)}]`;
}

/**
 * One tool as an MCP server lists it (`tools/list`), as far as discovery reads it. Declared by shape
 * rather than as the MCP SDK's `Tool`: the SDK is bundled into ts-code-mode, so its types are not
 * installed with it; the SDK's `Tool` (and any listed tool) fits this shape.
 */
export interface McpListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: object;
  outputSchema?: object;
  annotations?: { title?: string };
}

/** The discovery view of one MCP tool. */
export function mcpCallableInfo(tool: McpListedTool): CallableInfo {
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? "",
    params: paramsFromInputSchema(tool.inputSchema),
    returns: tool.outputSchema ? typeTextFromSchema(tool.outputSchema) : "unknown",
  };
}

function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message && !e.message.includes(cause.message) ? `${e.message} (${cause.message})` : e.message;
}

export class McpToolAdapter implements ToolAdapter {
  readonly name: string;
  private conn: McpConnection | null = null;
  private opening: Promise<McpConnection> | null = null;
  private toolInfo: ToolInfo | null = null;
  private toolNames: string[] = [];
  private closed = false;

  constructor(readonly spec: McpToolSpec) {
    this.name = spec.name;
  }

  /** Parse a YAML document (already loaded). Throws ValidationError. `env` feeds `${VAR}` (default process.env). */
  static fromDocument(doc: unknown, source: ToolSource, env?: NodeJS.ProcessEnv): McpToolAdapter {
    return new McpToolAdapter(parseMcpTool(doc, source.file, env ? { dir: source.dir, env } : { dir: source.dir }));
  }

  /** Pid of the running stdio server, or null (not started, closed, or HTTP). */
  get pid(): number | null {
    return this.conn && !this.conn.closed ? this.conn.pid : null;
  }

  /** Connects the first time (ToolError DEPENDENCY when the server cannot start); cached afterwards. */
  async info(): Promise<ToolInfo> {
    if (this.toolInfo) return this.toolInfo;
    await this.connection();
    return this.toolInfo!;
  }

  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    if (callable === null) {
      const names = this.toolNames.map((n) => callableLabel(this.name, n));
      throw new ToolError({
        tool: this.name,
        callable,
        code: "NOT_FOUND",
        message: `Tool '${this.name}' is an MCP server and cannot be called directly; call one of its tools${names.length ? `: ${names.join(", ")}` : ""}`,
      });
    }
    const at: CallLabel = { tool: this.name, callable, label: callableLabel(this.name, callable) };
    // The YAML timeout bounds the call itself; the caller's budget (the run's time left) bounds
    // everything, including waiting for a server that is still starting.
    const runDeadline = ctx.timeoutMs !== undefined ? performance.now() + Math.max(1, ctx.timeoutMs) : Number.POSITIVE_INFINITY;
    /** What messages call "the timeout": the smaller of the two budgets as given. */
    const budget = ctx.timeoutMs !== undefined ? Math.max(1, Math.min(this.spec.timeoutMs, ctx.timeoutMs)) : this.spec.timeoutMs;
    const outer = ctx.signal;
    if (outer?.aborted) throw this.abortError(at, outer);

    // The SDK adds an abort listener per request and never removes it; a run's signal is shared
    // by all its calls, so each call gets its own signal linked to the run's.
    let signal: AbortSignal | undefined;
    let unlink: (() => void) | undefined;
    if (outer) {
      const linked = new AbortController();
      const onAbort = () => linked.abort(outer.reason);
      outer.addEventListener("abort", onAbort, { once: true });
      unlink = () => outer.removeEventListener("abort", onAbort);
      signal = linked.signal;
    }

    try {
      for (let attempt = 1; ; attempt++) {
        const conn = await this.connectionWithin(runDeadline, outer, at);
        if (attempt === 1 && this.toolInfo && !this.toolNames.includes(callable)) {
          throw new ToolError({
            tool: this.name,
            callable,
            code: "NOT_FOUND",
            message: `Unknown tool '${callable}' of MCP server '${this.name}'.${didYouMean(callable, this.toolNames)} Available: ${this.toolNames.join(", ") || "(none)"}`,
          });
        }
        const timeout = Math.max(1, Math.floor(Math.min(this.spec.timeoutMs, runDeadline - performance.now())));
        let result: Record<string, unknown>;
        try {
          result = (await conn.client.callTool({ name: callable, arguments: args }, undefined, signal ? { timeout, signal } : { timeout })) as Record<string, unknown>;
        } catch (e) {
          if (outer?.aborted) throw this.abortError(at, outer);
          if (conn.closed || isConnectionLost(e)) {
            this.discard(conn);
            if (attempt === 1) continue;
            const stderr = conn.stderrExcerpt();
            throw new ToolError({
              tool: this.name,
              callable,
              code: "DEPENDENCY",
              message: redact(
                `${at.label}: the MCP server '${this.name}' (${serverLabel(this.spec)}) closed the connection during the call, ` +
                  `and again after it was restarted; the server is failing on this call${stderr ? `; stderr: ${stderr}` : ""}`,
                this.spec.secrets,
              ),
              ...(stderr ? { stderr } : {}),
            });
          }
          throw this.callError(e, at, budget);
        }
        if (result["isError"] === true) throw resultError(result, at, this.spec.secrets);
        return unwrapResult(result);
      }
    } finally {
      unlink?.();
    }
  }

  /** Close the connection (and end the stdio server). Idempotent; later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const conn = this.conn;
    const opening = this.opening;
    this.conn = null;
    await Promise.all([conn?.close(), opening?.then((c) => c.close(), () => {})]);
  }

  /** The live connection, opening one when there is none (single flight: concurrent callers share it). */
  private connection(): Promise<McpConnection> {
    if (this.closed) return Promise.reject(this.closedError());
    // Unset ${VAR}s: never start the server with an empty secret; say what to set instead.
    if (this.spec.unavailable) return Promise.reject(new ToolError({ tool: this.name, callable: null, code: "DEPENDENCY", message: this.spec.unavailable }));
    if (this.conn && !this.conn.closed) return Promise.resolve(this.conn);
    if (this.conn) this.discard(this.conn);
    if (!this.opening) {
      const opening = McpConnection.open(this.spec, { timeoutMs: this.spec.connectTimeoutMs, onToolsChanged: (tools) => this.setTools(tools) })
        .then(async (c) => {
          if (this.closed) {
            await c.close();
            throw this.closedError();
          }
          this.conn = c;
          this.setTools(c.tools, c.client.getInstructions());
          return c;
        })
        .finally(() => {
          if (this.opening === opening) this.opening = null;
        });
      // A caller that gave up (deadline, abort) leaves the attempt running; its failure is not unhandled.
      opening.catch(() => {});
      this.opening = opening;
    }
    return this.opening;
  }

  /** `connection()` bounded by the caller's deadline and signal (a start may outlive one impatient call). */
  private async connectionWithin(deadline: number, signal: AbortSignal | undefined, at: CallLabel): Promise<McpConnection> {
    if (this.conn && !this.conn.closed && !this.closed) return this.conn;
    const opening = this.connection();
    if (!signal && deadline === Number.POSITIVE_INFINITY) return opening;
    const remaining = deadline - performance.now();
    return new Promise<McpConnection>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          cleanup();
          reject(new ToolError({ tool: this.name, callable: at.callable, code: "TIMEOUT", message: `${at.label} timed out while the MCP server was starting` }));
        },
        Math.max(1, Math.min(remaining, 2_147_483_647)),
      );
      const onAbort = () => {
        cleanup();
        reject(this.abortError(at, signal!));
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      opening.then(
        (c) => {
          cleanup();
          resolve(c);
        },
        (e: unknown) => {
          cleanup();
          reject(e);
        },
      );
    });
  }

  /** Forget a dead connection (only if it is still the current one) and make sure its child is gone. */
  private discard(conn: McpConnection): void {
    if (this.conn === conn) this.conn = null;
    void conn.close();
  }

  private setTools(tools: Tool[], instructions?: string): void {
    const reachable = tools.filter((t) => !UNREACHABLE_NAMES.has(t.name));
    this.toolNames = reachable.map((t) => t.name);
    let description = this.spec.description;
    if (!description && instructions) {
      const first = instructions.trim().split(/\n\s*\n/)[0] ?? "";
      description = first.length > MAX_INSTRUCTIONS_CHARS ? `${first.slice(0, MAX_INSTRUCTIONS_CHARS)}…` : first;
    }
    if (!description) description = this.toolInfo?.description || `Tools of the MCP server ${serverLabel(this.spec)}`;
    this.toolInfo = {
      name: this.name,
      type: "mcp",
      description,
      tags: [...this.spec.tags],
      callables: reachable.map(mcpCallableInfo),
      direct: null,
    };
  }

  private closedError(): ToolError {
    return new ToolError({ tool: this.name, callable: null, code: "INTERNAL", message: `MCP tool '${this.name}' is closed` });
  }

  private abortError(at: CallLabel, signal: AbortSignal): ToolError {
    const reason: unknown = signal.reason;
    const timedOut = reason instanceof Error && reason.name === "TimeoutError";
    const why = reason instanceof Error && reason.message ? `: ${reason.message}` : "";
    return new ToolError({ tool: this.name, callable: at.callable, code: timedOut ? "TIMEOUT" : "INTERNAL", message: `${at.label} was aborted${why}` });
  }

  private callError(e: unknown, at: CallLabel, budget: number): ToolError {
    const make = (code: ToolErrorCode, message: string, extra: { status?: number } = {}) =>
      new ToolError({ tool: this.name, callable: at.callable, code, message: excerpt(redact(message, this.spec.secrets)), ...extra });
    if (e instanceof ToolError) return e;
    const text = errorText(e);
    const mcpCode = mcpErrorCode(e);
    if (mcpCode !== null) {
      if (mcpCode === MCP_ERROR.RequestTimeout) {
        return make("TIMEOUT", `${at.label} timed out after ${budget} ms (the MCP server was asked to cancel it)`);
      }
      if (/structured content/i.test(text)) return make("INTERNAL", `${at.label}: the MCP server returned a result that does not match the tool's outputSchema: ${text}`);
      if (mcpCode === MCP_ERROR.InvalidParams) return make(/not found/i.test(text) ? "NOT_FOUND" : "INVALID_INPUT", `${at.label}: ${text}`);
      if (mcpCode === MCP_ERROR.MethodNotFound) return make("DEPENDENCY", `${at.label}: the MCP server does not support tool calls: ${text}`);
      return make("INTERNAL", `${at.label}: ${text}`);
    }
    const status = httpErrorStatus(e);
    if (status !== null && status > 0) {
      const code: ToolErrorCode = status === 401 || status === 403 ? "PERMISSION" : status === 408 || status === 504 ? "TIMEOUT" : "DEPENDENCY";
      return make(code, `${at.label}: the MCP server answered HTTP ${status}: ${text}`, { status });
    }
    return make("INTERNAL", `${at.label}: ${text}`);
  }
}
