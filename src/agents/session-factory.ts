/**
 * The ts-code-mode Session an agent call's `code`, `tools` and `shell` toolsets use, unless the
 * embedding passes its own: FileStorage and tool YAML at project.json's `code_mode.base`, with the
 * executor it names (default subprocess), and the read-only skill folders it lists. Workflows and artifacts persist across calls and runs;
 * variables do not (each call gets its own executor).
 */
import path from "node:path";
import { InProcessExecutor } from "../execution/in-process/executor.js";
import type { Executor } from "../execution/protocol.js";
import { SandboxExecutor } from "../execution/sandbox/executor.js";
import { SubprocessExecutor } from "../execution/subprocess/executor.js";
import { Session } from "../session.js";
import { ExecutorPool } from "../execution/pool.js";
import { FileStorage } from "../storage/file/storage.js";
import type { Project } from "./files.js";

const EXECUTORS: Record<NonNullable<Project["config"]["code_mode"]["executor"]>, (toolsPath: string, skillRoots: string[]) => Executor> = {
  subprocess: (toolsPath, skillRoots) => new SubprocessExecutor({ toolsPath, skillRoots }),
  "in-process": (toolsPath, skillRoots) => new InProcessExecutor({ toolsPath, skillRoots }),
  sandbox: (toolsPath, skillRoots) => new SandboxExecutor({ toolsPath, skillRoots }),
};

export async function defaultSessionFactory(project: Project): Promise<Session> {
  const { base, make } = executorOf(project);
  return Session.fromBase(base, { executor: make() });
}

/** Where the project's sessions live and how their executor is made. */
function executorOf(project: Project): { base: string; make: () => Executor } {
  const base = path.resolve(project.dir, project.config.code_mode.base);
  const name = project.config.code_mode.executor ?? "subprocess";
  const tools = project.config.code_mode.tools ? path.resolve(project.dir, project.config.code_mode.tools) : path.join(base, "tools");
  const skillRoots = (project.config.code_mode.skills ?? []).map((p) => path.resolve(project.dir, p));
  return { base, make: () => EXECUTORS[name](tools, skillRoots) };
}

export interface PooledSessionFactory {
  /** A started session like defaultSessionFactory's, on a spare executor when one is ready. */
  create(project: Project): Promise<Session>;
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
  return {
    async create(project) {
      const { base, make } = executorOf(project);
      if (closed) return Session.fromBase(base, { executor: make() });
      if (pool && pool.project !== project) throw new Error("pooledSessionFactory: one factory serves one project");
      pool ??= { project, pool: new ExecutorPool(make, { spares, likelyStorage: new FileStorage({ basePath: base }) }) };
      return Session.fromBase(base, { executor: pool.pool.take() });
    },
    async close() {
      closed = true;
      await pool?.pool.close();
    },
  };
}
