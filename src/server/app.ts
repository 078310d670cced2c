/**
 * The hono app of `ts-code-mode serve`: the routes of schemas.ts over a SessionPool. Loaded only by
 * the serve command (hono stays out of every other command's start-up).
 *
 * Fail closed: every route but /health needs the bearer token (compared in constant time) unless
 * the server runs without one on loopback, where the Host header must name loopback too (a
 * DNS-rebinding page cannot reach it). Bodies are capped before they are read. Every failure is a
 * JSON body `{ error: { name, message } }` with the stable names of ExecutionResult.error.
 */
import type { HttpBindings } from "@hono/node-server";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";
import { streamSSE } from "hono/streaming";
import type { z } from "zod";
import { NotFoundError, SessionLostError, ValidationError } from "../errors.js";
import type { ExecutionResult, Executor, RunOptions } from "../execution/protocol.js";
import { continuationRun } from "../runs/continuation.js";
import { DecisionError, DurableRunsUnsupportedError } from "../runs/errors.js";
import { runDetail, runSummary } from "../runs/retention.js";
import { validateRunId, type RunStore } from "../storage/runs.js";
import { fromWire, plainJson, toWire } from "../execution/remote/wire.js";
import { toWireError } from "../execution/wire-error.js";
import { bearerMatches, loopbackRequestAllowed } from "../mcp/auth.js";
import { Session } from "../session.js";
import type { ArtifactData, StorageBackend, StorageDescriptor } from "../storage/protocol.js";
import { storageFromDescriptor } from "../storage/descriptor.js";
import { validateWorkspaceId } from "../storage/names.js";
import { openApiDocument } from "./openapi.js";
import { ROUTES, type RouteName } from "./schemas.js";
import { SessionPool, type SessionEntry } from "./sessions.js";
import { ExecutorPool } from "../execution/pool.js";
import { CONSOLE_PATH, mountConsole } from "../console/app.js";
import type { OutputChunk } from "../execution/output-stream.js";
import { traceServedRequest } from "../telemetry/server.js";
import { telemetryRegistered } from "../telemetry/api.js";

export interface ServerConfig {
  version: string;
  /** Bearer token; undefined only when serving loopback without auth. */
  token?: string;
  /** True when bound to loopback without a token: requests must then be addressed to loopback. */
  loopbackOnly: boolean;
  executorKind: string;
  createExecutor: () => Executor;
  /** Started executors kept ready for new sessions (ExecutorPool); default 1, 0 for none. */
  spareExecutors?: number;
  /** The server's storage (no workspace). */
  storage: StorageBackend;
  /** The storage of one tenant's workspace (--workspace-header); the session owns and closes it. */
  openWorkspace?: (workspaceId: string) => Promise<StorageBackend>;
  /** Header naming the tenant's workspace, lower case; null when workspaces are off. */
  workspaceHeader: string | null;
  /** --client-storage: a session may name its own storage (trusted clients only). */
  clientStorage: boolean;
  maxSessions: number;
  idleTimeoutMs: number;
  maxBodyBytes: number;
  /** serve --durable: sessions record their runs in the ledger, pause for approvals, resume through POST /runs/{id}/decisions. */
  durable?: boolean;
  log: (line: string) => void;
  /**
   * serve --console: the web console under /console (src/console/), reading and acting through
   * this session (on the server's storage; durable to answer approvals). The caller closes it.
   */
  consoleSession?: Session;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    override readonly name: string,
    message: string,
  ) {
    super(message);
  }
}

/** HTTP status for an error's stable name. */
const STATUS: Record<string, number> = {
  ValidationError: 400,
  InvalidNameError: 400,
  TypeError: 400,
  NotFoundError: 404,
  SessionLostError: 404,
  ToolError: 422,
  SessionLimitError: 429,
  StorageError: 502,
  DecisionError: 400,
  ContinuationInvalidError: 400,
  ContinuationScopeError: 403,
  ContinuationUsedError: 409,
  ContinuationExpiredError: 410,
  DurableRunsUnsupportedError: 501,
};

type Ctx = Context<{ Bindings: HttpBindings }>;

export function createApp(config: ServerConfig): { app: Hono<{ Bindings: HttpBindings }>; pool: SessionPool; executors: ExecutorPool } {
  const pool = new SessionPool(config.maxSessions, config.idleTimeoutMs, config.log);
  // Warm starts: a new session gets an executor whose child is already running (see execution/pool.ts).
  const executors = new ExecutorPool(config.createExecutor, { spares: config.spareExecutors ?? 1, likelyStorage: config.storage, log: config.log });
  const probe = config.createExecutor();
  const capabilities = probe.capabilities();
  const exec = canExec(probe);
  void probe.close();
  const app = new Hono<{ Bindings: HttpBindings }>();

  app.onError((err, c) => {
    const wire = toWireError(err);
    const status = err instanceof HttpError ? err.status : (STATUS[wire.name] ?? 500);
    if (status === 500) config.log(`error: ${err.stack ?? err.message}`);
    const details = err instanceof HttpError ? undefined : wire.details;
    return c.json({ error: { name: wire.name, message: wire.message, ...(details ? { details } : {}) } }, status as 400);
  });
  app.notFound((c) => c.json({ error: { name: "NotFoundError", message: `No route ${c.req.method} ${new URL(c.req.url).pathname}; see GET /openapi.json` } }, 404));

  // First: every request, refused ones included, is a SERVER span in the caller's trace (its traceparent).
  app.use("*", (c, next) =>
    !telemetryRegistered() ? next() : traceServedRequest({ method: c.req.method, path: c.req.path, header: (n) => c.req.header(n) }, async () => {
      await next();
      return { status: c.res.status, route: routePath(c, -1) };
    }),
  );
  app.use("*", async (c, next) => {
    if (config.loopbackOnly && !loopbackRequestAllowed(c.env.incoming)) {
      throw new HttpError(403, "ForbiddenError", "this server listens on loopback only; the request's Host (or Origin) does not name a loopback address");
    }
    const pathname = new URL(c.req.url).pathname;
    if (pathname === ROUTES.health.path) return next();
    // The console's guard (mounted below) takes the same token, as a bearer header or as the cookie it was traded for.
    if (config.consoleSession && (pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`))) return next();
    if (config.token !== undefined && !bearerMatches(c.req.header("authorization"), config.token)) {
      c.header("WWW-Authenticate", 'Bearer realm="ts-code-mode"');
      throw new HttpError(401, "UnauthorizedError", "missing or wrong bearer token: send Authorization: Bearer <token> (the --token the server was started with)");
    }
    return next();
  });
  app.use(
    "*",
    bodyLimit({
      maxSize: config.maxBodyBytes,
      onError: () => {
        throw new HttpError(413, "PayloadTooLargeError", `the request body is larger than ${config.maxBodyBytes} bytes (--max-body-bytes)`);
      },
    }),
  );

  const route = (name: RouteName, handler: (c: Ctx) => Promise<Response> | Response) => {
    const spec = ROUTES[name];
    app[spec.method](spec.path.replace(/\{(\w+)\}/g, ":$1"), handler);
  };

  /** The tenant of a request: the workspace header's value, validated; null when workspaces are off. */
  const workspaceOf = (c: Ctx): string | null => {
    if (config.workspaceHeader === null) return null;
    const value = c.req.header(config.workspaceHeader);
    if (value === undefined) throw new ValidationError(`the ${config.workspaceHeader} header is required: it names the tenant's workspace`);
    try {
      return validateWorkspaceId(value);
    } catch (err) {
      throw new ValidationError(`${config.workspaceHeader}: ${(err as Error).message}`);
    }
  };
  const entryOf = (c: Ctx): SessionEntry => {
    const entry = pool.get(c.req.param("id") ?? "", workspaceOf(c));
    if (!entry) throw new SessionLostError("no such session on this server: it was closed, timed out while idle, or lives on another server (route by session id), or the server restarted");
    return entry;
  };
  /** Runs `fn` on the request's session, keeping the idle timer off while it works. */
  const onSession = async <T>(c: Ctx, fn: (session: Session, entry: SessionEntry) => Promise<T>): Promise<T> => {
    const entry = entryOf(c);
    return pool.use(entry, () => fn(entry.session, entry));
  };
  const body = async <S extends z.ZodType>(c: Ctx, schema: S): Promise<z.infer<S>> => parse(schema, await jsonBody(c), "body");
  const query = <S extends z.ZodType>(c: Ctx, schema: S): z.infer<S> => parse(schema, c.req.query(), "query");
  const reply = (c: Ctx, value: unknown) => c.json({ value: plainJson(value) ?? null });
  /** A new session on the request's storage: the client's (--client-storage), its workspace's, or the server's. */
  const openSession = async (workspace: string | null, wanted: z.infer<typeof ROUTES.createSession.body>["storage"]): Promise<{ session: Session; ownedStorage: StorageBackend | null }> => {
    let ownedStorage: StorageBackend | null = null;
    if (wanted && config.clientStorage) ownedStorage = await storageFromDescriptor(wanted);
    else if (workspace !== null && config.openWorkspace) ownedStorage = await config.openWorkspace(workspace);
    if (wanted && !config.clientStorage) checkSameStorage(wanted, ownedStorage ?? config.storage);
    const session = new Session({
      storage: ownedStorage ?? config.storage,
      executor: ownedStorage ? config.createExecutor() : executors.take(),
      ...(config.durable ? { durable: true as const } : {}),
    });
    return { session, ownedStorage };
  };
  /** Runs `fn` on the run ledger of the request's storage (its workspace's with --workspace-header). */
  const withLedger = async <T>(c: Ctx, fn: (runs: RunStore) => Promise<T>): Promise<T> => {
    const workspace = workspaceOf(c);
    const storage = workspace !== null && config.openWorkspace ? await config.openWorkspace(workspace) : config.storage;
    try {
      if (!storage.runs) throw new DurableRunsUnsupportedError("this server's storage keeps no run ledger");
      return await fn(storage.runs);
    } finally {
      if (storage !== config.storage) await storage.close().catch(() => undefined);
    }
  };
  /**
   * Answers with a run's result: JSON, or with Accept: text/event-stream `output` events, a
   * `paused` event when the run paused, and the `result` event. A client that goes away cancels the
   * run (nobody is left to read its result). `after` runs once the answer is complete.
   */
  const respondWithRun = (c: Ctx, entry: SessionEntry, go: (options: RunOptions) => Promise<ExecutionResult>, timeoutMs: number | undefined, after: () => Promise<void> = async () => undefined): Promise<Response> => {
    const controller = new AbortController();
    const options: RunOptions = { signal: controller.signal, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
    const finish = (r: ExecutionResult) => ({ ...r, value: plainJson(r.value), wire: toWire(r.value) });
    if ((c.req.header("accept") ?? "").includes("text/event-stream")) {
      return Promise.resolve(streamSSE(c, async (stream) => {
        stream.onAbort(() => controller.abort());
        let writes = Promise.resolve();
        const send = (event: string, data: unknown) => {
          writes = writes.then(() => stream.writeSSE({ event, data: JSON.stringify(data) })).catch(() => undefined);
        };
        try {
          const onOutput = (chunk: OutputChunk) => {
            entry.feed.push(chunk);
            send("output", chunk);
          };
          const result = await pool.use(entry, () => runTracked(entry, controller, () => go({ ...options, onOutput })));
          if (result.status === "paused") send("paused", { runId: result.runId, pending: result.pending, continuation: result.continuation, display: result.display });
          send("result", finish(result));
          await writes;
        } finally {
          await after();
        }
      }));
    }
    return (async () => {
      const stopWatching = whenClientGone(c, () => controller.abort());
      try {
        // With the console on, the run's output also goes to its watchers (the sessions page).
        const watched = config.consoleSession ? { ...options, onOutput: (chunk: OutputChunk) => entry.feed.push(chunk) } : options;
        const result = await pool.use(entry, () => runTracked(entry, controller, () => go(watched)));
        return c.json(finish(result));
      } finally {
        stopWatching();
        await after();
      }
    })();
  };

  if (config.consoleSession) {
    mountConsole(app, {
      session: config.consoleSession,
      ...(config.token !== undefined ? { token: config.token } : {}),
      loopbackOnly: config.loopbackOnly,
      live: { executor: config.executorKind, list: () => pool.list() },
      log: config.log,
    });
  }

  route("health", (c) => c.json({ ok: true }));
  route("info", (c) =>
    c.json({
      name: "ts-code-mode",
      version: config.version,
      executor: config.executorKind,
      capabilities,
      exec,
      sessions: { open: pool.size, max: config.maxSessions, idleTimeoutS: config.idleTimeoutMs / 1000 },
      workspaceHeader: config.workspaceHeader,
      clientStorage: config.clientStorage,
    }),
  );
  const document = openApiDocument(config.version);
  route("openapi", (c) => c.json(document));

  route("createSession", async (c) => {
    const workspace = workspaceOf(c);
    const { storage: wanted } = await body(c, ROUTES.createSession.body);
    // A client that gives up while its session starts never learns the id: nobody could use or
    // close that session, so it is closed here instead of holding a child until --idle-timeout.
    let created: SessionEntry | null = null;
    let gone = false;
    const clientClosed = () => new HttpError(499, "ClientClosedError", "the client closed the connection while its session was being created; no session was kept");
    whenClientGone(c, () => {
      gone = true;
      config.log(`a client closed its connection before it got its new session's id; the session is closed${created ? "" : " once it has started"}`);
      if (created) void pool.close(created.id);
    });
    const entry = await pool.add(workspace, async () => {
      if (gone) throw clientClosed();
      return openSession(workspace, wanted);
    });
    created = entry;
    if (gone) {
      void pool.close(entry.id);
      throw clientClosed();
    }
    // For proxies that route by session id (examples/fleet/haproxy.cfg learns it from this header).
    c.header("X-Session-Id", entry.id);
    return c.json({ id: entry.id, executor: config.executorKind, trust: entry.session.trust, capabilities: entry.session.capabilities(), exec }, 201);
  });
  route("closeSession", async (c) => {
    const entry = entryOf(c);
    await pool.close(entry.id);
    return c.json({ ok: true });
  });

  route("run", async (c) => {
    const { code, timeoutMs } = await body(c, ROUTES.run.body);
    const entry = entryOf(c);
    return respondWithRun(c, entry, (options) => entry.session.run(code, options), timeoutMs);
  });
  route("cancel", (c) => {
    const entry = entryOf(c);
    entry.running?.abort();
    return c.json({ ok: true });
  });
  route("reset", (c) => onSession(c, async (s) => (await s.reset(), c.json({ ok: true }))));
  route("exec", async (c) => {
    const { command, timeoutMs, cwd } = await body(c, ROUTES.exec.body);
    return onSession(c, async (s) => {
      if (!canExec(s.executor)) throw new HttpError(501, "NotSupportedError", `the ${config.executorKind} executor cannot run commands (exec); the container executor can`);
      return c.json(await s.exec(command, { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(cwd !== undefined ? { cwd } : {}) }));
    });
  });
  route("call", async (c) => {
    const { ns, op, args } = await body(c, ROUTES.call.body);
    const decoded = fromWire(args);
    if (!Array.isArray(decoded)) throw new ValidationError("args must encode an array of arguments");
    return onSession(c, async (s) => c.json({ value: toWire(await s.dispatch(ns, op, decoded), "data") }));
  });

  route("listTools", (c) => onSession(c, async (s) => reply(c, await s.listTools())));
  route("searchTools", (c) => {
    const q = query(c, ROUTES.searchTools.query);
    return onSession(c, async (s) => reply(c, await s.searchTools(q.q, q.limit !== undefined ? { limit: q.limit } : {})));
  });
  route("describeTool", (c) => onSession(c, async (s) => reply(c, await s.describeTool(query(c, ROUTES.describeTool.query).name))));
  route("callTool", async (c) => {
    const { name } = query(c, ROUTES.callTool.query);
    const { callable, args } = await body(c, ROUTES.callTool.body);
    return onSession(c, async (s) => reply(c, await s.callTool(name, callable ?? null, args ?? {})));
  });
  route("listWorkflows", (c) => onSession(c, async (s) => reply(c, await s.listWorkflows())));
  route("searchWorkflows", (c) => {
    const q = query(c, ROUTES.searchWorkflows.query);
    return onSession(c, async (s) => reply(c, await s.searchWorkflows(q.q, q.limit !== undefined ? { limit: q.limit } : {})));
  });
  route("getWorkflow", (c) => onSession(c, async (s) => reply(c, await s.getWorkflow(query(c, ROUTES.getWorkflow.query).name))));
  route("createWorkflow", async (c) => {
    const input = await body(c, ROUTES.createWorkflow.body);
    return onSession(c, async (s) => reply(c, await s.addWorkflow(input.description !== undefined ? input : { name: input.name, source: input.source })));
  });
  route("deleteWorkflow", (c) => onSession(c, async (s) => reply(c, await s.removeWorkflow(query(c, ROUTES.deleteWorkflow.query).name))));
  route("invokeWorkflow", async (c) => {
    const { name } = query(c, ROUTES.invokeWorkflow.query);
    const { args } = await body(c, ROUTES.invokeWorkflow.body);
    // JSON is a JavaScript expression: name and args reach the code as literals, never as code.
    const code = `await workflows.invoke(${JSON.stringify(name)}, ${JSON.stringify(args ?? {})})`;
    return onSession(c, async (s) => {
      const r = await s.run(code);
      return c.json({ ...r, value: plainJson(r.value), wire: toWire(r.value) });
    });
  });
  route("approveWorkflow", async (c) => {
    const { name } = query(c, ROUTES.approveWorkflow.query);
    const { source } = await body(c, ROUTES.approveWorkflow.body);
    return onSession(c, async (s) => reply(c, await s.approveWorkflow(name, source !== undefined ? { source } : {})));
  });

  route("listArtifacts", (c) => onSession(c, async (s) => reply(c, await s.listArtifacts())));
  route("getArtifact", (c) => onSession(c, async (s) => reply(c, (await s.dispatch("artifacts", "get", [query(c, ROUTES.getArtifact.query).name])) ?? null)));
  route("loadArtifact", (c) =>
    onSession(c, async (s) => {
      const data = (await s.dispatch("artifacts", "load", [query(c, ROUTES.loadArtifact.query).name])) as ArtifactData;
      if (typeof data === "string") return c.body(data, 200, { "Content-Type": "text/plain; charset=utf-8", "X-Artifact-Kind": "text" });
      if (data instanceof Uint8Array) return c.body(new Uint8Array(data), 200, { "Content-Type": "application/octet-stream", "X-Artifact-Kind": "bytes" });
      return c.body(JSON.stringify(data), 200, { "Content-Type": "application/json", "X-Artifact-Kind": "json" });
    }),
  );
  route("saveArtifact", async (c) => {
    const { name } = query(c, ROUTES.saveArtifact.query);
    const type = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    let data: ArtifactData;
    if (type === "application/octet-stream") data = new Uint8Array(await c.req.arrayBuffer());
    else if (type === "text/plain") data = await c.req.text();
    else if (type === "application/json") data = (await jsonBody(c)) as ArtifactData;
    else throw new ValidationError(`Content-Type ${JSON.stringify(type)} is not accepted; use application/octet-stream (bytes), text/plain (text) or application/json (a JSON value)`);
    const description = c.req.header("x-artifact-description");
    const metadataHeader = c.req.header("x-artifact-metadata");
    let metadata: unknown;
    try {
      metadata = metadataHeader === undefined ? undefined : (JSON.parse(metadataHeader) as unknown);
    } catch {
      throw new ValidationError("X-Artifact-Metadata must be a JSON object");
    }
    const options = { ...(description !== undefined ? { description } : {}), ...(metadata !== undefined ? { metadata } : {}) };
    return onSession(c, async (s) => reply(c, await s.dispatch("artifacts", "save", [name, data, options])));
  });
  route("deleteArtifact", (c) => onSession(c, async (s) => reply(c, await s.deleteArtifact(query(c, ROUTES.deleteArtifact.query).name))));

  route("listDeps", (c) => onSession(c, async (s) => reply(c, await s.listDeps())));
  route("addDep", async (c) => {
    const { spec } = await body(c, ROUTES.addDep.body);
    return onSession(c, async (s) => reply(c, await s.addDep(spec)));
  });
  route("removeDep", (c) => onSession(c, async (s) => reply(c, await s.removeDep(query(c, ROUTES.removeDep.query).spec))));
  route("syncDeps", (c) => onSession(c, async (s) => reply(c, await s.syncDeps())));

  route("listRuns", (c) => {
    const { limit } = query(c, ROUTES.listRuns.query);
    return withLedger(c, async (runs) => c.json({ runs: (await runs.list(limit !== undefined ? { limit } : {})).map(runSummary) }));
  });
  route("getRun", (c) => {
    const id = validateRunId(c.req.param("id"));
    return withLedger(c, async (runs) => {
      const header = await runs.getHeader(id);
      if (!header) throw new NotFoundError(`no run ${id} in this server's ledger (pruned, or recorded on another storage); see GET /runs`);
      return c.json(runDetail(header, await runs.entries(id)));
    });
  });
  // Resumes through session.resume (the library's own code): any server sharing the storage and the key can.
  route("decideRun", async (c) => {
    const id = validateRunId(c.req.param("id"));
    const { continuation, decisions, timeoutMs, session: sessionId } = await body(c, ROUTES.decideRun.body);
    if (!config.durable) throw new DurableRunsUnsupportedError("this server's sessions do not record runs: start it with serve --durable (and the same TS_CODE_MODE_RUNS_SECRET on every server)");
    if (continuationRun(continuation) !== id) throw new DecisionError(`this continuation does not belong to run ${id}; send it to POST /runs/{its run id}/decisions`);
    const workspace = workspaceOf(c);
    if (sessionId !== undefined) {
      const entry = pool.get(sessionId, workspace);
      if (!entry) throw new SessionLostError(`no session ${sessionId} on this server; leave out "session" to resume in a session of the run's own`);
      return respondWithRun(c, entry, (options) => entry.session.resume(continuation, decisions, options), timeoutMs);
    }
    // A session of its own, on the request's storage, closed once the run is answered.
    const entry = await pool.add(workspace, () => openSession(workspace, undefined));
    return respondWithRun(c, entry, (options) => entry.session.resume(continuation, decisions, options), timeoutMs, async () => void (await pool.close(entry.id)));
  });

  return { app, pool, executors };
}

/** Executors that run commands (ContainerExecutor) have `exec`; Session.exec goes through their shell tool. */
function canExec(executor: Executor): boolean {
  return typeof (executor as { exec?: unknown }).exec === "function";
}

async function jsonBody(c: Ctx): Promise<unknown> {
  try {
    return await c.req.json();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new ValidationError("the request body must be JSON (Content-Type: application/json)");
  }
}

/**
 * Calls `onGone` once if the client closes the connection before the response was written out
 * (Node emits "close" on the response for a vanished client as well as for a finished response).
 * Returns a function that stops watching.
 */
function whenClientGone(c: Ctx, onGone: () => void): () => void {
  const outgoing = c.env.outgoing;
  const onClose = () => {
    if (!outgoing.writableFinished) onGone();
  };
  outgoing.once("close", onClose);
  return () => outgoing.off("close", onClose);
}

/** A run that POST cancel (or the client's disconnect) can stop. */
async function runTracked(entry: SessionEntry, controller: AbortController, run: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
  entry.running = controller;
  entry.feed.start();
  let summary = "failed: the run did not finish";
  try {
    const result = await run();
    summary = result.ok ? `finished in ${result.durationMs} ms` : `ended: ${result.error?.name ?? "error"}: ${(result.error?.message ?? "").slice(0, 300)}`;
    return result;
  } finally {
    entry.feed.end(summary);
    if (entry.running === controller) entry.running = null;
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as z.infer<S>;
  const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
  throw new ValidationError(`invalid request ${where}: ${problems}`);
}

/**
 * Without --client-storage, a client may only say which storage it expects: the server's own (or
 * its workspace's). A mismatch is refused, since the client's Session would otherwise read one
 * store through its facade and the agent another.
 */
function checkSameStorage(wanted: { type: string; basePath?: string; prefix?: string; workspaceId?: string | undefined }, actual: StorageBackend): void {
  const have = actual.toDescriptor() as StorageDescriptor & { basePath?: string; prefix?: string; workspaceId?: string };
  const same =
    wanted.type === have.type &&
    (wanted.type === "file" ? wanted.basePath === have.basePath : wanted.prefix === have.prefix) &&
    (wanted.workspaceId ?? null) === (have.workspaceId ?? null);
  if (!same) {
    const where = (d: typeof wanted) => (d.type === "file" ? `folder ${d.basePath ?? "?"}` : `Redis prefix ${d.prefix ?? "?"}`) + (d.workspaceId ? `, workspace ${d.workspaceId}` : "");
    throw new ValidationError(
      `this server serves ${where(have)}, not the session's ${where(wanted)}. Give the Session the same storage as the server, ` +
        "or start the server with --client-storage to let trusted clients name their own",
    );
  }
}
