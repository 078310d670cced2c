/**
 * Serving MCP over Streamable HTTP at one path (default /mcp). Every MCP session (one client
 * connection, identified by the Mcp-Session-Id header) gets its own McpServer and its own
 * ts-code-mode Session, so agents never see each other's variables; storage is whatever the
 * `createSession` factory shares. Sessions end when the client sends DELETE, when the server
 * closes, when no request came for `idleTimeoutMs` (a client that left without DELETE must not keep
 * its executor's child process forever), or when `maxSessions` is reached and the least recently
 * used one is evicted. A session is not idle while one of its requests (a long run_code) is open.
 */
import { randomUUID } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Session } from "../session.js";
import { ClientApprovals } from "./approvals.js";
import { DroppedPosts } from "./dropped-posts.js";
import { authConfigProblem, bearerMatches, isLoopbackHost, loopbackRequestAllowed } from "./auth.js";
import { buildCodeModeServer, stderrLog, type CodeModeServerOptions } from "./server.js";
import type { McpLanguage } from "./schemas.js";
import { traceServedRequest } from "../telemetry/server.js";

export const DEFAULT_MCP_PATH = "/mcp";
export const DEFAULT_MAX_SESSIONS = 32;
/** Sessions with no request for this long are closed (15 minutes). */
export const DEFAULT_IDLE_TIMEOUT_MS = 900_000;

export interface HttpServeOptions extends Omit<CodeModeServerOptions, "otherLanguage"> {
  /** TCP port; 0 picks a free one (see `port` of the result). */
  port: number;
  /** Address to bind. Default 127.0.0.1. */
  host?: string;
  /** Bearer token every request must carry. Required for a non-loopback host unless `noAuth`. */
  token?: string;
  /** Serve a non-loopback host without a token. Never implied. */
  noAuth?: boolean;
  /**
   * A new, unstarted Session for each MCP session; the server closes it when the MCP session ends.
   * `approvals.approver` asks this session's client; put it in an `approval` middleware to use it.
   * A factory whose executors were built beforehand (an ExecutorPool's spares) returns the fresh
   * ClientApprovals it wired into that executor instead, with the session: that one is bound to the
   * client. It must be unbound and never given to another session.
   */
  createSession: (context: { approvals: ClientApprovals }) => Session | { session: Session; approvals: ClientApprovals };
  /** A second language for run_code, as in CodeModeServerOptions: its session is made per MCP session, on first use, and closed with it. */
  otherLanguage?: { language: McpLanguage; createSession: (context: { approvals: ClientApprovals }) => Session };
  /** Close an MCP session after this long without a request (default 15 minutes). */
  idleTimeoutMs?: number;
  /** MCP sessions kept at once (default 32); one more evicts the least recently used. */
  maxSessions?: number;
  /** Default /mcp. */
  path?: string;
}

export interface HttpServing {
  /** e.g. http://127.0.0.1:8765/mcp */
  url: string;
  port: number;
  /** Open MCP sessions. */
  sessionCount(): number;
  /** Closes every MCP session (and its Session) and stops listening. Idempotent. */
  close(): Promise<void>;
}

interface Entry {
  server: McpServer;
  /** Closes what the server made (the other language's session). */
  closeOwn: () => Promise<void>;
  transport: StreamableHTTPServerTransport;
  session: Session;
  lastUsed: number;
  /** Requests of this session still being answered (a long run_code is not idleness). */
  open: number;
  dropped: DroppedPosts;
}

/** Thrown before anything listens when the options would serve without protection. */
export class McpAuthConfigError extends Error {
  override readonly name = "McpAuthConfigError";
}

export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  // "[::1]" is how a URL writes it; listen() wants the bare address.
  const host = (options.host ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  const problem = authConfigProblem({ host, ...(options.token !== undefined ? { token: options.token } : {}), noAuth: options.noAuth === true });
  if (problem) throw new McpAuthConfigError(problem);
  const log = options.log ?? stderrLog;
  const mcpPath = options.path ?? DEFAULT_MCP_PATH;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const checkHost = isLoopbackHost(host);
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  if (!(Number.isFinite(idleTimeoutMs) && idleTimeoutMs >= 100)) throw new TypeError(`serveHttp: idleTimeoutMs must be at least 100 ms; got ${String(idleTimeoutMs)}`);
  const entries = new Map<string, Entry>();
  let closed = false;

  const endEntry = async (id: string, entry: Entry): Promise<void> => {
    if (entries.get(id) === entry) entries.delete(id);
    await entry.server.close().catch(() => undefined);
    await entry.closeOwn().catch((err: unknown) => log(`closing a session failed: ${String(err)}`));
    await entry.session.close().catch((err: unknown) => log(`closing a session failed: ${String(err)}`));
  };

  const evictIfFull = async (): Promise<void> => {
    while (entries.size >= maxSessions) {
      // Sessions answering a request right now go last: closing one would leave its client waiting.
      const all = [...entries];
      const idle = all.filter(([, e]) => e.open === 0);
      const [id, oldest] = (idle.length ? idle : all).reduce((a, b) => (b[1].lastUsed < a[1].lastUsed ? b : a));
      log(`${entries.size} MCP sessions open (the limit is ${maxSessions}); closing the least recently used one`);
      await endEntry(id, oldest);
    }
  };

  const sweepIdle = async (): Promise<void> => {
    const now = Date.now();
    for (const [id, entry] of [...entries]) {
      if (entry.open === 0 && now - entry.lastUsed >= idleTimeoutMs) {
        log(`closing MCP session ${id.slice(0, 8)}…: no request for ${Math.round((now - entry.lastUsed) / 1000)} s (--idle-timeout)`);
        await endEntry(id, entry);
      }
    }
  };
  // Checked a few times per idle period, so a session ends at most ~25% after its limit.
  const sweeper = setInterval(() => void sweepIdle().catch((err: unknown) => log(`closing idle sessions failed: ${String(err)}`)), Math.max(50, Math.min(idleTimeoutMs / 4, 60_000)));
  sweeper.unref();

  const startSession = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    await evictIfFull();
    const fresh = new ClientApprovals();
    const made = options.createSession({ approvals: fresh });
    const { session, approvals } = "session" in made && "approvals" in made ? made : { session: made, approvals: fresh };
    const { otherLanguage, ...serverOptions } = options;
    const { server, close: closeOwn } = buildCodeModeServer(session, {
      ...serverOptions,
      log,
      approvals,
      ...(otherLanguage ? { otherLanguage: { language: otherLanguage.language, createSession: () => otherLanguage.createSession({ approvals }) } } : {}),
    });
    let entry: Entry | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        entry = { server, closeOwn, transport, session, lastUsed: Date.now(), open: 0, dropped };
        entries.set(id, entry);
      },
    });
    server.server.onclose = () => {
      const id = transport.sessionId;
      if (entry && id !== undefined) void endEntry(id, entry);
    };
    await server.connect(transport);
    const dropped = new DroppedPosts(transport);
    await transport.handleRequest(req, res);
    // Not an initialize request: the transport answered 400 and nothing refers to this session.
    if (transport.sessionId === undefined || !entries.has(transport.sessionId)) {
      await server.close().catch(() => undefined);
      await closeOwn();
      await session.close();
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const pathname = new URL(req.url ?? "/", "http://localhost").pathname;
    if (pathname !== mcpPath) return sendJson(res, 404, { error: `Not found. The MCP endpoint is ${mcpPath}` });
    if (checkHost && !loopbackRequestAllowed(req)) {
      return sendJson(res, 403, { error: "Forbidden: this server only answers requests addressed to localhost" });
    }
    if (options.token !== undefined && !bearerMatches(req.headers.authorization, options.token)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="ts-code-mode"');
      return sendJson(res, 401, { error: "Unauthorized: send the server's token as Authorization: Bearer <token>" });
    }
    if (closed) return sendJson(res, 503, { error: "The server is shutting down" });
    const header = req.headers["mcp-session-id"];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const entry = entries.get(id);
      if (!entry) return sendJson(res, 404, rpcError(-32001, "Session not found: it ended (DELETE, --idle-timeout) or the server restarted; initialize a new one"));
      entry.lastUsed = Date.now();
      // A POST is open until its response ends (a run_code may take minutes); the standalone GET
      // stream stays open for as long as the client keeps it, so it does not count.
      if (req.method === "POST") {
        entry.open++;
        res.once("close", () => {
          entry.open--;
          entry.lastUsed = Date.now();
        });
        entry.dropped.watch(req, res);
      }
      return entry.transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return sendJson(res, 400, rpcError(-32000, "Bad Request: no Mcp-Session-Id header; start with an initialize POST"));
    return startSession(req, res);
  };

  const served = (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    handle(req, res).catch((err: unknown) => {
      log(`request failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      if (!res.headersSent) sendJson(res, 500, rpcError(-32603, "Internal error"));
      else res.end();
    });
  // Each request is a SERVER span in its caller's trace (traceparent); the MCP requests it carries are inside it.
  const httpServer = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    void traceServedRequest({ method: req.method ?? "GET", path, header }, async () => {
      await served(req, res);
      // The transport may answer after handleRequest returns (a response stream): the span lasts until the response ends.
      if (!res.writableEnded && !res.destroyed) await new Promise((resolve) => res.once("close", resolve));
      return { status: res.statusCode, route: path === mcpPath ? mcpPath : undefined };
    });
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(options.port, host, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  httpServer.on("error", (err) => log(`HTTP server error: ${err.message}`));
  const port = (httpServer.address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}${mcpPath}`,
    port,
    sessionCount: () => entries.size,
    close: () =>
      (closing ??= (async () => {
        closed = true;
        clearInterval(sweeper);
        await Promise.all([...entries].map(([id, entry]) => endEntry(id, entry)));
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          // Open SSE streams would keep close() waiting forever.
          httpServer.closeAllConnections();
        });
      })()),
  };
}

function rpcError(code: number, message: string): object {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}

function sendJson(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}
