/**
 * An MCP `Client` the host program connected itself, as one tool: every tool the server lists is
 * `tools.<name>.<mcp tool>(args)`. The program owns the connection: closing the session does not
 * close the client, and a lost connection is the program's to restore (calls fail with
 * DEPENDENCY meanwhile). Discovery and results read like a YAML `type: mcp` tool's (the same
 * schema translation and result unwrapping).
 */
import { ToolError } from "../../errors.js";
import { callableLabel, mcpCallableInfo } from "../adapters/mcp/adapter.js";
import { excerpt, resultError, unwrapResult } from "../adapters/mcp/result.js";
import type { Tool } from "../adapters/mcp/sdk.js";
import type { CallContext, ToolAdapter, ToolInfo } from "../protocol.js";

/** What we use of `@modelcontextprotocol/sdk`'s Client (checked by shape). */
export interface McpClientLike {
  listTools(params?: { cursor?: string }, options?: { timeout?: number }): Promise<{ tools: unknown[]; nextCursor?: string | undefined }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: never, options?: { timeout?: number; signal?: AbortSignal }): Promise<unknown>;
  getInstructions?(): string | undefined;
}

/** Pages of tools/list followed (a server that never stops paginating is cut here). */
const MAX_LIST_PAGES = 100;
const LIST_TIMEOUT_MS = 30_000;
/** Names a guest proxy cannot reach (promise resolution, object internals). */
const UNREACHABLE = new Set(["then", "catch", "finally", "constructor", "prototype", "__proto__", "toJSON"]);

export class McpClientAdapter implements ToolAdapter {
  private toolInfo: Promise<ToolInfo> | null = null;

  constructor(
    readonly name: string,
    private readonly client: McpClientLike,
  ) {}

  info(): Promise<ToolInfo> {
    this.toolInfo ??= this.list().catch((e: unknown) => {
      this.toolInfo = null;
      throw new ToolError({ tool: this.name, callable: null, code: "DEPENDENCY", message: `tools.${this.name}: listing the MCP client's tools failed: ${excerpt(e instanceof Error ? e.message : String(e))}` });
    });
    return this.toolInfo;
  }

  private async list(): Promise<ToolInfo> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const r = await this.client.listTools(cursor ? { cursor } : undefined, { timeout: LIST_TIMEOUT_MS });
      tools.push(...(r.tools as Tool[]).filter((t) => typeof t?.name === "string" && !UNREACHABLE.has(t.name)));
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    const instructions = this.client.getInstructions?.()?.trim().split(/\n\s*\n/)[0];
    return { name: this.name, type: "mcp", description: instructions || `Tools of an MCP client: ${tools.map((t) => t.name).join(", ")}`, tags: [], callables: tools.map(mcpCallableInfo), direct: null };
  }

  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    if (callable === null) throw new ToolError({ tool: this.name, callable, code: "NOT_FOUND", message: `tools.${this.name} is an MCP client and cannot be called directly; call one of its tools: tools.${this.name}.<tool>(args)` });
    const label = callableLabel(this.name, callable);
    let result: Record<string, unknown>;
    try {
      const options = { ...(ctx.timeoutMs !== undefined ? { timeout: Math.max(1, ctx.timeoutMs) } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) };
      result = (await this.client.callTool({ name: callable, arguments: args }, undefined, options)) as Record<string, unknown>;
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      const code = /timed? ?out/i.test(text) ? "TIMEOUT" : /not connected|closed/i.test(text) ? "DEPENDENCY" : "INTERNAL";
      throw new ToolError({ tool: this.name, callable, code, message: `${label}: ${excerpt(text)}` });
    }
    if (result["isError"] === true) throw resultError(result, { tool: this.name, callable, label }, []);
    return unwrapResult(result);
  }

  /** The client belongs to the program that connected it: nothing to close here. */
  async close(): Promise<void> {}
}
