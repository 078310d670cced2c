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
import type { Project } from "./files.js";

const EXECUTORS: Record<NonNullable<Project["config"]["code_mode"]["executor"]>, (toolsPath: string, skillRoots: string[]) => Executor> = {
  subprocess: (toolsPath, skillRoots) => new SubprocessExecutor({ toolsPath, skillRoots }),
  "in-process": (toolsPath, skillRoots) => new InProcessExecutor({ toolsPath, skillRoots }),
  sandbox: (toolsPath, skillRoots) => new SandboxExecutor({ toolsPath, skillRoots }),
};

export async function defaultSessionFactory(project: Project): Promise<Session> {
  const base = path.resolve(project.dir, project.config.code_mode.base);
  const name = project.config.code_mode.executor ?? "subprocess";
  const make = EXECUTORS[name];
  const tools = project.config.code_mode.tools ? path.resolve(project.dir, project.config.code_mode.tools) : path.join(base, "tools");
  const skillRoots = (project.config.code_mode.skills ?? []).map((p) => path.resolve(project.dir, p));
  return Session.fromBase(base, { executor: make(tools, skillRoots) });
}
