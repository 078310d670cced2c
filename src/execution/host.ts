/**
 * HostServices: the host side of the four guest namespaces. Every executor routes every namespace
 * call through `dispatch(ns, op, args)` — the in-process executor directly, out-of-process
 * executors through the RPC provider — so validation, error wording and (later) tool middleware
 * are the same everywhere.
 *
 * Arguments arrive from agent code, so each operation checks its arguments here, at the boundary,
 * and fails with a ValidationError naming what was wrong and what is accepted. A failure's message
 * starts with `<ns>.<op>:` (e.g. `workflows.get: ...`), except a tool call's, which starts with the
 * call as the agent wrote it (`tools.nmapp.scan: Unknown tool: nmapp. Did you mean: nmap?`).
 *
 * Host work on those arguments is bounded whatever their shape: names and queries have a maximum
 * length, the arguments are walked once within CALL_ARGS_LIMITS (a DAG of 2^40 paths is refused,
 * not followed), and what calls hold — arguments and replies — counts toward the session's
 * in-flight byte limit (see in-flight.ts).
 */
import path from "node:path";
import { z } from "zod";
import { lazy } from "../lazy.js";
import { NotFoundError, ValidationError, closestNames, didYouMean, withMessage } from "../errors.js";
import type { ArtifactStore, StorageBackend } from "../storage/protocol.js";
import type { DepsService } from "../deps/service.js";
import type { ToolMiddleware } from "../tools/middleware/types.js";
import { PerRunCallLimit } from "../tools/middleware/builtins.js";
import type { CallContext, CommandPlace } from "../tools/protocol.js";
import { callLabel } from "../tools/validate.js";
import { callableSignature } from "../tools/describe.js";
import { SearchSetup, type SearchOptions } from "../search/config.js";
import { ToolRegistry } from "../tools/registry.js";
import type { CodeToolSet } from "../tools/code/tool-set.js";
import { ToolSessions } from "./tool-sessions.js";
import type { ToolableHostOptions } from "../tools/adapters/toolable/host.js";
import { WorkflowLibrary } from "../workflows/library.js";
import { SkillLibrary } from "../skills/library.js";
import { runArgsSchema, runSkillScript, skillFilesForRun } from "../skills/run.js";
import type { WorkflowPrincipal } from "../workflows/provenance.js";
import { describeCut } from "../values/explain.js";
import { CALL_ARGS_LIMITS } from "../values/limits.js";
import { walk } from "../values/walk.js";
import { InFlightBytes, type Lease } from "./in-flight.js";
import { withWriteDeadline } from "../storage/write-deadline.js";
import { prepareModule } from "./prepare.js";
import { traceNamespaceCall } from "../telemetry/calls.js";

export const NAMESPACES = ["tools", "workflows", "artifacts", "deps", "skills", "agents"] as const;
export type Namespace = (typeof NAMESPACES)[number];

export interface HostServicesOptions {
  storage: StorageBackend;
  /** Folder of tool YAML files; undefined or missing means no tools. */
  toolsPath?: string;
  /** A registry built elsewhere (tests, in-process adapters); wins over toolsPath. */
  tools?: ToolRegistry;
  /** Tools defined in code (the executors' `tools` option), registered beside the YAML tools. */
  codeTools?: CodeToolSet;
  /** Tool middleware, added to the registry (after any it already has). */
  middleware?: ToolMiddleware[];
  /**
   * Most tool calls (and tool sessions opened) one run may make; the next is a PERMISSION
   * ToolError. Counted here, before any middleware (what the agent's code asked for, not retries),
   * and without the middleware chain's cost on every call. Absent: no limit.
   */
  maxToolCallsPerRun?: number;
  /** Behind the `deps` namespace; absent: this executor cannot install packages. */
  deps?: DepsService;
  /** Without `deps`: why deps.add/remove/sync are refused, as the agent should read it ("{op}" is the operation). */
  depsUnavailable?: string;
  /** How tools.search / workflows.search rank (default: the built-in embedding model, offline). */
  search?: SearchOptions;
  /** The executor these services serve and its trust level: workflows it saves are recorded with it. Missing trust: untrusted. */
  origin: { kind: string; trust?: WorkflowPrincipal["trust"] | undefined; language?: "typescript" | "python" | undefined; runsCommands?: boolean | undefined; runSkill?: SkillRunner | undefined; place?: CommandPlace | undefined; skillLocation?: ((name: string, location: string) => string) | undefined };
  /** Read-only folders of Agent Skills merged after the storage's (later wins). */
  skillRoots?: readonly string[];
  /** Bytes the session's namespace calls may hold at once, arguments and replies together (default 256 MiB). */
  maxInFlightBytes?: number;
  /** Sampler and event listener of `type: toolable` tools (for a registry loaded here). */
  toolable?: ToolableHostOptions;
  /** Behind the `agents` namespace: the agents the code may call (an agent runtime's call). Absent: agents.* is refused. */
  agents?: AgentsHost;
}

/**
 * The agents guest code may call (`agents.analyst({ input })`), served host-side like tools: the
 * agent runtime answers each call as a child call of the agent whose code runs here.
 */
export interface AgentsHost {
  list(): Array<{ name: string; description: string }>;
  call(name: string, args: unknown, ctx: CallContext): Promise<unknown>;
}

/** Runs a checked skill script where the executor's code runs (ContainerExecutor: inside its container); returns stdout. */
export type SkillRunner = (skill: { name: string; files: Array<{ path: string; bytes: Uint8Array }> }, script: string, args: readonly string[], ctx: CallContext) => Promise<string>;

/** Longest tool, callable, workflow or artifact name, package spec or search query accepted. */
export const MAX_NAME_CHARS = 1_024;
export const MAX_QUERY_CHARS = 10_000;
/**
 * How long closing a session waits for its operations still running. Storage operations settle in
 * milliseconds (a timed-out run's writes are refused at its deadline); what could run longer is a
 * tool call that ignores the abort signal closing sends, and a close must not hang on it.
 */
const CLOSE_DRAIN_MS = 5_000;

/** The namespaces whose operations read and write the session's storage: close() waits for them. */
const STORAGE_NAMESPACES: ReadonlySet<string> = new Set(["artifacts", "workflows", "deps", "skills"]);

/** Longest property name anywhere in a call's arguments. */
export const MAX_ARG_KEY_CHARS = 1_024;

/**
 * A hook around every namespace call of a run (the run ledger, src/runs/). It returns null for a
 * call it does not take (a run it does not know); otherwise it answers the call itself, calling
 * `next` to run it for real (with arguments a reviewer may have edited). `call.ctx` is this call's
 * own object (RunBudget.callContext makes one per call), so the hook sets what it adds (`pause`,
 * `approved`) on it rather than copying it: a copy per call was the ledger's largest cost in a
 * container, whose every call passes here. Installed with `setRunHook`.
 */
export type RunHook = (
  call: { ns: string; op: string; args: readonly unknown[]; ctx: CallContext },
  next: RunHookNext,
) => Promise<{ value: unknown; release: () => void }> | null;

/**
 * Runs the call for real. With an observer, `observer.callEnded(token, ...)` is told how it ended
 * from within the call's own settlement, before the reply is handed on: the ledger logs a call
 * without a promise of its own per call (each costs microseconds under the write deadline's
 * promise hooks).
 */
export type RunHookNext = <T>(ctx: CallContext, args?: readonly unknown[], observer?: CallObserver<T>, token?: T) => Promise<{ value: unknown; release: () => void }>;

export interface CallObserver<T> {
  /** The call ended: its reply (`ok`) or what it failed with. Must not throw. */
  callEnded(token: T, ok: boolean, outcome: unknown): void;
}

type Handler = (host: HostServices, args: unknown[], ctx: CallContext, lease: Lease) => Promise<unknown>;

interface Operation {
  /** Argument list as agents write it, for messages: `search(query, { limit? })`. */
  usage: string;
  args: z.ZodType<unknown[]>;
  /**
   * The arguments `args` would accept, checked by hand, or undefined to let `args` decide (and word
   * the error). Only the operations on every tool call's path have one: the zod parse cost more
   * than the rest of the call's checks together.
   */
  quick?: (args: readonly unknown[]) => unknown[] | undefined;
  run: Handler;
}

const str = (what: string, max = MAX_NAME_CHARS) =>
  z
    .string({ error: `${what} must be a string` })
    .max(max, { error: (i) => `${what} is ${(i.input as string).length.toLocaleString("en-US")} characters long; at most ${max.toLocaleString("en-US")} are accepted` });
const limitOpts = lazy(() => z
  .strictObject({ limit: z.number({ error: "limit must be a number" }).int("limit must be an integer").min(1, "limit must be at least 1").optional() })
  .optional());

function op<T extends unknown[]>(usage: string, args: z.ZodType<T>, run: (host: HostServices, args: T, ctx: CallContext, lease: Lease) => Promise<unknown>, quick?: (args: readonly unknown[]) => T | undefined): Operation {
  return { usage, args: args as z.ZodType<unknown[]>, run: run as Handler, ...(quick ? { quick } : {}) };
}

/** A name `str(what)` accepts. */
const isName = (v: unknown): v is string => typeof v === "string" && v.length <= MAX_NAME_CHARS;

/**
 * Every operation a guest may call, by namespace. `workflows.invoke` runs guest-side on top of `workflows.load`.
 * Built on the first call (its zod schemas are not needed at import), then a plain object: every
 * namespace call reads it, so it is not behind lazy()'s proxy.
 */
let operationTable: Record<Namespace, Record<string, Operation>> | undefined;
const operations = (): Record<Namespace, Record<string, Operation>> => (operationTable ??= buildOperations());
const buildOperations = (): Record<Namespace, Record<string, Operation>> => ({
  tools: {
    list: op("list()", z.tuple([]), (h) => h.tools.list()),
    search: op("search(query, { limit? })", z.tuple([str("query", MAX_QUERY_CHARS)], limitOpts), (h, [q, o]) => h.tools.search(q, o ?? {})),
    describe: op("describe(name)", z.tuple([str("name")]), (h, [name]) => h.tools.describe(name, h.language)),
    // One tool's callables with their parameters: a Python guest's tools.<tool>.list() (py-code-mode's recipe listing).
    callables: op("callables(tool)", z.tuple([str("tool")]), async (h, [tool]) =>
      (await h.tools.info(tool)).callables.map((c) => ({ name: c.name, description: c.description, signature: callableSignature(c.name, c), params: c.params }))),
    call: op(
      "call(tool, callable | null, args)",
      z.tuple([str("tool"), str("callable").nullable(), z.unknown()]),
      (h, [tool, callable, args], ctx) => {
        h.toolCallLimit?.count(ctx.runId ?? "host", tool, callable);
        return h.tools.call(tool, callable, args, ctx);
      },
      // What the tuple accepts; anything else goes to zod for its message.
      (a): [string, string | null, unknown] | undefined => {
        const tool = a[0];
        const callable = a[1];
        return a.length === 3 && isName(tool) && (callable === null || isName(callable)) ? [tool, callable, a[2]] : undefined;
      },
    ),
    // Sessions with toolable session tools (guest side: tools.<tool>.<callable>.session(args)).
    session: op("session(tool, callable, args)", z.tuple([str("tool"), str("callable"), z.unknown()]), (h, [tool, callable, args], ctx) => {
      h.toolCallLimit?.count(ctx.runId ?? "host", tool, callable);
      return h.toolSessions.start(tool, callable, args, ctx);
    }),
    sessionSend: op("sessionSend(id, message)", z.tuple([str("id", 64), z.unknown()]), (h, [id, message]) => h.toolSessions.send(id, message)),
    sessionNext: op("sessionNext(id)", z.tuple([str("id", 64)]), (h, [id], ctx) => h.toolSessions.next(id, ctx)),
    sessionClose: op("sessionClose(id)", z.tuple([str("id", 64)]), (h, [id]) => h.toolSessions.close(id)),
  },
  workflows: {
    list: op("list()", z.tuple([]), (h) => h.workflows.list()),
    search: op("search(query, { limit? })", z.tuple([str("query", MAX_QUERY_CHARS)], limitOpts), (h, [q, o]) => h.workflows.search(q, o ?? {})),
    get: op("get(name)", z.tuple([str("name")]), (h, [name]) => h.workflows.get(name)),
    create: op("create({ name, source, description? })", z.tuple([z.unknown()]), (h, [input]) => h.workflows.create(input as never)),
    delete: op("delete(name)", z.tuple([str("name")]), (h, [name]) => h.workflows.delete(name)),
    /** What a guest needs to run a workflow: its compiled module and params. NotFoundError with suggestions. */
    load: op("load(name)", z.tuple([str("name")]), async (h, [name]) => {
      const { details: w, closedParams } = await h.workflows.forInvocation(name);
      // Each language runs only its own workflows, in its own interpreter.
      const language = w.language ?? "typescript";
      if (language !== h.language) {
        const [is, other] = language === "python" ? ["a Python", "TypeScript"] : ["a TypeScript", "Python"];
        throw new ValidationError(`workflows.invoke: workflow "${w.name}" is ${is} workflow; a ${other} session cannot run it. Run it from a ${language === "python" ? "Python" : "TypeScript"} session, or call the tools it uses directly.`);
      }
      if (language === "python") return { name: w.name, params: w.params, closedParams, language, source: w.source };
      return { name: w.name, params: w.params, closedParams, compiled: prepareModule(w.source, `${w.name}.ts`) };
    }),
  },
  artifacts: {
    save: op(
      "save(name, data, { description?, metadata? })",
      z.tuple([str("name"), z.unknown()], z.unknown()),
      (h, [name, data, options]) => h.artifacts.save(name, data as never, (options ?? undefined) as never),
    ),
    load: op("load(name)", z.tuple([str("name")]), async (h, [name], _ctx, lease) => {
      // The reply's size is held before the data is read, so parallel loads cannot pile up past the limit.
      const info = await h.artifacts.get(name);
      if (info) lease.reserve(info.size, `artifact ${JSON.stringify(name)}`);
      const data = await h.artifacts.load(name);
      if (data !== undefined) return data;
      const names = (await h.artifacts.list()).map((a) => a.name);
      throw new NotFoundError(`No artifact named ${JSON.stringify(name)}.${didYouMean(name, names)}`, closestNames(name, names));
    }),
    get: op("get(name)", z.tuple([str("name")]), (h, [name]) => h.artifacts.get(name)),
    list: op("list()", z.tuple([]), (h) => h.artifacts.list()),
    exists: op("exists(name)", z.tuple([str("name")]), (h, [name]) => h.artifacts.exists(name)),
    delete: op("delete(name)", z.tuple([str("name")]), (h, [name]) => h.artifacts.delete(name)),
  },
  deps: {
    list: op("list()", z.tuple([]), async (h) => (h.deps ? h.deps.list() : [])),
    add: op("add(spec)", z.tuple([str("spec")]), async (h, [spec]) => (h.deps ? h.deps.add(spec) : h.depsUnsupported("add"))),
    remove: op("remove(spec)", z.tuple([str("spec")]), async (h, [spec]) => (h.deps ? h.deps.remove(spec) : h.depsUnsupported("remove"))),
    sync: op("sync()", z.tuple([]), async (h) => (h.deps ? h.deps.sync() : h.depsUnsupported("sync"))),
  },
  agents: {
    list: op("list()", z.tuple([]), async (h) => h.agents?.list() ?? []),
    call: op("call(name, { input, attachments? })", z.tuple([str("name"), z.unknown()]), (h, [name, args], ctx) => {
      if (!h.agents) throw new ValidationError(`agents.${short(name)}: no agents can be called here; agents.* works in code run by an agent whose file lists them under agents: [...]`);
      return h.agents.call(name, args, ctx);
    }),
  },
  skills: {
    list: op("list()", z.tuple([]), (h) => h.skills.list()),
    search: op("search(query, { limit? })", z.tuple([str("query", MAX_QUERY_CHARS)], limitOpts), (h, [q, o]) => h.skills.search(q, o ?? {})),
    load: op("load(name)", z.tuple([str("name")]), async (h, [name]) => {
      const d = await h.skills.load(name);
      return { name: d.name, description: d.description, location: d.location, body: d.body, resources: d.resources };
    }),
    read: op(
      'read(name, path, { as?: "text" | "bytes" })',
      z.tuple([str("name"), str("path")], z.strictObject({ as: z.enum(["text", "bytes"], { error: 'as must be "text" or "bytes"' }).optional() }).optional()),
      (h, [name, p, o]) => h.skills.read(name, p, o ?? {}),
    ),
    create: op("create({ name, description, body, files? })", z.tuple([z.unknown()]), (h, [input]) => h.skills.create(input as never)),
    delete: op("delete(name)", z.tuple([str("name")]), (h, [name]) => h.skills.delete(name)),
    run: op("run(name, script, args)", z.tuple([str("name"), str("script")], runArgsSchema.optional()), async (h, [name, script, args], ctx) => {
      if (h.skillRunner) return h.skillRunner({ name, files: await skillFilesForRun(h.skills, name, script) }, script, args ?? [], ctx);
      if (!h.runsCommands) {
        throw new ValidationError(
          `this ${h.executorKind} executor cannot run commands, so it cannot run ${JSON.stringify(script)}; read the instructions with skills.load(name) and the script with skills.read(name, script), or use an executor that runs commands (SubprocessExecutor)`,
        );
      }
      return runSkillScript(h.skills, name, script, args ?? [], ctx);
    }),
  },
});

const DEFAULT_DEPS_UNAVAILABLE =
  'installing packages at run time is not supported by this executor (it lacks the "depsInstall" capability); cannot {op}. ' +
  "Packages already installed next to your project can be imported directly.";

export class HostServices {
  readonly tools: ToolRegistry;
  /** Live toolable sessions opened by guest code; executors call `toolSessions.endRun(runId)` when a run ends. */
  readonly toolSessions: ToolSessions;
  readonly workflows: WorkflowLibrary;
  readonly artifacts: ArtifactStore;
  readonly storage: StorageBackend;
  readonly toolsPath: string | undefined;
  readonly deps: DepsService | undefined;
  readonly skills: SkillLibrary;
  /** The executor can run host commands (skills.run). */
  readonly runsCommands: boolean;
  /** Where skills.run runs when not on the host (the container). */
  readonly skillRunner: SkillRunner | undefined;
  /** Where the guest's command-line tool calls run when not on the host (the container). */
  readonly commandPlace: CommandPlace | undefined;
  readonly executorKind: string;
  /** The agents this session's code may call (agents.*), when an agent runtime serves them. */
  agents: AgentsHost | undefined;
  /** HostServicesOptions.maxToolCallsPerRun, when set. */
  toolCallLimit: PerRunCallLimit | null = null;
  private depsUnavailable = DEFAULT_DEPS_UNAVAILABLE;
  private closed = false;
  private runHook: RunHook | null = null;
  /**
   * Storage operations started and not yet settled (a timed-out run's write may still be one).
   * Tool and agent calls are not counted: a call paused for a human's decision never settles.
   */
  private running = 0;
  /** Resolves close()'s wait once `running` is back to 0. */
  private onIdle: (() => void) | null = null;
  /** What this session's calls hold now (arguments and replies). */
  readonly inFlight: InFlightBytes;
  /** The guest's language: tools.describe answers in it. */
  readonly language: "typescript" | "python";

  private constructor(
    storage: StorageBackend,
    tools: ToolRegistry,
    toolsPath: string | undefined,
    deps: DepsService | undefined,
    search: SearchSetup,
    origin: HostServicesOptions["origin"] | undefined,
    maxInFlightBytes: number | undefined,
    skillRoots: readonly string[] | undefined,
  ) {
    this.inFlight = new InFlightBytes(maxInFlightBytes);
    this.language = origin?.language ?? "typescript";
    this.storage = storage;
    this.deps = deps;
    this.tools = tools;
    this.toolSessions = new ToolSessions(tools);
    this.toolsPath = toolsPath;
    // Fail closed: only an executor that says it runs trusted code gets a trusted principal.
    const principal: WorkflowPrincipal = { executor: origin?.kind ?? "unknown", trust: origin?.trust === "trusted" ? "trusted" : "untrusted" };
    this.workflows = new WorkflowLibrary(storage.workflows, { ranker: search.workflowsRanker(), principal });
    this.artifacts = storage.artifacts;
    this.skills = new SkillLibrary(storage.skills, { roots: skillRoots ?? [], ranker: search.skillsRanker(), principal, ...(origin?.skillLocation ? { location: origin.skillLocation } : {}) });
    this.runsCommands = origin?.runsCommands === true;
    this.skillRunner = origin?.runSkill;
    this.commandPlace = origin?.place;
    this.executorKind = origin?.kind ?? "unknown";
  }

  /**
   * Tool YAML files are read on the first tools.* operation, not here (ToolRegistry.deferred): a
   * broken file fails that operation with a ValidationError naming it.
   */
  static async create(options: HostServicesOptions): Promise<HostServices> {
    const toolsPath = options.toolsPath === undefined ? undefined : path.resolve(options.toolsPath);
    // A registry passed in keeps the ranker it was built with; one loaded here ranks semantically.
    const search = SearchSetup.create(options.storage, options.search);
    // A file base keeps what tools derive from their inputs beside its vectors (an OpenAPI spec's operation index).
    const indexDir = options.storage.basePath === undefined ? undefined : path.join(options.storage.basePath, "tool-index");
    const tools =
      options.tools ??
      ToolRegistry.deferred(toolsPath, { ranker: search.toolsRanker(toolsPath), ...(options.toolable ? { toolable: options.toolable } : {}), ...(indexDir !== undefined ? { indexDir } : {}) });
    if (options.middleware?.length) tools.use(...options.middleware);
    // A YAML tool of the same name fails the (deferred) load with both sources named.
    if (options.codeTools) await options.codeTools.registerInto(tools);
    // The model is not loaded here: it costs ~130 MiB and a worker thread, and most sessions never
    // search. The first search loads it (answering by words until it is ready, see SemanticRanker).
    const host = new HostServices(options.storage, tools, toolsPath, options.deps, search, options.origin, options.maxInFlightBytes, options.skillRoots);
    if (options.depsUnavailable) host.depsUnavailable = options.depsUnavailable;
    if (options.maxToolCallsPerRun !== undefined) host.toolCallLimit = new PerRunCallLimit(options.maxToolCallsPerRun);
    host.agents = options.agents;
    return host;
  }

  /**
   * Run one namespace operation. Throws an Error whose message starts with `<ns>.<op>:`; the
   * error keeps its `name` (ToolError, NotFoundError, ValidationError, InvalidNameError, ...).
   * `ctx` bounds tool calls: the executor passes the time left in the run and a signal that aborts
   * the call when the run is stopped. It is the call's own object (RunBudget.callContext makes one
   * per call): the host and the run ledger set fields on it (`place`, `pause`, `approved`).
   */
  async dispatch(ns: string, opName: string, args: readonly unknown[], ctx: CallContext = {}): Promise<unknown> {
    const { value, release } = await this.dispatchHeld(ns, opName, args, ctx);
    // In process the reply is the guest's from here on; nothing of it waits in the host.
    release();
    return value;
  }

  /**
   * `dispatch`, but the reply's bytes stay counted in flight until the caller, having handed the
   * reply to the guest (an IPC send, a copy into the sandbox), calls `release()`.
   */
  dispatchHeld(ns: string, opName: string, args: readonly unknown[], ctx: CallContext = {}): Promise<{ value: unknown; release: () => void }> {
    // Synchronously, before any await: the hook numbers calls in the order they arrived.
    const hooked = this.runHook?.({ ns, op: opName, args, ctx }, (c, a, observer, token) => this.dispatchTraced(ns, opName, a ?? args, c, observer, token));
    return hooked ?? this.dispatchTraced(ns, opName, args, ctx);
  }

  /** Sets (or with null removes) the hook every namespace call passes first: the run ledger's. */
  setRunHook(hook: RunHook | null): void {
    this.runHook = hook;
  }

  /** The one place every executor's namespace calls pass: their spans and metrics (no-ops without an SDK). */
  private dispatchTraced<T>(ns: string, opName: string, args: readonly unknown[], ctx: CallContext, observer?: CallObserver<T>, token?: T): Promise<{ value: unknown; release: () => void }> {
    return traceNamespaceCall(ns, opName, args, ctx, this.executorKind, (c) => this.dispatchNow(ns, opName, args, c, observer, token));
  }

  /**
   * Checks the call synchronously, then runs it; one `then` after the operation, not an async
   * function with an await (see RpcProvider.handle: each promise on this path costs twice under
   * the write deadline's promise hooks). The arguments stay counted until the operation settles.
   */
  private dispatchNow<T>(ns: string, opName: string, args: readonly unknown[], ctx: CallContext, observer?: CallObserver<T>, token?: T): Promise<{ value: unknown; release: () => void }> {
    // The names the error prefix quotes, as they were when the call arrived; the prefix itself is
    // only built for an error.
    const named = [args[0], args[1]] as const;
    const argsLease = this.inFlight.lease();
    const replyLease = this.inFlight.lease();
    /** A failure of the call, named as the agent wrote it; nothing is held for its reply. */
    const failure = (err: unknown): Error => {
      replyLease.release();
      const failed = withPrefix(err, messagePrefix(ns, opName, named));
      observer?.callEnded(token as T, false, failed);
      return failed;
    };
    let running: Promise<unknown>;
    try {
      if (this.closed) throw new ValidationError("the session is closed");
      const table = (operations() as Record<string, Record<string, Operation>>)[ns];
      if (!table) throw new NotFoundError(`Unknown namespace: ${short(ns)}. Available: ${NAMESPACES.join(", ")}`);
      const operation = Object.hasOwn(table, opName) ? table[opName] : undefined;
      if (!operation) {
        const names = Object.keys(table);
        throw new NotFoundError(`Unknown operation.${didYouMean(opName, names)} Available: ${names.join(", ")}`, closestNames(opName, names));
      }
      argsLease.reserve(measureArgs(args), "the arguments");
      const data = operation.quick?.(args) ?? parseArgs(ns, operation, args);
      // The guest's CLI tool calls run where the guest runs (a container session's container).
      // Set on the call's own context (see dispatchHeld), whose shape has the field already.
      if (this.commandPlace && !ctx.place) ctx.place = this.commandPlace;
      // Storage writes of the call never land after the run's deadline (a run that reported
      // TimeoutError has no ghost writes; storage/write-deadline.ts).
      running = withWriteDeadline(ctx.deadline, () => operation.run(this, data, ctx, replyLease));
    } catch (err) {
      argsLease.release();
      return Promise.reject(failure(err));
    }
    const counted = STORAGE_NAMESPACES.has(ns);
    if (counted) this.running++;
    return running.then(
      (value) => {
        if (counted) this.settled();
        argsLease.release();
        try {
          if (!replyLease.reserved) replyLease.reserve(walk(value, CALL_ARGS_LIMITS, { mode: "data" }).bytes, "the reply");
        } catch (err) {
          throw failure(err);
        }
        observer?.callEnded(token as T, true, value);
        return { value, release: () => replyLease.release() };
      },
      (err: unknown) => {
        if (counted) this.settled();
        argsLease.release();
        throw failure(err);
      },
    );
  }

  /** One operation settled; the last one lets a waiting close() go on. */
  private settled(): void {
    if (--this.running === 0 && this.onIdle) this.onIdle();
  }

  /** deps.add/remove/sync when this executor has no deps service. */
  depsUnsupported(what: string): never {
    throw new ValidationError(this.depsUnavailable.replace("{op}", what));
  }

  /**
   * Closes tool connections and waits (up to CLOSE_DRAIN_MS) for operations still running, so
   * nothing a run started — a storage write of a run that timed out, say, which its deadline
   * refuses but which still creates and removes its temporary file — happens after the session
   * closed. Storage belongs to the caller and stays open. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.toolSessions.closeAll();
    await Promise.all([this.tools.close(), this.drain()]);
  }

  /** Resolves once no operation is running, or after CLOSE_DRAIN_MS (a tool that ignores its abort signal). */
  private drain(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, CLOSE_DRAIN_MS);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.onIdle = done;
    });
  }
}

/**
 * `tools.call(tool, callable, args)` is what the guest proxies send for `tools.wc.lines(args)`:
 * its errors are labelled with what the agent wrote, not with the internal operation name.
 */
export function messagePrefix(ns: string, opName: string, args: readonly unknown[]): string {
  const [tool, callable] = args;
  // A name too long to accept is not quoted in the prefix either (the message says how long it is).
  const fits = (v: unknown) => typeof v === "string" && v.length <= MAX_NAME_CHARS;
  if (ns === "tools" && opName === "call" && fits(tool) && (fits(callable) || callable === null)) return callLabel(tool as string, callable as string | null);
  if (ns === "agents" && opName === "call" && fits(tool)) return `agents.${short(tool as string)}`;
  return `${short(ns)}.${short(opName)}`;
}

/** The arguments as `operation` accepts them, or a ValidationError listing what is wrong and the usage. */
function parseArgs(ns: string, operation: Operation, args: readonly unknown[]): unknown[] {
  const parsed = operation.args.safeParse([...args]);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => i.message).join("; ");
  throw new ValidationError(`${problems}. Usage: ${ns}.${operation.usage}`);
}

/**
 * Bytes the arguments hold (strings by length, binary data by byte length), after checking that
 * walking them is bounded: no more than CALL_ARGS_LIMITS values and depth, no key longer than
 * MAX_ARG_KEY_CHARS. Whatever consumes them next (a tool's JSON, an artifact's encoding) then is too.
 */
function measureArgs(args: readonly unknown[]): number {
  const report = walk(args, CALL_ARGS_LIMITS, { mode: "data", maxKey: MAX_ARG_KEY_CHARS });
  if (report.cut) throw new ValidationError(`the arguments are ${describeCut(args, report, CALL_ARGS_LIMITS)}; pass less, or save big data as an artifact and pass its name`);
  if (report.longKey) throw new ValidationError(`the arguments have a property name of ${report.longKey.length.toLocaleString("en-US")} characters at ${report.longKey.path}; at most ${MAX_ARG_KEY_CHARS} are accepted`);
  return report.bytes;
}

/** A guest-given name, short enough to quote in a message. */
function short(name: string): string {
  return typeof name === "string" && name.length > 100 ? `${name.slice(0, 100)}…` : String(name);
}

/** `err` with the call named first, as a new error: `err` may be shared (a cached load failure) and is never edited. */
function withPrefix(err: unknown, prefix: string): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  // Tool errors often name the call already (`tools.wc.lines: exit 1 ...`, `tools.math.fail failed: ...`).
  const named = e.message.startsWith(`${prefix}:`) || e.message.startsWith(`${prefix} `);
  return named ? e : withMessage(e, `${prefix}: ${e.message}`);
}
