/**
 * One MCP server over one ts-code-mode Session. Transport-agnostic: stdio connects one of these,
 * Streamable HTTP one per MCP session (see ./http.ts). The server owns nothing it did not create;
 * closing the Session is the caller's job.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Session } from "../session.js";
import type { ClientApprovals } from "./approvals.js";
import { SERVER_INSTRUCTIONS } from "./descriptions.js";
import { DEFAULT_PROGRESS_INTERVAL_MS } from "./progress.js";
import { registerCodeModeResources } from "./resources.js";
import { registerSkillsPrompt } from "./skills-prompt.js";
import { MCP_SURFACES, registerCodeModeTools, type McpSurface } from "./tools.js";
import type { McpLanguage } from "./schemas.js";

import { DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT, stderrLog } from "./limits.js";
import { traceMcpRequests } from "../telemetry/mcp.js";

export { DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT, stderrLog } from "./limits.js";

export interface CodeModeServerOptions {
  /** Longest text a tool returns, in characters (default 24,000). */
  maxOutput?: number;
  /**
   * Offer add_dep/remove_dep (surface "full"). Default true; they are offered only when the
   * executor also declares the "depsInstall" capability.
   */
  runtimeDeps?: boolean;
  /** "code" (default): run_code alone, a constant few kilobytes. "full": one tool per operation too. */
  surface?: McpSurface;
  /** Time between progress notifications of a long call, when the client sent a progress token. Default 1 s. */
  progressIntervalMs?: number;
  /**
   * Bind this session's tool-call approvals to the client (MCP elicitation). Its `approver` must be
   * in the `approval` middleware of the Session's executor.
   */
  approvals?: ClientApprovals;
  /** Reported to clients in the initialize result. */
  serverInfo?: { name: string; version: string };
  /** Where the server logs (never stdout, which may be the protocol stream). Default: stderr. */
  log?: (line: string) => void;
  /**
   * Offer a second language in run_code (its `language` argument): `createSession` makes an unstarted
   * Session for it (same storage, an executor of that language). It is made and started on the first
   * call that asks for it, and closed by the server's `close()`; a server that never gets such a call
   * never starts it.
   */
  otherLanguage?: { language: McpLanguage; createSession: () => Session };
}

/**
 * A JSON-RPC message as MCP transports carry it. This type and the two below are declared by shape:
 * the MCP SDK is bundled into ts-code-mode (scripts/bundle.mjs), so its types are not installed
 * with it, and the published declarations name none of them.
 */
export interface McpJsonRpcMessage {
  jsonrpc: "2.0";
  [key: string]: unknown;
}

/**
 * What the server can be connected to: the MCP SDK's server transports (stdio, Streamable HTTP,
 * in-memory) fit this shape, from whichever copy of the SDK you use, and so can your own.
 * (Methods, not function properties, so that a transport typed more narrowly still fits.)
 */
export interface McpServerTransport {
  start(): Promise<void>;
  send(message: McpJsonRpcMessage, options?: object): Promise<void>;
  close(): Promise<void>;
  onclose?(): void;
  onerror?(error: Error): void;
  onmessage?(message: McpJsonRpcMessage, extra?: object): void;
  sessionId?: string;
}

/** The MCP server (the SDK's `McpServer`), as far as hosting it goes. */
export interface CodeModeMcpServer {
  /** Serve over `transport` (starts it). One transport at a time. */
  connect(transport: McpServerTransport): Promise<void>;
  /** Close the transport; the Session stays open. */
  close(): Promise<void>;
  isConnected(): boolean;
}

export interface CodeModeServer {
  server: CodeModeMcpServer;
  /** The MCP tool names, as `tools/list` returns them. */
  tools: string[];
  /** Closes what the server made (the other language's session, if it was started); the caller's Session stays open. */
  close(): Promise<void>;
}

export function createCodeModeServer(session: Session, options: CodeModeServerOptions = {}): CodeModeServer {
  const { server, tools, close } = buildCodeModeServer(session, options);
  return { server: server as unknown as CodeModeMcpServer, tools, close };
}

/**
 * createCodeModeServer with the SDK's McpServer as it is, for the stdio and HTTP hosting here.
 * @internal (stripped from the published declarations, which name no MCP SDK type)
 */
export function buildCodeModeServer(session: Session, options: CodeModeServerOptions = {}): { server: McpServer; tools: string[]; close(): Promise<void> } {
  const maxOutput = options.maxOutput ?? DEFAULT_MAX_OUTPUT;
  if (!Number.isInteger(maxOutput) || maxOutput < MIN_MAX_OUTPUT) {
    throw new TypeError(`createCodeModeServer: maxOutput must be a whole number of characters, at least ${MIN_MAX_OUTPUT}; got ${String(maxOutput)}`);
  }
  const surface = options.surface ?? "code";
  if (!MCP_SURFACES.includes(surface)) throw new TypeError(`createCodeModeServer: surface must be one of ${MCP_SURFACES.join(", ")}; got ${String(surface)}`);
  const progressIntervalMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  if (!(Number.isFinite(progressIntervalMs) && progressIntervalMs >= 10)) {
    throw new TypeError(`createCodeModeServer: progressIntervalMs must be at least 10 ms; got ${String(progressIntervalMs)}`);
  }
  const server = new McpServer(options.serverInfo ?? { name: "ts-code-mode", version: "0.0.0" }, {
    capabilities: { tools: {}, resources: { listChanged: true }, logging: {} },
    instructions: SERVER_INSTRUCTIONS,
  });
  // The other language's session: made on first use, never after close().
  let other: Session | null = null;
  let closed = false;
  const otherLanguage = options.otherLanguage;
  const otherSession = (): Session => {
    if (closed) throw new Error("The MCP server is closed");
    return (other ??= otherLanguage!.createSession());
  };
  const resources = registerCodeModeResources(server, session);
  registerSkillsPrompt(server, session);
  options.approvals?.bind(server);
  const tools = registerCodeModeTools(server, session, {
    maxOutput,
    runtimeDeps: options.runtimeDeps !== false && session.supports("depsInstall"),
    log: options.log ?? stderrLog,
    surface,
    progressIntervalMs,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    onStoreChanged: () => resources.changed(),
    ...(otherLanguage ? { otherLanguage: { language: otherLanguage.language, session: otherSession } } : {}),
  });
  // Once every handler is registered: each request the server answers is a span.
  traceMcpRequests(server.server);
  const close = async (): Promise<void> => {
    closed = true;
    await other?.close();
  };
  return { server, tools, close };
}
