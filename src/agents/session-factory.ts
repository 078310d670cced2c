/**
 * The ts-code-mode Session an agent call's `code`, `tools` and `shell` toolsets use, unless the
 * embedding passes its own: FileStorage and tool YAML at project.json's `code_mode.base`, with the
 * executor it names (default subprocess; any executor of the CLI, or a `serve` server through
 * `remote`), and the read-only skill folders it lists. Workflows and artifacts persist across calls
 * and runs; variables do not (each call gets its own executor).
 *
 * A `type: toolable` tool's sampling request (the tool asking for an LLM completion) made inside
 * the call's code is answered by the calling agent's model: the runtime hands each session a
 * sampler bound to its call (SessionContext).
 */
import path from "node:path";
import { ValidationError } from "../errors.js";
import { createExecutor, loadExecutor, sharedChildrenFor, type ContainerFlags } from "../execution/by-name.js";
import type { AgentsHost } from "../execution/host.js";
import { parseMountSpec, parseWorkspaceDir } from "../execution/container/mount-spec.js";
import type { Executor } from "../execution/protocol.js";
import { ExecutorPool } from "../execution/pool.js";
import { Session } from "../session.js";
import { FileStorage } from "../storage/file/storage.js";
import type { Sampler } from "../tools/adapters/toolable/host.js";
import type { Project } from "./files.js";
import { AgentFileError } from "./locate.js";

/** What the runtime gives a session it asks for: the call's own sampler and the agents its code may call. */
export interface SessionContext {
  /** Answers toolable sampling requests with the calling agent's model. */
  sampler?: Sampler;
  /** Serves agents.* in the session's code: child calls of the calling agent. */
  agents?: AgentsHost;
  /** Where `code_mode.remote.token_env` is read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * Record the session's runs in the base's run ledger so approvals pause them (Session's
   * `durable`, key from TS_CODE_MODE_RUNS_SECRET). A remote session needs none: a `serve
   * --durable` server records its runs and its pauses reach the session as they are.
   */
  durable?: boolean;
}

export async function defaultSessionFactory(project: Project, context: SessionContext = {}): Promise<Session> {
  const { base, make, remote } = await executorOf(project, context);
  const slot = new CallSlot();
  slot.fill(context);
  return Session.fromBase(base, { executor: make(slot), ...durableOption(context, remote) });
}

/**
 * Where a session's sampling requests and agents.* calls go. Executors take both when they are
 * made, but a pooled spare is made before the call it will serve is known: the executor gets the
 * slot's dispatchers, and the call fills the slot when it takes the executor.
 */
class CallSlot {
  private current: SessionContext = {};
  fill(context: SessionContext): void {
    this.current = context;
  }
  readonly sampler: Sampler = (request) => {
    if (!this.current.sampler) return Promise.reject(new Error("the tool asked for an LLM completion (sampling) and this session has no sampler"));
    return this.current.sampler(request);
  };
  readonly agents: AgentsHost = {
    list: () => this.current.agents?.list() ?? [],
    call: (name, args, ctx) => {
      if (!this.current.agents) return Promise.reject(new ValidationError(`agents.${name}: this agent lists no agents its code may call (agents: [...] in its file)`));
      return this.current.agents.call(name, args, ctx);
    },
  };
}

/**
 * code_mode's container keys, with workspace_dir and mounts checked as --workspace-dir and --mount
 * are (mount-spec.ts), host paths relative to project.json's folder.
 */
function containerFolders(project: Project): ContainerFlags {
  const config = project.config.code_mode;
  const resolve = (p: string) => path.resolve(project.dir, p);
  return {
    ...(config.image !== undefined ? { image: config.image } : {}),
    ...(config.network !== undefined ? { network: config.network } : {}),
    ...(config.workspace_dir !== undefined ? { workspace: parseWorkspaceDir(config.workspace_dir, "workspace_dir", resolve) } : {}),
    ...(config.mounts?.length ? { mounts: config.mounts.map((m, i) => parseMountSpec(m, `mounts[${i}]`, resolve)) } : {}),
  };
}

/** Where the project's sessions live and how their executor is made (its module loaded first). */
function durableOption(context: SessionContext, remote: boolean): { durable?: true } {
  return context.durable && !remote ? { durable: true } : {};
}

async function executorOf(project: Project, context: SessionContext): Promise<{ base: string; make: (slot: CallSlot) => Executor; remote: boolean }> {
  const config = project.config.code_mode;
  const base = path.resolve(project.dir, config.base);
  const name = config.executor ?? "subprocess";
  const toolsPath = config.tools ? path.resolve(project.dir, config.tools) : path.join(base, "tools");
  const skillRoots = (config.skills ?? []).map((p) => path.resolve(project.dir, p));
  if (name === "remote") return { base, make: await remoteMaker(project, context.env ?? process.env), remote: true };
  const language = config.language ?? "typescript";
  await loadExecutor(name, language);
  // sessions_per_child: the project's sessions (one per agent and caller) share these children.
  const sharedChild = sharedChildrenFor(config.sessions_per_child, undefined);
  const make = (slot: CallSlot): Executor => {
    try {
      return createExecutor(name, {
        toolsPath,
        skillRoots,
        language,
        toolable: { sampler: slot.sampler },
        agents: slot.agents,
        ...(config.engine !== undefined ? { engine: config.engine } : {}),
        ...(name === "container" ? { container: containerFolders(project) } : {}),
        ...(config.memory_mb !== undefined ? { memoryMb: config.memory_mb } : {}),
        ...(sharedChild ? { sharedChild } : {}),
      });
    } catch (err) {
      // createExecutor speaks in CLI flags; the user wrote project.json.
      if (err instanceof ValidationError) throw new AgentFileError(project.file, 1, `code_mode: ${err.message}`);
      throw err;
    }
  };
  return { base, make, remote: false };
}

/**
 * executor "remote": the code runs in a session of a `ts-code-mode serve` server, with that
 * server's executor, storage and sampler. The token is read from the variable `token_env` names,
 * so project.json (often committed) never holds it.
 */
async function remoteMaker(project: Project, env: NodeJS.ProcessEnv): Promise<(slot: CallSlot) => Executor> {
  const remote = project.config.code_mode.remote;
  if (!remote) throw new AgentFileError(project.file, 1, 'code_mode: executor "remote" needs remote: { url, token_env?, workspace? }');
  let token: string | undefined;
  if (remote.token_env !== undefined) {
    token = env[remote.token_env];
    if (!token) throw new AgentFileError(project.file, 1, `code_mode.remote: the environment variable ${remote.token_env} (the server's token) is not set`);
  }
  const { RemoteExecutor } = await import("../execution/remote/executor.js");
  // checkStorage false: the server's storage is the one the code uses (as with `run --remote`).
  return () => new RemoteExecutor({ url: remote.url, ...(token !== undefined ? { token } : {}), checkStorage: false, ...(remote.workspace !== undefined ? { workspace: remote.workspace } : {}) });
}

export interface PooledSessionFactory {
  /** A started session like defaultSessionFactory's, on a spare executor when one is ready. */
  create(project: Project, context?: SessionContext): Promise<Session>;
  /** Ends the spares; sessions already made belong to their agent calls. */
  close(): Promise<void>;
}

/**
 * defaultSessionFactory with warm starts, for a long-lived runner (`agent run --chat`): an
 * ExecutorPool keeps `spares` executors of the project's kind with their guest started, so an
 * agent call's first code run does not wait for a child process. Each spare serves one call's
 * session and is closed with it (variables never pass from one call to the next). The pool is
 * made on the first session, so a chat that never runs code starts no process.
 */
export function pooledSessionFactory(spares = 1): PooledSessionFactory {
  let pool: { project: Project; pool: ExecutorPool } | null = null;
  let closed = false;
  /** The sampler slot of each spare, filled when a call takes it. */
  const slots = new WeakMap<Executor, CallSlot>();
  return {
    async create(project, context = {}) {
      if (closed) return defaultSessionFactory(project, context);
      if (pool && pool.project !== project) throw new Error("pooledSessionFactory: one factory serves one project");
      const { base, make, remote } = await executorOf(project, context);
      pool ??= {
        project,
        pool: new ExecutorPool(
          () => {
            const slot = new CallSlot();
            const executor = make(slot);
            slots.set(executor, slot);
            return executor;
          },
          { spares, likelyStorage: new FileStorage({ basePath: base }) },
        ),
      };
      const executor = pool.pool.take();
      const slot = slots.get(executor);
      slot?.fill(context);
      return Session.fromBase(base, { executor, ...durableOption(context, remote) });
    },
    async close() {
      closed = true;
      await pool?.pool.close();
    },
  };
}
