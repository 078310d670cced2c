/**
 * RemoteExecutor: runs the agent's code in a session of a `ts-code-mode serve` instance. The
 * server's executor (subprocess, sandbox, container, ...) runs the code and its tools; the host
 * facade (tools, workflows, deps) is answered by the server too, so `new Session({ storage,
 * executor: new RemoteExecutor({ url, token }) })` works unchanged.
 *
 * Storage: the Session's storage must be the server's (a fleet shares one Redis prefix); start()
 * names it to the server, which refuses a mismatch instead of letting the facade and the agent see
 * different data. `shareStorage: true` sends the full descriptor for a server started with
 * --client-storage (trusted clients, e.g. tests on loopback).
 *
 * A session lives on the server that created it. When that server is gone, every call ends with a
 * SessionLostError (runs: in the result, with the output the run had already streamed), never a
 * hang: each request has a deadline.
 *
 * Tenants: `workspace` names the session's workspace on a server started with --workspace-header;
 * the header's name is read from the server's GET /info at start(), so the client never has to
 * repeat the server's configuration.
 */
import { z } from "zod";
import { continuationRun } from "../../runs/continuation.js";
import { ContinuationInvalidError } from "../../runs/errors.js";
import { lazy } from "../../lazy.js";
import { SessionLostError, ValidationError } from "../../errors.js";
import { validateWorkspaceId } from "../../storage/names.js";
import { formatSkillsCatalog } from "../../skills/library.js";
import { SerialQueue } from "../../serial-queue.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { UntrustedWorkflowPolicy } from "../../workflows/provenance.js";
import { DEFAULT_TIMEOUT_MS, parseOptions, timeoutSchema } from "../options.js";
import { MAX_STREAM_CHARS, OutputBuffer } from "../output.js";
import { cancelledError, onAbort, type OutputChunk } from "../output-stream.js";
import type { CapabilityReport, ExecutionResult, Executor, HostFacade, RunOptions } from "../protocol.js";
import { errorResult } from "../result.js";
import { RemoteClient } from "./client.js";
import { fromWire, toWire, type WireValue } from "./wire.js";

export interface RemoteExecutorOptions {
  /** Base URL of the server, e.g. http://10.0.0.5:8787. */
  url: string;
  /** The server's bearer token (omit only for a loopback server started with --no-auth). */
  token?: string;
  /** Timeout of a run that gives none; default 30 s. */
  defaultTimeoutMs?: number;
  /** Deadline of every request but a run's (a run's is its timeout plus this); default 30 s. */
  requestTimeoutMs?: number;
  /** Send the storage's full descriptor (its Redis URL and password, or folder) for a server started with --client-storage. */
  shareStorage?: boolean;
  /**
   * false: do not name the Session's storage to the server (no check that both are the same). Only
   * for callers that use run() alone, such as `ts-code-mode run --remote`. Default true.
   */
  checkStorage?: boolean;
  /**
   * The tenant's workspace on a server started with `--workspace-header NAME`: sent in that header
   * (read from the server at start()) with every request. The Session's storage must be that
   * workspace's too (e.g. `RedisStorage({ ..., workspaceId })`); the server checks.
   */
  workspace?: string;
  /** More headers for every request (a proxy's, tracing). Not authorization (use `token`) nor the ones HTTP itself sets. */
  headers?: Record<string, string>;
}

/** Headers the client sets itself, or that HTTP owns: refused in `headers`. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set(["authorization", "accept", "content-type", "content-length", "host", "connection", "transfer-encoding"]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

const optionsShape = lazy(() => ({
  url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL of a `ts-code-mode serve` server" }),
  token: z.string().min(1).optional(),
  defaultTimeoutMs: timeoutSchema.optional(),
  requestTimeoutMs: timeoutSchema.optional(),
  shareStorage: z.boolean().optional(),
  checkStorage: z.boolean().optional(),
  workspace: z.string().optional(),
  headers: z.record(z.string(), z.string().max(8_192)).optional(),
}));

const createdSchema = lazy(() => z.object({
  id: z.string().min(1).max(200),
  trust: z.enum(["trusted", "untrusted"]),
  capabilities: z.object({ capabilities: z.array(z.string()), notes: z.array(z.string()) }),
  exec: z.boolean().optional(),
}));
const infoSchema = lazy(() => z.object({ workspaceHeader: z.string().min(1).max(64).nullable() }));
const execResultSchema = lazy(() => z.object({ output: z.string(), exitCode: z.number(), truncated: z.boolean() }));
const resultSchema = lazy(() => z.object({
  ok: z.boolean(),
  wire: z.object({ json: z.string(), buffers: z.array(z.string()) }).optional(),
  display: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  error: z.object({ name: z.string(), message: z.string(), stack: z.string().optional() }).nullable(),
  durationMs: z.number(),
  // A durable server's run (serve --durable): how it ended, and a pause's calls and continuation.
  runId: z.string().max(200).optional(),
  status: z.enum(["completed", "failed", "paused"]).optional(),
  pending: z.array(z.object({ id: z.string().max(64), tool: z.string().max(1_024), callable: z.string().max(1_024).nullable(), args: z.unknown(), reason: z.string().max(10_000) })).max(10_000).optional(),
  continuation: z.string().max(4_096).optional(),
}));

export class RemoteExecutor implements Executor {
  readonly kind = "remote";
  private readonly client: RemoteClient;
  private readonly defaultTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly shareStorage: boolean;
  private readonly checkStorage: boolean;
  private readonly workspace: string | undefined;
  private readonly queue = new SerialQueue();
  private sessionId: string | null = null;
  private report: CapabilityReport = { capabilities: [], notes: ["RemoteExecutor: the capabilities are those of the server's executor, known after start()."] };
  private remoteTrust: "trusted" | "untrusted" = "untrusted";
  private lostReason: string | null = null;
  private closed = false;
  private facade: HostFacade | null = null;

  constructor(options: RemoteExecutorOptions) {
    const o = parseOptions(optionsShape, options, "RemoteExecutor");
    this.workspace = o.workspace === undefined ? undefined : validateOption(() => validateWorkspaceId(o.workspace));
    this.client = new RemoteClient(o.url.endsWith("/") ? o.url : `${o.url}/`, o.token, checkHeaders(o.headers ?? {}));
    this.defaultTimeoutMs = o.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
    this.shareStorage = o.shareStorage ?? false;
    this.checkStorage = o.checkStorage ?? true;
  }

  /** The server's executor's trust level (untrusted until start()). */
  get trust(): "trusted" | "untrusted" {
    return this.remoteTrust;
  }

  get host(): HostFacade | null {
    return this.facade;
  }

  /** The server's session id: route every request of this session to the server that holds it. */
  get id(): string | null {
    return this.sessionId;
  }

  capabilities(): CapabilityReport {
    return this.report;
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.sessionId !== null) return;
    if (this.workspace !== undefined) await this.nameWorkspace(this.workspace);
    const reply = createdSchema.parse(await this.client.request({ method: "POST", path: "sessions", json: this.checkStorage || this.shareStorage ? storageClaim(storage, this.shareStorage) : {}, timeoutMs: this.requestTimeoutMs }));
    this.sessionId = reply.id;
    this.remoteTrust = reply.trust;
    this.report = { capabilities: reply.capabilities.capabilities as CapabilityReport["capabilities"], notes: [`Runs on ${this.client.baseUrl} (session ${reply.id}).`, ...reply.capabilities.notes] };
    this.facade = this.createFacade();
  }

  /** Sends `workspace` in the header the server reads it from (its --workspace-header). */
  private async nameWorkspace(workspace: string): Promise<void> {
    const { workspaceHeader } = infoSchema.parse(await this.client.request({ method: "GET", path: "info", timeoutMs: this.requestTimeoutMs }));
    if (workspaceHeader === null) {
      throw new ValidationError(`RemoteExecutor: workspace ${JSON.stringify(workspace)} was given, but the server at ${this.client.baseUrl} has no workspaces; start it with --workspace-header X-Workspace, or drop workspace`);
    }
    const clash = Object.keys(this.client.headers).find((h) => h.toLowerCase() === workspaceHeader.toLowerCase());
    if (clash !== undefined) throw new ValidationError(`RemoteExecutor: headers.${clash} and workspace both name the workspace (the server reads it from ${workspaceHeader}); give one`);
    this.client.headers[workspaceHeader] = workspace;
  }

  /**
   * Runs a command where the server's executor can (its container), as `session.exec` does there:
   * through the server's shell tool and its middleware. A server whose executor cannot answers
   * NotSupportedError.
   */
  async exec(command: string | string[], options: { timeoutMs?: number; cwd?: string } = {}): Promise<{ output: string; exitCode: number; truncated: boolean }> {
    const json = { command, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}), ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) };
    // The command's own deadline on the server, plus the usual margin for the reply.
    return execResultSchema.parse(await this.call("POST", "exec", json, (options.timeoutMs ?? this.defaultTimeoutMs) + this.requestTimeoutMs));
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    // Runs share variables: two sent at once must reach the server in order, so they queue here.
    return this.queue.run(() => this.runNow(code, options));
  }

  private async runNow(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    if (this.closed) return errorResult({ name: "SessionClosedError", message: "The session is closed; create a new Session to run more code." }, startedAt);
    if (this.lostReason !== null || this.sessionId === null) return errorResult({ name: "SessionLostError", message: this.lostReason ?? "The remote session was not started." }, startedAt);
    if (options.signal?.aborted) return errorResult(cancelledError("It was cancelled before it started."), startedAt);
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    // The server stops the run at its timeout; the margin covers a restart of its executor.
    const stopListening = onAbort(options.signal, () => {
      void this.client.request({ method: "POST", path: `sessions/${this.sessionId}/cancel`, timeoutMs: this.requestTimeoutMs }).catch(() => undefined);
    });
    // Always streamed: if the server dies mid-run, what it already printed is kept in the result.
    const stdout = new OutputBuffer(MAX_STREAM_CHARS);
    const stderr = new OutputBuffer(MAX_STREAM_CHARS);
    const onOutput = (chunk: OutputChunk) => {
      (chunk.stream === "stdout" ? stdout : stderr).write(chunk.text);
      options.onOutput?.(chunk);
    };
    try {
      const reply = await this.client.request({ method: "POST", path: `sessions/${this.sessionId}/run`, json: { code, timeoutMs }, timeoutMs: timeoutMs + this.requestTimeoutMs, onOutput });
      return resultOf(reply);
    } catch (err) {
      const e = this.note(err);
      return errorResult({ name: e.name, message: e.message }, startedAt, { stdout: stdout.text(), stderr: stderr.text() });
    } finally {
      stopListening();
    }
  }

  /**
   * Goes on with a run this server (or any server sharing its storage and key) paused: POST
   * /runs/{id}/decisions in this session, so the server's session.resume replays the ledger.
   * Refusals throw with the server's stable names (ContinuationUsedError, DecisionError, ...), as a
   * local session.resume does; the server must run with serve --durable.
   */
  async resumeRun(continuation: string, decisions: readonly unknown[], options: RunOptions = {}): Promise<ExecutionResult> {
    const runId = continuationRun(continuation);
    if (runId === null) throw new ContinuationInvalidError("Not a continuation: expected the string a paused run returned (tcm1.<payload>.<signature>).");
    return this.queue.run(async () => {
      if (this.closed) throw new TypeError("The session is closed; create a new Session");
      if (this.lostReason !== null || this.sessionId === null) throw new SessionLostError(this.lostReason ?? "The remote session was not started.");
      const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
      const json = { continuation, decisions, timeoutMs, session: this.sessionId };
      try {
        const reply = await this.client.request({ method: "POST", path: `runs/${encodeURIComponent(runId)}/decisions`, json, timeoutMs: timeoutMs + this.requestTimeoutMs, ...(options.onOutput ? { onOutput: options.onOutput } : {}) });
        return resultOf(reply);
      } catch (err) {
        throw this.note(err);
      }
    });
  }

  async reset(): Promise<void> {
    await this.call("POST", "reset");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sessionId === null || this.lostReason !== null) return;
    await this.client.request({ method: "DELETE", path: `sessions/${this.sessionId}`, timeoutMs: this.requestTimeoutMs }).catch(() => undefined);
  }

  /** A request on this session; a lost session is remembered, so later calls fail at once. */
  private async call(method: "GET" | "POST" | "DELETE", sub: string, json?: unknown, timeoutMs = this.requestTimeoutMs): Promise<unknown> {
    if (this.closed) throw new TypeError("The session is closed; create a new Session");
    if (this.lostReason !== null) throw new SessionLostError(this.lostReason);
    if (this.sessionId === null) throw new TypeError("RemoteExecutor: start() first");
    try {
      return await this.client.request({ method, path: `sessions/${this.sessionId}/${sub}`, ...(json !== undefined ? { json } : {}), timeoutMs });
    } catch (err) {
      throw this.note(err);
    }
  }

  private note(err: unknown): Error {
    const e = err instanceof Error ? err : new Error(String(err));
    if (e instanceof SessionLostError) this.lostReason = e.message;
    return e;
  }

  private async dispatch(ns: string, op: string, args: readonly unknown[]): Promise<unknown> {
    const reply = (await this.call("POST", "call", { ns, op, args: toWire([...args], "data") })) as { value?: WireValue };
    if (!reply.value) throw new TypeError("the server's reply to a namespace call has no value");
    return fromWire(reply.value);
  }

  private createFacade(): HostFacade {
    const d = <T>(ns: string, op: string, ...args: unknown[]) => this.dispatch(ns, op, args) as Promise<T>;
    type F = HostFacade;
    const tools: F["tools"] = {
      list: () => d("tools", "list"),
      search: (query, options = {}) => d("tools", "search", query, options),
      describe: (name) => d("tools", "describe", name),
      call: (tool, callable, args) => d("tools", "call", tool, callable, args),
    };
    const workflows: F["workflows"] = {
      list: () => d("workflows", "list"),
      search: (query, options = {}) => d("workflows", "search", query, options),
      get: (name) => d("workflows", "get", name),
      create: (input) => d("workflows", "create", input),
      delete: (name) => d("workflows", "delete", name),
      // The index lives with the server's store; building it is the server's job.
      index: () => Promise.reject(new ValidationError("workflows index: the search index is built on the server; run `ts-code-mode workflows index` against its store")),
      approve: async (name, options = {}) =>
        ((await this.call("POST", `workflows/approve?name=${encodeURIComponent(name)}`, options.source !== undefined ? { source: options.source } : {})) as { value: never }).value,
      setUntrustedWorkflowPolicy: (policy: UntrustedWorkflowPolicy) => {
        // The server's sessions refuse untrusted workflows; a function cannot cross HTTP.
        if (policy !== "refuse") throw new TypeError("RemoteExecutor: untrustedWorkflows must be \"refuse\"; the server decides (approve workflows with session.approveWorkflow)");
      },
    };
    const skills: F["skills"] = {
      list: () => d("skills", "list"),
      // The catalog is formatted here from the server's list: the same text as on the server.
      catalog: async (format) => formatSkillsCatalog(await d("skills", "list"), format),
      // The guest's skills.load answers a subset (no frontmatter/trust/source); refuse rather than guess.
      load: () => Promise.reject(new ValidationError("loadSkill is not available through RemoteExecutor; agent code can call skills.load(name), or run `ts-code-mode skills show NAME` on the server")),
    };
    // describe goes through the server's dispatch, which answers in the server's guest language.
    return { tools, workflows, skills, dispatch: (ns, op, args) => this.dispatch(ns, op, args), language: "typescript" };
  }
}

/** An option's own validation error, as the executor's constructor reports it. */
function validateOption<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw new ValidationError(`Invalid RemoteExecutor options: workspace: ${(err as Error).message}`);
  }
}

function checkHeaders(headers: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new ValidationError(`Invalid RemoteExecutor options: headers: ${JSON.stringify(name)} is not an HTTP header name`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new ValidationError(`Invalid RemoteExecutor options: headers.${name} is set by RemoteExecutor itself${name.toLowerCase() === "authorization" ? " (give the server's token as token)" : ""}`);
    }
    // A line break would start another header (or end them).
    if (/[\r\n\0]/.test(value)) throw new ValidationError(`Invalid RemoteExecutor options: headers.${name} holds a line break`);
  }
  return { ...headers };
}

/** What the client says about its storage: which store it is (always), how to open it (shareStorage). */
function storageClaim(storage: StorageBackend, share: boolean): { storage?: Record<string, unknown> } {
  let d: Record<string, unknown>;
  try {
    d = storage.toDescriptor() as unknown as Record<string, unknown>;
  } catch {
    return {};
  }
  if (share) return { storage: d };
  // Without --client-storage the server only compares: its Redis URL (and password) stays here.
  const { url: _url, ...rest } = d;
  return { storage: rest };
}

/** A run's reply (POST run or decisions) as an ExecutionResult; a durable server's run keeps its status, pending calls and continuation. */
function resultOf(reply: unknown): ExecutionResult {
  const r = resultSchema.parse(reply);
  const durable = {
    ...(r.runId !== undefined ? { runId: r.runId } : {}),
    ...(r.status !== undefined ? { status: r.status } : {}),
    ...(r.pending !== undefined ? { pending: r.pending } : {}),
    ...(r.continuation !== undefined ? { continuation: r.continuation } : {}),
  };
  return { ok: r.ok, value: r.wire ? fromWire(r.wire as WireValue) : undefined, display: r.display, stdout: r.stdout, stderr: r.stderr, error: r.error, durationMs: r.durationMs, ...durable };
}
