/**
 * Reading an agent project: `project.json` (version 1, strict) and the `*.agent.md` files it lists
 * (YAML frontmatter + Markdown instructions). Every mistake is an AgentFileError naming the file
 * and line; cross-file checks (duplicate names, unknown tools or agents, model strings, the entry)
 * run once all files are read, so `agent check` reports what `agent run` would refuse.
 */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { lazy } from "../lazy.js";
import { AgentFileError, locate, zodFileError, type Located } from "./locate.js";
import { BUILTIN_PROVIDERS } from "./models.js";

/** Toolsets an agent may name in `tools`, besides other agents. */
export const TOOLSET_NAMES = [
  "code",
  "tools",
  "filesystem_project",
  "filesystem_project_ro",
  "filesystem_cwd",
  "filesystem_cwd_ro",
  "shell_readonly",
  "shell",
  "skills",
] as const;
export type ToolsetName = (typeof TOOLSET_NAMES)[number];

/** Agent names become tool names, which model APIs restrict to these characters. */
const agentName = lazy(() => z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "expected a lower-case name of letters, digits, _ and - (at most 64), e.g. analyst"));
const modelString = lazy(() => z.string().regex(/^[a-z][a-z0-9_-]*:\S+$/, 'expected "provider:model", e.g. "openai:gpt-4o-mini" or "anthropic:claude-haiku-4-5"'));

const frontmatterSchema = lazy(() => z
  .object({
    name: agentName,
    description: z.string().min(1).max(2_000).optional(),
    model: modelString.optional(),
    tools: z.array(z.string().min(1)).max(64).default([]),
    input: z.record(z.string(), z.unknown()).optional(),
    max_steps: z.number().int().min(1).max(200).optional(),
  })
  .strict());

const providerSchema = lazy(() => z
  .object({
    base_url: z.url({ protocol: /^https?$/ }),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name").optional(),
  })
  .strict());

export const APPROVAL_MODES = ["prompt", "approve_all", "reject_all"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

const projectSchema = lazy(() => z
  .object({
    version: z.literal(1, { error: "expected version 1 (the only version of project.json)" }),
    agents: z.array(z.string().min(1)).min(1, "list at least one *.agent.md file"),
    code: z.array(z.string().min(1)).default([]),
    entry: z.string().min(1),
    model: modelString.optional(),
    approval_mode: z.enum(APPROVAL_MODES).default("prompt"),
    max_depth: z.number().int().min(1).max(50).default(5),
    agent_calls_need_approval: z.boolean().default(true),
    /** "return": a rejected or refused tool call is the tool's result, so the model can adapt; "fatal": it ends the run. */
    permission_errors: z.enum(["return", "fatal"]).default("return"),
    overrides: z
      .record(
        z.string(),
        z
          .object({
            model: modelString.optional(),
            max_steps: z.number().int().min(1).max(200).optional(),
            /** Tool name → whether a call needs approval, over the defaults. */
            needs_approval: z.record(z.string(), z.boolean()).optional(),
          })
          .strict(),
      )
      .default({}),
    providers: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), providerSchema).default({}),
    code_mode: z
      .object({
        /** Storage (workflows, artifacts) of the code toolset's session, relative to project.json. */
        base: z.string().min(1).default(".code-mode"),
        /** Folder of tool YAML files; default <base>/tools. */
        tools: z.string().min(1).optional(),
        /** Any executor of the CLI's --executor, or "remote" (a `ts-code-mode serve` server, see `remote`). */
        executor: z.enum(["subprocess", "in-process", "sandbox", "container", "remote"]).optional(),
        /** "python": run_code takes Python (executor subprocess → CPython, sandbox → Pyodide in deno). */
        language: z.enum(["typescript", "python"]).optional(),
        /** The sandbox's engine. */
        engine: z.enum(["quickjs", "deno"]).optional(),
        /** Container executor: image, network and memory cap (as --image, --network, --memory-mb). */
        image: z.string().min(1).max(300).optional(),
        network: z.enum(["none", "bridge"]).optional(),
        memory_mb: z.number().int().min(16).max(1_048_576).optional(),
        /** Container executor: a host folder (relative to project.json) mounted read-write at the same path inside, the workdir (as --workspace-dir). */
        workspace_dir: z.string().min(1).max(4_096).optional(),
        /** Container executor: "SRC:DST[:ro|rw]" mounts, SRC relative to project.json (as --mount). */
        mounts: z.array(z.string().min(1).max(8_192)).max(64).optional(),
        /** executor "remote": the server, the environment variable holding its token (never the token itself), the workspace. */
        remote: z
          .object({
            url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL of a `ts-code-mode serve` server" }),
            token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name").optional(),
            workspace: z.string().min(1).max(200).optional(),
          })
          .strict()
          .optional(),
        /** Read-only folders of Agent Skills (relative to project.json), after <base>/skills; a later one wins a name clash. */
        skills: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .superRefine((c, ctx) => {
        // Each executor-specific key is refused where it would be ignored, naming where it applies.
        const executor = c.executor ?? "subprocess";
        if ((executor === "remote") !== (c.remote !== undefined)) {
          ctx.addIssue({ code: "custom", path: ["remote"], message: executor === "remote" ? 'executor "remote" needs remote: { url, token_env?, workspace? }' : 'remote applies to executor "remote" only' });
        }
        for (const key of ["image", "network", "memory_mb", "workspace_dir", "mounts"] as const) {
          if (c[key] !== undefined && executor !== "container") ctx.addIssue({ code: "custom", path: [key], message: `${key} applies to executor "container" only` });
        }
        if (c.engine !== undefined && executor !== "sandbox") ctx.addIssue({ code: "custom", path: ["engine"], message: 'engine applies to executor "sandbox" only' });
        if (c.language === "python" && executor !== "subprocess" && executor !== "sandbox") {
          ctx.addIssue({ code: "custom", path: ["language"], message: 'language "python" runs with executor "subprocess" (CPython) or "sandbox" (Pyodide)' });
        }
      })
      .default({ base: ".code-mode" }),
  })
  .strict());

export type ProjectConfig = z.infer<typeof projectSchema>;

export interface AgentSpec {
  name: string;
  description: string;
  /** provider:model after the project default and overrides. */
  model: string;
  tools: string[];
  input?: Record<string, unknown>;
  maxSteps: number;
  instructions: string;
  file: string;
  /** Line of the `model` (or `name`) key, for runtime errors such as a missing API key. */
  modelLine: number;
}

export interface Project {
  /** Folder of project.json: relative paths resolve here; filesystem_project's root. */
  dir: string;
  file: string;
  config: ProjectConfig;
  agents: Map<string, AgentSpec>;
  entry: { kind: "agent"; name: string } | { kind: "code"; file: string; exportName: string };
}

export const DEFAULT_MAX_STEPS = 20;
/** Agent files larger than this are refused: instructions are sent with every request. */
const MAX_AGENT_FILE_BYTES = 256 * 1024;

/** A folder (its project.json) or a project.json path. */
export async function loadProject(target: string): Promise<Project> {
  let file = path.resolve(target);
  const info = await stat(file).catch(() => null);
  if (info === null) throw new AgentFileError(target, 1, "no such file or folder; give a project folder or its project.json");
  if (info.isDirectory()) file = path.join(file, "project.json");
  const dir = path.dirname(file);
  const text = await readFile(file, "utf8").catch(() => {
    throw new AgentFileError(file, 1, "cannot read project.json (create one with: ts-code-mode agent new NAME)");
  });
  const config = parseProjectJson(file, text);
  const where = locate(text);

  const agents = new Map<string, AgentSpec>();
  for (const [i, rel] of config.agents.entries()) {
    const agentFile = inside(dir, rel, file, where.lineOf(["agents", i]));
    const spec = await readAgentFile(agentFile, config);
    const seen = agents.get(spec.name);
    if (seen) throw new AgentFileError(agentFile, 2, `duplicate agent name ${JSON.stringify(spec.name)} (also in ${seen.file})`);
    agents.set(spec.name, spec);
  }
  await checkAgents(agents, config);
  for (const [name] of Object.entries(config.overrides)) {
    if (!agents.has(name)) throw new AgentFileError(file, where.lineOf(["overrides", name]), `overrides: unknown agent ${JSON.stringify(name)} (${known(agents)})`);
  }
  for (const [name] of Object.entries(config.providers)) {
    if ((BUILTIN_PROVIDERS as readonly string[]).includes(name)) {
      throw new AgentFileError(file, where.lineOf(["providers", name]), `providers: ${name} is built in; pick another name for an OpenAI-compatible endpoint`);
    }
  }
  for (const [i, rel] of config.code.entries()) inside(dir, rel, file, where.lineOf(["code", i]));
  return { dir, file, config, agents, entry: parseEntry(config, agents, dir, file, where) };
}

export function parseProjectJson(file: string, text: string): ProjectConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // Node 20's JSON.parse names no position; the YAML parser (JSON is YAML) finds the line.
    const pos = /position (\d+)/.exec(message);
    const line = pos ? text.slice(0, Number(pos[1])).split("\n").length : (locate(text).doc.errors[0]?.linePos?.[0]?.line ?? 1);
    throw new AgentFileError(file, line, `not valid JSON: ${message}`);
  }
  const parsed = projectSchema.safeParse(raw);
  if (!parsed.success) throw zodFileError(file, locate(text), parsed.error);
  return parsed.data;
}

/** A project-relative path that stays inside the project folder. */
function inside(dir: string, rel: string, file: string, line: number): string {
  const full = path.resolve(dir, rel);
  const back = path.relative(dir, full);
  if (back.startsWith("..") || path.isAbsolute(back)) throw new AgentFileError(file, line, `${JSON.stringify(rel)} is outside the project folder`);
  return full;
}

/** Where each parsed agent's frontmatter keys are, for the cross-file checks. */
const parsedAgents = new WeakMap<AgentSpec, Located>();

export async function readAgentFile(file: string, config: ProjectConfig): Promise<AgentSpec> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new AgentFileError(file, 1, "agent file not found");
  if (info.size > MAX_AGENT_FILE_BYTES) throw new AgentFileError(file, 1, `agent file is larger than ${MAX_AGENT_FILE_BYTES} bytes`);
  return parseAgentFile(file, await readFile(file, "utf8"), config);
}

export function parseAgentFile(file: string, text: string, config: ProjectConfig): AgentSpec {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== "---") throw new AgentFileError(file, 1, "expected YAML frontmatter starting with --- on the first line");
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (end < 0) throw new AgentFileError(file, 1, "frontmatter is not closed: add a line with --- after it");
  const yamlText = lines.slice(1, end).join("\n");
  const where = locate(yamlText, 2);
  if (where.doc.errors.length) {
    const e = where.doc.errors[0]!;
    throw new AgentFileError(file, (e.linePos?.[0]?.line ?? 1) + 1, `frontmatter is not valid YAML: ${e.message.split("\n")[0]}`);
  }
  const parsed = frontmatterSchema.safeParse(where.doc.toJS());
  if (!parsed.success) throw zodFileError(file, where, parsed.error);
  const fm = parsed.data;
  if (fm.input) {
    // The schema becomes the zod validator of the agent's tool input; one zod cannot build is refused here, not mid-run.
    try {
      z.fromJSONSchema(fm.input as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      throw new AgentFileError(file, where.lineOf(["input"]), `input is not a usable JSON Schema: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const override = config.overrides[fm.name];
  const model = override?.model ?? fm.model ?? config.model;
  if (model === undefined) throw new AgentFileError(file, where.lineOf(["name"]), `agent ${fm.name} has no model: add model: "provider:model" here or in project.json`);
  const spec: AgentSpec = {
    name: fm.name,
    description: fm.description ?? `The ${fm.name} agent.`,
    model,
    tools: fm.tools,
    ...(fm.input ? { input: fm.input } : {}),
    maxSteps: override?.max_steps ?? fm.max_steps ?? DEFAULT_MAX_STEPS,
    instructions: lines.slice(end + 1).join("\n").trim(),
    file,
    modelLine: where.lineOf(fm.model ? ["model"] : ["name"]),
  };
  parsedAgents.set(spec, where);
  return spec;
}

async function checkAgents(agents: Map<string, AgentSpec>, config: ProjectConfig): Promise<void> {
  const providers = [...BUILTIN_PROVIDERS, ...Object.keys(config.providers)];
  for (const agent of agents.values()) {
    const where = parsedAgents.get(agent);
    const lineOf = (p: PropertyKey[]) => where?.lineOf(p) ?? 1;
    for (const [i, name] of agent.tools.entries()) {
      if ((TOOLSET_NAMES as readonly string[]).includes(name) || agents.has(name)) continue;
      throw new AgentFileError(agent.file, lineOf(["tools", i]), `unknown tool ${JSON.stringify(name)}: not a toolset (${TOOLSET_NAMES.join(", ")}) nor an agent (${known(agents)})`);
    }
    if (new Set(agent.tools).size !== agent.tools.length) throw new AgentFileError(agent.file, lineOf(["tools"]), "a tool is listed twice");
    const provider = agent.model.slice(0, agent.model.indexOf(":"));
    if (!providers.includes(provider)) {
      throw new AgentFileError(agent.file, agent.modelLine, `unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(agent.model)} (known: ${providers.join(", ")}; add others under "providers" in project.json)`);
    }
  }
}

function parseEntry(config: ProjectConfig, agents: Map<string, AgentSpec>, dir: string, file: string, where: Located): Project["entry"] {
  const line = where.lineOf(["entry"]);
  const hash = config.entry.indexOf("#");
  if (hash < 0) {
    if (!agents.has(config.entry)) throw new AgentFileError(file, line, `entry: unknown agent ${JSON.stringify(config.entry)} (${known(agents)}; or a code function as "file.ts#export")`);
    return { kind: "agent", name: config.entry };
  }
  const rel = config.entry.slice(0, hash);
  const exportName = config.entry.slice(hash + 1);
  if (!/^[A-Za-z_$][\w$]*$/.test(exportName)) throw new AgentFileError(file, line, `entry: ${JSON.stringify(exportName)} is not an export name`);
  const full = inside(dir, rel, file, line);
  if (!config.code.some((c) => path.resolve(dir, c) === full)) throw new AgentFileError(file, line, `entry: ${rel} is not listed under "code"`);
  return { kind: "code", file: full, exportName };
}

function known(agents: Map<string, AgentSpec>): string {
  return agents.size ? `agents: ${[...agents.keys()].join(", ")}` : "no agents";
}
