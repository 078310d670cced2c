/** Agent projects written to a temp folder for a test. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export interface AgentDef {
  name: string;
  tools?: string[];
  description?: string;
  model?: string;
  input?: Record<string, unknown>;
  /** Agents its code may call (agents.*). */
  agents?: string[];
  output?: Record<string, unknown>;
  /** More frontmatter lines, as written. */
  frontmatter?: string[];
  body?: string;
}

export function agentFile(a: AgentDef): string {
  const lines = ["---", `name: ${a.name}`];
  if (a.description) lines.push(`description: ${JSON.stringify(a.description)}`);
  lines.push(`model: ${a.model ?? "openai:test-model"}`);
  if (!a.frontmatter?.some((l) => l.startsWith("tools:"))) lines.push(`tools: ${JSON.stringify(a.tools ?? [])}`);
  if (a.input) lines.push(`input: ${JSON.stringify(a.input)}`);
  if (a.agents) lines.push(`agents: ${JSON.stringify(a.agents)}`);
  if (a.output) lines.push(`output: ${JSON.stringify(a.output)}`);
  lines.push(...(a.frontmatter ?? []));
  lines.push("---", a.body ?? `You are ${a.name}.`, "");
  return lines.join("\n");
}

/** Writes project.json (config merged over a minimal one) and one file per agent; returns the folder. */
export async function writeProject(agents: AgentDef[], config: Record<string, unknown> = {}, extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-agents-"));
  const files = agents.map((a) => `${a.name}.agent.md`);
  const project = { version: 1, agents: files, entry: agents[0]!.name, approval_mode: "approve_all", ...config };
  await writeFile(path.join(dir, "project.json"), JSON.stringify(project, null, 2));
  for (const a of agents) await writeFile(path.join(dir, `${a.name}.agent.md`), agentFile(a));
  for (const [rel, text] of Object.entries(extra)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  return dir;
}

export async function removeProject(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * `project(...)` writes a project like writeProject and removes it after each test of the file
 * that calls this at its top level.
 */
export function projectsRemovedAfterEach(afterEach: (fn: () => Promise<void>) => void): typeof writeProject {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await removeProject(d);
  });
  return async (...args) => {
    const dir = await writeProject(...args);
    dirs.push(dir);
    return dir;
  };
}
