/**
 * One live connection to an MCP server: an SDK `Client` over a stdio child process or Streamable
 * HTTP. It knows how to open (spawn + handshake + list tools), notice that the server went away,
 * and close (which, for stdio, ends the child: stdin closed, then SIGTERM, then SIGKILL — the
 * SDK's shutdown sequence). Reconnecting and retrying is the adapter's policy, not this module's.
 *
 * A stdio server's stderr is piped into a bounded tail (not the host's stderr: an MCP server can be
 * chatty, and when ts-code-mode itself serves MCP over stdio nothing else may write there). The
 * tail is what a start failure quotes.
 */
import { existsSync } from "node:fs";
import type { Readable } from "node:stream";
import { ToolError } from "../../../errors.js";
import { excerpt, redact } from "./result.js";
import { SAFE_ENV_VARS, type McpToolSpec } from "./schema.js";
import { tracedFetch } from "../../../telemetry/propagation.js";
import {
  MCP_ERROR,
  httpErrorStatus,
  loadClient,
  loadHttpTransport,
  loadStdioTransport,
  mcpErrorCode,
  type Client,
  type StdioClientTransport,
  type StreamableHTTPClientTransport,
  type Tool,
} from "./sdk.js";

/** Our identity in the MCP handshake. */
const CLIENT_INFO = { name: "ts-code-mode", version: "0.1.0" };
/** stderr kept per connection (the end, where a crash explains itself). */
const STDERR_KEEP_CHARS = 16 * 1024;
const STDERR_EXCERPT_CHARS = 2_000;
/** After a failed start, how long to wait for the child's last stderr bytes. */
const STDERR_DRAIN_MS = 500;
/** A polite HTTP session DELETE on close must not hold close() up. */
const TERMINATE_SESSION_MS = 1_000;
/** Pages of tools/list followed before giving up on a server that never stops paginating. */
const MAX_LIST_PAGES = 100;

/** The last STDERR_KEEP_CHARS characters a server wrote to stderr. */
class StderrTail {
  private text = "";
  ended = false;

  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > 2 * STDERR_KEEP_CHARS) this.text = this.text.slice(-STDERR_KEEP_CHARS);
  }

  excerpt(secrets: readonly string[]): string {
    const t = redact(this.text, secrets).trim();
    return t.length > STDERR_EXCERPT_CHARS ? `…${t.slice(-STDERR_EXCERPT_CHARS)}` : t;
  }
}

/** `node server.mjs --flag` / `https://host/path` (no query: it may carry a key). */
export function serverLabel(spec: McpToolSpec): string {
  const s = spec.server;
  if (s.transport === "stdio") return `command '${[s.command, ...s.args].join(" ")}'`;
  try {
    const u = new URL(s.url);
    return `URL ${u.origin}${u.pathname}`;
  } catch {
    return "URL (invalid)";
  }
}

/** The environment a stdio server gets: the safe host variables, then the YAML's `env`. */
export function serverEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of SAFE_ENV_VARS) {
    const v = process.env[key];
    // Bash exported functions start with "()"; they are code, not configuration.
    if (v !== undefined && !v.startsWith("()")) env[key] = v;
  }
  return { ...env, ...extra };
}

function errorMessage(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message && !e.message.includes(cause.message) ? `${e.message} (${cause.message})` : e.message;
}

/** True when `e` says the connection (not the tool) is gone: the caller may reconnect and retry. */
export function isConnectionLost(e: unknown): boolean {
  const mcpCode = mcpErrorCode(e);
  if (mcpCode !== null) return mcpCode === MCP_ERROR.ConnectionClosed;
  const status = httpErrorStatus(e);
  if (status !== null) return status === 404; // the server no longer knows our session
  if (!(e instanceof Error)) return false;
  if (e.message === "Not connected") return true;
  // fetch() failing to reach an HTTP server (refused, reset) is a TypeError with a system-error cause.
  const code = (e as { cause?: { code?: unknown } }).cause?.code;
  return e.name === "TypeError" && typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED)$/.test(code);
}

export interface OpenOptions {
  /** Bound on spawn + handshake + tools/list. */
  timeoutMs: number;
  /** Called with the new list when the server announces that its tools changed. */
  onToolsChanged?: (tools: Tool[]) => void;
}

export class McpConnection {
  /** True once the transport closed (server exited, or close() was called). */
  closed = false;

  private constructor(
    readonly client: Client,
    private readonly transport: StdioClientTransport | StreamableHTTPClientTransport,
    /** null for HTTP. */
    private readonly stderrTail: StderrTail | null,
    private readonly spec: McpToolSpec,
    /** The server's tools as listed right after the handshake. */
    readonly tools: Tool[],
  ) {}

  /** Pid of the stdio child while it runs; null for HTTP or once closed. */
  get pid(): number | null {
    return this.spec.server.transport === "stdio" ? (this.transport as StdioClientTransport).pid : null;
  }

  /** Bounded, redacted tail of the server's stderr ("" for HTTP). */
  stderrExcerpt(): string {
    return this.stderrTail?.excerpt(this.spec.secrets) ?? "";
  }

  /**
   * Start the server (stdio) or reach it (http), complete the MCP handshake and list its tools.
   * Throws ToolError DEPENDENCY (PERMISSION for HTTP 401/403) naming the command or URL, with a
   * bounded stderr excerpt; the half-started child is stopped first.
   */
  static async open(spec: McpToolSpec, options: OpenOptions): Promise<McpConnection> {
    const ClientCtor = await loadClient();
    const { transport, stderr } = await createTransport(spec);
    let conn: McpConnection | null = null;
    const client = new ClientCtor(CLIENT_INFO, {
      capabilities: {},
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (!error && tools && conn && !conn.closed) options.onToolsChanged?.(tools);
          },
        },
      },
    });
    let closed = false;
    client.onclose = () => {
      closed = true;
      if (conn) conn.closed = true;
    };
    // Transport errors also reject the request they concern; without a handler they would only be logged by nobody.
    client.onerror = () => {};
    try {
      await client.connect(transport, { timeout: options.timeoutMs });
      const tools = await listAllTools(client, options.timeoutMs);
      conn = new McpConnection(client, transport, stderr, spec, tools);
      conn.closed = closed;
      return conn;
    } catch (e) {
      await client.close().catch(() => {});
      if (stderr) await drained(stderr, transport as StdioClientTransport);
      throw startError(spec, e, stderr?.excerpt(spec.secrets) ?? "", options.timeoutMs);
    }
  }

  /** Close the client and the transport; for stdio this ends the child process. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.spec.server.transport === "http") {
      const http = this.transport as StreamableHTTPClientTransport;
      // Let the server free the session; it may be gone already, and close() must not hang on it.
      if (http.sessionId) await Promise.race([http.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, TERMINATE_SESSION_MS).unref())]);
    }
    await this.client.close().catch(() => {});
  }
}

async function createTransport(spec: McpToolSpec): Promise<{ transport: StdioClientTransport | StreamableHTTPClientTransport; stderr: StderrTail | null }> {
  const s = spec.server;
  if (s.transport === "http") {
    const HttpTransport = await loadHttpTransport();
    const headers = Object.keys(s.headers).length ? { requestInit: { headers: s.headers } } : {};
    // tracedFetch sends each request's trace context (traceparent) on to the MCP server.
    return { transport: new HttpTransport(new URL(s.url), { ...headers, fetch: tracedFetch }), stderr: null };
  }
  const StdioTransport = await loadStdioTransport();
  const transport = new StdioTransport({ command: s.command, args: s.args, env: serverEnv(s.env), cwd: s.cwd, stderr: "pipe" });
  const tail = new StderrTail();
  // The SDK hands out the stderr stream before start(), so no early output is lost.
  const stream = transport.stderr as Readable | null;
  stream?.on("data", (chunk: Buffer) => tail.push(chunk));
  stream?.on("end", () => (tail.ended = true));
  stream?.on("error", () => (tail.ended = true));
  return { transport, stderr: tail };
}

async function drained(tail: StderrTail, transport: StdioClientTransport): Promise<void> {
  const stream = transport.stderr as Readable | null;
  if (!stream || tail.ended) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, STDERR_DRAIN_MS);
    timer.unref();
    stream.once("end", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const r = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

function startError(spec: McpToolSpec, e: unknown, stderr: string, timeoutMs: number): ToolError {
  const what = `MCP server '${spec.name}' (${serverLabel(spec)})`;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  let reason: string;
  let errorCode: "DEPENDENCY" | "PERMISSION" = "DEPENDENCY";
  if (code === "ENOENT" && spec.server.transport === "stdio" && !existsSync(spec.server.cwd)) {
    // spawn reports a missing working directory as ENOENT too; do not blame the executable.
    reason = `the working directory '${spec.server.cwd}' does not exist (cwd is relative to the YAML file's folder)`;
  } else if (code === "ENOENT" && spec.server.transport === "stdio") {
    const cmd = spec.server.command;
    reason = cmd.includes("/") || cmd.includes("\\") ? `the executable '${cmd}' does not exist` : `the executable '${cmd}' was not found on PATH`;
  } else if (code === "EACCES") {
    reason = `the executable is not executable (permission denied)`;
  } else if (mcpErrorCode(e) === MCP_ERROR.ConnectionClosed) {
    reason = "the server exited (or closed the connection) before completing the MCP handshake";
  } else if (mcpErrorCode(e) === MCP_ERROR.RequestTimeout) {
    reason = `the server did not complete the MCP handshake within ${timeoutMs} ms`;
  } else if (httpErrorStatus(e) === 401 || httpErrorStatus(e) === 403) {
    errorCode = "PERMISSION";
    reason = `the server answered HTTP ${httpErrorStatus(e)}; check the headers (credentials) in ${spec.source}`;
  } else {
    reason = errorMessage(e);
  }
  const stderrPart = stderr ? `; stderr: ${stderr}` : spec.server.transport === "stdio" ? " (no stderr output)" : "";
  return new ToolError({
    tool: spec.name,
    callable: null,
    code: errorCode,
    message: excerpt(redact(`${what} ${spec.server.transport === "stdio" ? "could not be started" : "could not be reached"}: ${reason}${stderrPart}`, spec.secrets), 4_000),
    ...(stderr ? { stderr } : {}),
  });
}
