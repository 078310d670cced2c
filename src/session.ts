/**
 * Session: storage + executor, and the host-side facade over the same data the agent's namespaces
 * see. `run()` never throws for a problem in the agent's code; misuse of the API by the host
 * program (no storage, an executor given as a string) throws a TypeError at once.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { NotFoundError, ValidationError } from "./errors.js";
import { SubprocessExecutor } from "./execution/subprocess/executor.js";
import { timeoutSchema } from "./execution/options.js";
import type { Capability, CapabilityReport, ExecutionResult, Executor, HostFacade, RunOptions } from "./execution/protocol.js";
import { isExecutor } from "./execution/protocol.js";
import { errorResult } from "./execution/result.js";
import { FileStorage } from "./storage/file/storage.js";
import type { ArtifactData, ArtifactInfo, SaveArtifactOptions, StorageBackend } from "./storage/protocol.js";
import { isStorageBackend } from "./storage/protocol.js";
import type { ToolListing } from "./tools/registry.js";
import { CodeToolSet, type CodeToolsInput } from "./tools/code/tool-set.js";
import type { DepEntry, InstallResult } from "./deps/service.js";
import type { SkillDetails, SkillSummary } from "./skills/library.js";
import type { CreateWorkflowInput, WorkflowDetails, WorkflowSummary } from "./workflows/library.js";
import type { TrustLevel, UntrustedWorkflowPolicy } from "./workflows/provenance.js";
import { DurableRuns, type DurableOptions, type RollbackReport } from "./runs/durable.js";
import type { Decision } from "./runs/recorder.js";
import { DurableRunsUnsupportedError } from "./runs/errors.js";
import { recordSessionClosed, recordSessionOpened } from "./telemetry/metrics.js";
import { traceRun } from "./telemetry/runs.js";

export interface SessionOptions {
  storage: StorageBackend;
  /** Default: a SubprocessExecutor with no tools (or with `tools`). */
  executor?: Executor;
  /**
   * Tools defined in code for the default executor: `[defineTool(...)]`, `{ weather: tool(...) }`,
   * `{ github: { createIssue } }`, an MCP client... (see SubprocessExecutorOptions.tools). With an
   * executor of your own, give them to it: `new SandboxExecutor({ tools })`.
   */
  tools?: CodeToolsInput;
  /**
   * When this session's executor is trusted and the agent runs a workflow an untrusted (sandbox)
   * session saved: "refuse" (default; UntrustedWorkflowError), or a function that sees the workflow
   * and returns true to approve it (re-recorded as trusted, as approveWorkflow does).
   */
  untrustedWorkflows?: UntrustedWorkflowPolicy;
  /**
   * Record every run in the storage's run ledger, so a call that needs a human's decision pauses
   * the run (`status: "paused"`, a signed `continuation`) instead of holding the process, and
   * `resume(continuation, decisions)` goes on in any process sharing the storage. `true`: the
   * defaults, with the key from TS_CODE_MODE_RUNS_SECRET. See docs/durable-runs.md.
   */
  durable?: DurableOptions | true;
}

export interface FromBaseOptions {
  /** Executor to use; default as for `new Session`. Give it `toolsPath: <base>/tools`: without one, fromBase refuses it when that folder exists. */
  executor?: Executor;
  /** Default timeout of runs, when the executor is created here. */
  defaultTimeoutMs?: number;
  /** Tools defined in code, beside the YAML tools of `<base>/tools` (for the executor created here; see SessionOptions.tools). */
  tools?: CodeToolsInput;
  /** As for `new Session`. */
  untrustedWorkflows?: UntrustedWorkflowPolicy;
  /** As for `new Session`: runs pause for approvals and resume from the base's run ledger. */
  durable?: DurableOptions | true;
}

export class Session {
  readonly storage: StorageBackend;
  readonly executor: Executor;
  private readonly untrustedWorkflows: UntrustedWorkflowPolicy;
  private readonly durableRuns: DurableRuns | null;
  private starting: Promise<void> | null = null;
  private closed = false;
  /** Counted in the open-sessions metric (started, not yet closed). */
  private counted = false;

  constructor(options: SessionOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError("new Session(options): options must be an object { storage, executor? }");
    }
    if (!isStorageBackend(options.storage)) {
      throw new TypeError(
        "new Session({ storage }): storage is required and must be a StorageBackend, e.g. new FileStorage({ basePath: './storage' })",
      );
    }
    if (typeof options.executor === "string") {
      throw new TypeError(
        `new Session({ executor }): executor must be an executor instance, not the string ${JSON.stringify(options.executor)}; ` +
          "e.g. new SubprocessExecutor({ toolsPath: './tools' })",
      );
    }
    if (options.executor !== undefined && !isExecutor(options.executor)) {
      throw new TypeError("new Session({ executor }): executor must implement start(), run() and close(), e.g. new SubprocessExecutor()");
    }
    if (options.tools !== undefined && options.executor !== undefined) {
      throw new TypeError("new Session({ tools }): tools go to the executor when you give one, e.g. new SubprocessExecutor({ tools }); Session's own tools option is for its default executor");
    }
    const policy = options.untrustedWorkflows ?? "refuse";
    if (policy !== "refuse" && typeof policy !== "function") {
      throw new TypeError('new Session({ untrustedWorkflows }): expected "refuse" or a function (workflow) => boolean | Promise<boolean>');
    }
    this.storage = options.storage;
    this.executor = options.executor ?? new SubprocessExecutor(options.tools !== undefined ? { tools: CodeToolSet.from(options.tools, "new Session({ tools })") } : {});
    this.untrustedWorkflows = policy;
    const durable = options.durable;
    if (durable !== undefined && durable !== true && (typeof durable !== "object" || durable === null)) {
      throw new TypeError("new Session({ durable }): expected true or an options object { secret?, continuationTtlMs?, ... }");
    }
    this.durableRuns = durable === undefined ? null : new DurableRuns(this.storage, this.executor, () => this.services(), durable === true ? {} : durable);
  }

  /** Whose code the executor runs; workflows this session saves are recorded with it. Undeclared: untrusted. */
  get trust(): TrustLevel {
    return this.executor.trust === "trusted" ? "trusted" : "untrusted";
  }

  /**
   * A started session on one folder: FileStorage at `base`, tool YAML from `base/tools`. The folder
   * is created if missing.
   */
  static async fromBase(base: string, options: FromBaseOptions = {}): Promise<Session> {
    if (typeof base !== "string" || base.length === 0) throw new TypeError("Session.fromBase(base): base must be a folder path");
    if (options.tools !== undefined && options.executor !== undefined) {
      throw new TypeError("Session.fromBase(base, { tools }): tools go to the executor when you give one, e.g. new SubprocessExecutor({ toolsPath, tools })");
    }
    const tools = options.tools === undefined ? undefined : CodeToolSet.from(options.tools, "Session.fromBase(base, { tools })");
    const storage = new FileStorage({ basePath: base });
    const executor =
      options.executor ??
      new SubprocessExecutor({
        toolsPath: path.join(storage.basePath, "tools"),
        ...(tools ? { tools } : {}),
        ...(options.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: options.defaultTimeoutMs } : {}),
      });
    const session = new Session({
      storage,
      executor,
      ...(options.untrustedWorkflows !== undefined ? { untrustedWorkflows: options.untrustedWorkflows } : {}),
      ...(options.durable !== undefined ? { durable: options.durable } : {}),
    });
    await session.start();
    const toolsFolder = path.join(storage.basePath, "tools");
    const host = session.executor.host;
    // An executor built on a registry of its own (the container's) has tools without a toolsPath.
    if (
      options.executor &&
      host &&
      "toolsPath" in host &&
      host.toolsPath === undefined &&
      statSync(toolsFolder, { throwIfNoEntry: false })?.isDirectory() &&
      (await host.tools.list()).length === 0
    ) {
      // Silently offering no tools would be worse than refusing: the folder says tools were meant.
      await session.close();
      throw new ValidationError(
        `Session.fromBase(${JSON.stringify(base)}): the executor given has no toolsPath, so the tools in ${toolsFolder} would be missing; ` +
          `create it with its toolsPath, e.g. new ${session.executor.constructor.name}({ toolsPath: ${JSON.stringify(toolsFolder)} })`,
      );
    }
    return session;
  }

  /**
   * Starts the executor. Safe to call more than once; run() starts it when needed. Tool files are
   * read on the first tools.* use (await listTools() to check them up front).
   */
  async start(): Promise<void> {
    if (this.closed) throw new TypeError("Session.start(): the session is closed; create a new Session");
    this.starting ??= this.executor
      .start(this.storage)
      // Before any run can reach it: the policy for untrusted workflows is the host's, not the executor's.
      .then(() => {
        this.executor.host?.workflows.setUntrustedWorkflowPolicy(this.untrustedWorkflows);
        this.counted = true;
        recordSessionOpened(this.executor.kind);
      })
      .catch((err: unknown) => {
        this.starting = null;
        throw err;
      });
    return this.starting;
  }

  /** Runs agent code. Resolves ok:false (never rejects) for any problem in the code or the session. */
  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return traceRun(this.executor.kind, this.language, code, () => this.runUntraced(code, options));
  }

  /** Known once started (a Python executor's guest speaks Python). */
  private readonly language = (): string => this.executor.host?.language ?? "typescript";

  private async runUntraced(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    if (this.closed) {
      return errorResult({ name: "SessionClosedError", message: "The session is closed; create a new Session to run more code." }, startedAt);
    }
    if (typeof code !== "string") {
      return errorResult({ name: "TypeError", message: `code must be a string of TypeScript or JavaScript; got ${typeof code}` }, startedAt);
    }
    if (options.timeoutMs !== undefined) {
      const t = timeoutSchema.safeParse(options.timeoutMs);
      if (!t.success) return errorResult({ name: "ValidationError", message: `timeoutMs ${t.error.issues[0]?.message ?? "is invalid"}; got ${String(options.timeoutMs)}` }, startedAt);
    }
    try {
      const starting = this.start();
      // The first run: its code is prepared while the guest starts (a fresh process's first result
      // waits for the guest's start-up, and the host is idle meanwhile).
      if (!this.counted) this.executor.prepareAhead?.(code);
      await starting;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      return errorResult({ name: e.name, message: `The session could not start: ${e.message}` }, startedAt);
    }
    if (!this.durableRuns) return this.executor.run(code, options);
    try {
      return await this.durableRuns.run(code, options);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      return errorResult({ name: e.name, message: e.message }, startedAt);
    }
  }

  /**
   * Goes on with a paused durable run: `continuation` is what the pause returned, `decisions` one
   * per pending call (`{ id, decision: "approve" | "edit" | "reject", args?, reason? }`). The code
   * runs again from the start; calls in the ledger are served from it, decided calls run as
   * decided. Resolves like run() (it may pause again). Refusals throw, with stable names:
   * ContinuationInvalidError (altered / not one), ContinuationScopeError (other workspace or
   * storage), ContinuationExpiredError, ContinuationUsedError (resumed already), DecisionError.
   * With a RemoteExecutor (no `durable` here) the server resumes it: it must run serve --durable.
   */
  async resume(continuation: string, decisions: readonly Decision[], options: RunOptions = {}): Promise<ExecutionResult> {
    if (this.closed) throw new TypeError("The session is closed; create a new Session");
    // A RemoteExecutor session: the run paused on a `serve --durable` server, which resumes it.
    const remote = this.executor as Executor & { resumeRun?: (c: string, d: readonly Decision[], o: RunOptions) => Promise<ExecutionResult> };
    if (!this.durableRuns && typeof remote.resumeRun === "function") {
      await this.start();
      return remote.resumeRun(continuation, decisions, options);
    }
    return this.durable().resume(continuation, decisions, options);
  }

  /**
   * Like resume(), for the paused run `runId` of this session's ledger, without its continuation
   * (the console answers approvals this way). The session's durable secret signs it; same refusals.
   */
  async resumeRun(runId: string, decisions: readonly Decision[], options: RunOptions = {}): Promise<ExecutionResult> {
    if (this.closed) throw new TypeError("The session is closed; create a new Session");
    return this.durable().resumeRun(runId, decisions, options);
  }

  /**
   * Undoes a durable run's applied tool calls, newest first, with each tool's `revert` declaration,
   * and records it in the ledger. Returns what was reverted, what failed, and what cannot be.
   */
  async rollback(runId: string): Promise<RollbackReport> {
    if (this.closed) throw new TypeError("The session is closed; create a new Session");
    return this.durable().rollback(runId);
  }

  private durable(): DurableRuns {
    if (!this.durableRuns) throw new DurableRunsUnsupportedError("This session does not record runs: create it with new Session({ storage, executor, durable: { secret } }).");
    return this.durableRuns;
  }

  /** Forgets the agent's variables; tools, workflows and artifacts remain. */
  async reset(): Promise<void> {
    if (this.closed) return;
    await this.start();
    await this.executor.reset();
  }

  /** Closes the executor (and its tool connections). Storage passed in by the caller stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.starting?.catch(() => undefined);
    if (this.counted) recordSessionClosed(this.executor.kind);
    await this.executor.close();
  }

  /** Whether runs are durable (the `durable` option): they pause for approvals and resume from the ledger. */
  get isDurable(): boolean {
    return this.durableRuns !== null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  capabilities(): CapabilityReport {
    return this.executor.capabilities();
  }

  supports(capability: Capability): boolean {
    return this.executor.capabilities().capabilities.includes(capability);
  }

  // ---- host facade: the same data as the guest namespaces --------------------------------------

  async listTools(): Promise<ToolListing[]> {
    return (await this.services()).tools.list();
  }

  async searchTools(query: string, options: { limit?: number } = {}): Promise<Array<ToolListing & { score: number }>> {
    return (await this.services()).tools.search(query, options);
  }

  /** TypeScript declaration (with JSDoc) of one tool, or Python stubs in a Python session. Throws NotFoundError with suggestions. */
  async describeTool(name: string): Promise<string> {
    const host = await this.services();
    return host.tools.describe(name, host.language);
  }

  /** Calls a tool from the host, as `tools.<tool>.<callable>(args)` would. */
  async callTool(tool: string, callable: string | null, args: Record<string, unknown> = {}): Promise<unknown> {
    return (await this.services()).tools.call(tool, callable, args);
  }

  async listWorkflows(): Promise<WorkflowSummary[]> {
    return (await this.services()).workflows.list();
  }

  /** Best matches first. While the semantic index is still being built, results carry `indexing: true`. */
  async searchWorkflows(query: string, options: { limit?: number } = {}): Promise<Array<WorkflowSummary & { score: number; indexing?: true }>> {
    return (await this.services()).workflows.search(query, options);
  }

  /**
   * Embeds every workflow not yet in the search index, with no deadline (what `ts-code-mode workflows
   * index` runs). Null when search is lexical (nothing to build).
   */
  async indexWorkflows(onProgress?: (indexed: number, total: number) => void): Promise<{ indexed: number; total: number } | null> {
    return (await this.services()).workflows.index(onProgress);
  }

  async getWorkflow(name: string): Promise<WorkflowDetails | null> {
    return (await this.services()).workflows.get(name);
  }

  async addWorkflow(input: CreateWorkflowInput): Promise<WorkflowDetails> {
    return (await this.services()).workflows.create(input);
  }

  async removeWorkflow(name: string): Promise<boolean> {
    return (await this.services()).workflows.delete(name);
  }

  /**
   * The host vouches for a workflow an untrusted (sandbox) session saved: it is re-recorded as
   * trusted, so trusted sessions run it. Review the source first; pass `{ source }` (what you
   * reviewed) to approve only that exact code. Agents cannot call this. Throws NotFoundError.
   */
  async approveWorkflow(name: string, options: { source?: string } = {}): Promise<WorkflowDetails> {
    return (await this.services()).workflows.approve(name, options);
  }

  async listArtifacts(): Promise<ArtifactInfo[]> {
    return this.storage.artifacts.list();
  }

  async saveArtifact(name: string, data: ArtifactData, options: SaveArtifactOptions = {}): Promise<ArtifactInfo> {
    return this.storage.artifacts.save(name, data, options);
  }

  /** The data; throws NotFoundError when there is no such artifact. */
  async loadArtifact(name: string): Promise<ArtifactData> {
    const data = await this.storage.artifacts.load(name);
    if (data === undefined) throw new NotFoundError(`No artifact named ${JSON.stringify(name)}`);
    return data;
  }

  async deleteArtifact(name: string): Promise<boolean> {
    return this.storage.artifacts.delete(name);
  }

  /** Configured packages: `{ name, spec, configured, installed }`. */
  async listDeps(): Promise<DepEntry[]> {
    return (await this.dispatch("deps", "list", [])) as DepEntry[];
  }

  /** Validates and installs a package, then adds it to the list. */
  async addDep(spec: string): Promise<InstallResult> {
    return (await this.dispatch("deps", "add", [spec])) as InstallResult;
  }

  /** Removes a package from the list (configuration only; the result says so). */
  async removeDep(spec: string): Promise<{ removed: boolean; note: string }> {
    return (await this.dispatch("deps", "remove", [spec])) as { removed: boolean; note: string };
  }

  /** Installs everything in the list that is not installed yet. */
  async syncDeps(): Promise<InstallResult> {
    return (await this.dispatch("deps", "sync", [])) as InstallResult;
  }

  /** The skills the agent sees (storage + read-only roots): `{ name, description, location }`. */
  async listSkills(): Promise<SkillSummary[]> {
    return (await this.services()).skills.list();
  }

  /** One skill: its instructions (`body`), resource paths and frontmatter. Throws NotFoundError. */
  async loadSkill(name: string): Promise<SkillDetails> {
    return (await this.services()).skills.load(name);
  }

  /**
   * The catalog for a system prompt: the spec's `<available_skills>` block (`format: "xml"`, the
   * default) or a Markdown list, values HTML-escaped; "" when there are no skills.
   */
  async skillsCatalog(options: { format?: "xml" | "markdown" } = {}): Promise<string> {
    return (await this.services()).skills.catalog(options.format ?? "xml");
  }

  /** Runs the same operation a guest call would, with the same checks and error wording. */
  async dispatch(ns: string, op: string, args: unknown[]): Promise<unknown> {
    return (await this.services()).dispatch(ns, op, args);
  }

  /**
   * Runs a shell command inside the executor's container (ContainerExecutor only): an argv array
   * as is, a string under /bin/sh -c inside the container. It goes through the `shell` tool, so
   * tool middleware (deny, approval, audit) sees it like the agent's own tools.shell.exec calls.
   * Through RemoteExecutor the server's session does exactly that, with the server's middleware.
   */
  async exec(command: string | string[], options: { timeoutMs?: number; cwd?: string } = {}): Promise<{ output: string; exitCode: number; truncated: boolean }> {
    const executor = this.executor as { exec?: (command: string | string[], options: { timeoutMs?: number; cwd?: string }) => Promise<{ output: string; exitCode: number; truncated: boolean }> };
    if (typeof executor.exec !== "function") {
      throw new ValidationError(`session.exec needs an executor that runs commands in a container (ContainerExecutor, or RemoteExecutor on a server that has one); this session's is ${this.executor.kind}`);
    }
    if (this.executor.kind === "remote") {
      await this.services();
      return executor.exec(command, options);
    }
    return (await this.callTool("shell", "exec", { command, ...options })) as { output: string; exitCode: number; truncated: boolean };
  }

  private async services(): Promise<HostFacade> {
    if (this.closed) throw new TypeError("The session is closed; create a new Session");
    await this.start();
    const host = this.executor.host;
    if (!host) throw new TypeError(`The ${this.executor.kind} executor exposes no host services after start()`);
    return host;
  }
}
