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
import { ValidationError } from "../errors.js";
import { AgentFileError, locate, zodFileErrors, type Located } from "./locate.js";
import { BUILTIN_PROVIDERS } from "./models.js";
import { READONLY_COMMAND_NAMES } from "./toolsets/readonly-commands.js";
import type { AgentToolset } from "./code-toolsets.js";
import { APPROVAL_MODES, TOOLSET_NAMES } from "./names.js";

export type ToolsetName = (typeof TOOLSET_NAMES)[number];

/** Agent names become tool names, which model APIs restrict to these characters. */
const agentName = lazy(() => z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "expected a lower-case name of letters, digits, _ and - (at most 64), e.g. analyst"));
const modelString = lazy(() => z.string().regex(/^[a-z][a-z0-9_-]*:\S+$/, 'expected "provider:model", e.g. "openai:gpt-4o-mini" or "anthropic:claude-haiku-4-5"'));

const frontmatterSchema = lazy(() => z
  .object({
    name: agentName,
    description: z.string().min(1).max(2_000).optional(),
    model: modelString.optional(),
    /** Toolset and agent names; a toolset with options is written { name: { ...options } }. */
    tools: z.array(z.union([z.string().min(1), z.record(z.string(), z.record(z.string(), z.unknown()))])).max(64).default([]),
    input: z.record(z.string(), z.unknown()).optional(),
    /** Agents this agent's code may call as agents.<name>(...) (needs the code toolset). */
    agents: z.array(z.string().min(1)).max(64).default([]),
    /** JSON Schema of the answer: the model is asked for structured output, validated, and callers get the value. */
    output: z.record(z.string(), z.unknown()).optional(),
    max_steps: z.number().int().min(1).max(200).optional(),
  })
  .strict());

const providerSchema = lazy(() => z
  .object({
    base_url: z.url({ protocol: /^https?$/ }),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name").optional(),
  })
  .strict());

export type ApprovalMode = (typeof APPROVAL_MODES)[number];

const projectSchema = lazy(() => z
  .object({
    version: z.literal(1, { error: "expected version 1 (the only version of project.json)" }),
    agents: z.array(z.string().min(1)).min(1, "list at least one *.agent.md file"),
    code: z.array(z.string().min(1)).default([]),
    /** Modules of toolsets written in code (TypeScript loads without a build step); agents name their exports in tools. */
    toolsets: z.array(z.string().min(1)).max(100).default([]),
    entry: z.string().min(1),
    model: modelString.optional(),
    approval_mode: z.enum(APPROVAL_MODES).default("prompt"),
    max_depth: z.number().int().min(1).max(50).default(5),
    agent_calls_need_approval: z.boolean().default(true),
    /** Agent calls one run may make (tool calls to agents, agents.* from code and the code entry's), whatever the depth. */
    max_agent_calls: z.number().int().min(1).max(10_000).default(100),
    /** A code entry gets `tools` (the project's ts-code-mode tools) besides `agents`. */
    entry_tools: z.boolean().default(false),
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
        /**
         * Durable code runs: a call inside the code that needs approval pauses the run instead of
         * waiting; the runner asks (terminal, onApproval) and resumes, or ends with AgentRunPausedError
         * for `agent run --resume` later (docs/durable-runs.md). As `agent run --durable`.
         */
        durable: z.boolean().optional(),
        /** Read-only folders of Agent Skills (relative to project.json), after <base>/skills; a later one wins a name clash. */
        skills: z.array(z.string().min(1)).optional(),
        /** Executor "subprocess" (TypeScript): the project's agents' sessions share node children, up to this many to a child (as --sessions-per-child). */
        sessions_per_child: z.number().int().min(1).max(256).optional(),
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
        if (c.sessions_per_child !== undefined && (executor !== "subprocess" || c.language === "python")) {
          ctx.addIssue({ code: "custom", path: ["sessions_per_child"], message: 'sessions_per_child applies to executor "subprocess" with TypeScript only (several sessions in one node child)' });
        }
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
  /** Agents the code toolset's code may call (agents.*). */
  agents: string[];
  /** JSON Schema of the structured answer. */
  output?: Record<string, unknown>;
  /** Options of the toolsets written { name: { ... } } in `tools`, checked by toolsetOptionsSchema. */
  toolOptions: Record<string, ToolsetOptions>;
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
  /** Toolsets written in code, by export name (project.json `toolsets`). */
  toolsets: Map<string, AgentToolset>;
  entry: { kind: "agent"; name: string } | { kind: "code"; file: string; exportName: string };
}

export const DEFAULT_MAX_STEPS = 20;
/** Agent files larger than this are refused: instructions are sent with every request. */
const MAX_AGENT_FILE_BYTES = 256 * 1024;

/** What `agent run` may set over project.json. */
export interface LoadOptions {
  /** `--model provider:model`: the model of every agent, over their files and project.json. */
  model?: string;
  /** `--entry NAME`: the entry (an agent, or `file.ts#export` listed under code) instead of project.json's. */
  entry?: string;
}

/**
 * A folder (its project.json), a project.json path, or one `*.agent.md` file (a project of that
 * agent alone, with project.json's defaults). Throws the first problem; checkProject lists all.
 */
export async function loadProject(target: string, options: LoadOptions = {}): Promise<Project> {
  return (await load(target, options, null))!;
}

/** Every problem of project.json and of every agent file, at once (`agent check`); the project when there are none. */
export async function checkProject(target: string, options: LoadOptions = {}): Promise<{ project: Project | null; problems: AgentFileError[] }> {
  const problems: AgentFileError[] = [];
  const project = await load(target, options, problems).catch((err: unknown) => {
    if (!(err instanceof AgentFileError)) throw err;
    problems.push(...(err instanceof AgentFileProblems ? err.all : [err]));
    return null;
  });
  // Each file's problems together, by line: project.json first, then the files by name.
  const rank = (file: string) => (path.basename(file) === "project.json" ? "" : file);
  problems.sort((a, b) => rank(a.file).localeCompare(rank(b.file)) || a.line - b.line);
  return { project: problems.length ? null : project, problems };
}

/** Several problems of one file (all the issues of its frontmatter); its message is the first one's. */
export class AgentFileProblems extends AgentFileError {
  /** `spec`: what could be read of an agent file despite its problems, for the cross-file checks. */
  constructor(
    readonly all: AgentFileError[],
    readonly spec?: AgentSpec,
  ) {
    super(all[0]!.file, all[0]!.line, all[0]!.problem);
  }
}

async function load(target: string, options: LoadOptions, problems: AgentFileError[] | null): Promise<Project | null> {
  const report = (err: unknown): void => {
    if (!problems || !(err instanceof AgentFileError)) throw err;
    problems.push(...(err instanceof AgentFileProblems ? err.all : [err]));
  };
  if (options.model !== undefined && !modelString.safeParse(options.model).success) throw new ValidationError(`--model ${JSON.stringify(options.model)}: expected "provider:model", e.g. "openai:gpt-4o-mini"`);
  let file = path.resolve(target);
  const info = await stat(file).catch(() => null);
  if (info === null) throw new AgentFileError(target, 1, "no such file or folder; give a project folder, its project.json, or an .agent.md file");
  if (info.isFile() && file.endsWith(".agent.md")) return loadSingleAgent(file, options);
  if (info.isDirectory()) file = path.join(file, "project.json");
  const dir = path.dirname(file);
  const text = await readFile(file, "utf8").catch(() => {
    throw new AgentFileError(file, 1, "cannot read project.json (create one with: ts-code-mode agent new NAME)");
  });
  let config: ProjectConfig;
  try {
    config = parseProjectJson(file, text);
  } catch (err) {
    report(err);
    // Collecting: the agent files are still read, with project.json's defaults, so their problems show too.
    const raw = (() => {
      try {
        return JSON.parse(text) as { agents?: unknown; entry?: unknown };
      } catch {
        return null;
      }
    })();
    const listed = Array.isArray(raw?.agents) ? raw.agents.filter((a): a is string => typeof a === "string" && a !== "") : [];
    if (!listed.length) return null;
    config = projectSchema.parse({ version: 1, agents: listed, entry: typeof raw?.entry === "string" && raw.entry !== "" ? raw.entry : "-" });
  }
  if (options.entry !== undefined) config = { ...config, entry: options.entry };
  const where = locate(text);
  const toolsets = await loadToolsets(config, dir, file, where, report);

  const agents = new Map<string, AgentSpec>();
  for (const [i, rel] of config.agents.entries()) {
    try {
      const agentFile = inside(dir, rel, file, where.lineOf(["agents", i]));
      const spec = await readAgentFile(agentFile, config, options.model);
      const seen = agents.get(spec.name);
      if (seen) throw new AgentFileError(agentFile, 2, `duplicate agent name ${JSON.stringify(spec.name)} (also in ${seen.file})`);
      agents.set(spec.name, spec);
    } catch (err) {
      report(err);
      // Collecting: what was read of a file with problems still takes part in the cross-file checks.
      if (err instanceof AgentFileProblems && err.spec && !agents.has(err.spec.name)) agents.set(err.spec.name, err.spec);
    }
  }
  checkAgents(agents, config, report, toolsets);
  for (const [name] of Object.entries(config.overrides)) {
    if (!agents.has(name)) report(new AgentFileError(file, where.lineOf(["overrides", name]), `overrides: unknown agent ${JSON.stringify(name)} (${known(agents)})`));
  }
  for (const [name] of Object.entries(config.providers)) {
    if ((BUILTIN_PROVIDERS as readonly string[]).includes(name)) {
      report(new AgentFileError(file, where.lineOf(["providers", name]), `providers: ${name} is built in; pick another name for an OpenAI-compatible endpoint`));
    }
  }
  for (const [i, rel] of config.code.entries()) {
    try {
      inside(dir, rel, file, where.lineOf(["code", i]));
    } catch (err) {
      report(err);
    }
  }
  // An entry project.json did not give (it could not be read) is not checked a second time.
  if (config.entry === "-") return null;
  try {
    return { dir, file, config, agents, toolsets, entry: parseEntry(config, agents, dir, file, where, options.entry !== undefined) };
  } catch (err) {
    report(err);
    return null;
  }
}

/** `agent run file.agent.md`: the agent alone, project.json's defaults, its folder as the project folder. */
async function loadSingleAgent(file: string, options: LoadOptions): Promise<Project> {
  const base = projectSchema.parse({ version: 1, agents: [path.basename(file)], entry: "-" });
  const spec = await readAgentFile(file, base, options.model);
  if (options.entry !== undefined && options.entry !== spec.name) throw new ValidationError(`--entry ${options.entry}: ${path.basename(file)} holds one agent, ${spec.name}`);
  const agents = new Map([[spec.name, spec]]);
  const config = { ...base, entry: spec.name };
  checkAgents(agents, config, (err) => {
    throw err;
  });
  return { dir: path.dirname(file), file, config, agents, toolsets: new Map(), entry: { kind: "agent", name: spec.name } };
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
  if (!parsed.success) throw new AgentFileProblems(zodFileErrors(file, locate(text), parsed.error));
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

export async function readAgentFile(file: string, config: ProjectConfig, modelOverride?: string): Promise<AgentSpec> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new AgentFileError(file, 1, "agent file not found");
  if (info.size > MAX_AGENT_FILE_BYTES) throw new AgentFileError(file, 1, `agent file is larger than ${MAX_AGENT_FILE_BYTES} bytes`);
  return parseAgentFile(file, await readFile(file, "utf8"), config, modelOverride);
}

export function parseAgentFile(file: string, text: string, config: ProjectConfig, modelOverride?: string): AgentSpec {
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
  // Every problem of the file is collected (agent check shows them at once); the keys that are
  // valid still go through the later checks and, as a spec, through the cross-file ones.
  const problems: AgentFileError[] = [];
  const raw: unknown = where.doc.toJS();
  let parsed = frontmatterSchema.safeParse(raw);
  const broken = new Set<string>();
  if (!parsed.success) {
    // Toolset options written as a top-level key (shell_readonly: {...}) get the form that works.
    const hint = (e: AgentFileError) => {
      const key = /^unknown key "(.+)"$/.exec(e.problem)?.[1];
      return key && Object.hasOwn(toolsetOptionsSchemas, key) ? new AgentFileError(file, e.line, `unknown key "${key}": a toolset's options go in its tools entry, tools: [{ ${key}: { ... } }]`) : e;
    };
    problems.push(...zodFileErrors(file, where, parsed.error).map(hint));
    for (const issue of parsed.error.issues) {
      if (issue.code === "unrecognized_keys" && issue.path.length === 0) issue.keys.forEach((k) => broken.add(k));
      else if (issue.path.length) broken.add(String(issue.path[0]));
    }
    const rest = raw && typeof raw === "object" ? Object.fromEntries(Object.entries(raw).filter(([k]) => !broken.has(k))) : raw;
    parsed = frontmatterSchema.safeParse(rest);
    if (!parsed.success) throw new AgentFileProblems(problems);
  }
  const fm = parsed.data;
  const { names: tools, options: toolOptions } = readTools(file, where, fm.tools, problems);
  for (const key of ["input", "output"] as const) {
    const schema = fm[key];
    if (!schema) continue;
    // The schema becomes a zod validator (of the agent's tool input, of its answer); one zod cannot build is refused here, not mid-run.
    try {
      z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      problems.push(new AgentFileError(file, where.lineOf([key]), `${key} is not a usable JSON Schema: ${err instanceof Error ? err.message : String(err)}`));
      continue;
    }
    if (key === "output" && schema["type"] !== "object") problems.push(new AgentFileError(file, where.lineOf(["output"]), 'output: the schema must be { type: "object", ... } (model APIs take structured output as an object)'));
  }
  if (fm.agents.length && !tools.includes("code")) problems.push(new AgentFileError(file, where.lineOf(["agents"]), "agents: they are called from code (agents.<name>(...)); add code to tools"));
  const override = config.overrides[fm.name];
  const model = modelOverride ?? override?.model ?? fm.model ?? config.model;
  // A model that was given but is invalid is reported once, above.
  if (model === undefined && !broken.has("model")) problems.push(new AgentFileError(file, where.lineOf(["name"]), `agent ${fm.name} has no model: add model: "provider:model" here or in project.json`));
  const spec: AgentSpec = {
    name: fm.name,
    description: fm.description ?? `The ${fm.name} agent.`,
    model: model ?? "",
    tools,
    toolOptions,
    ...(fm.input ? { input: fm.input } : {}),
    agents: fm.agents,
    ...(fm.output ? { output: fm.output } : {}),
    maxSteps: override?.max_steps ?? fm.max_steps ?? DEFAULT_MAX_STEPS,
    instructions: lines.slice(end + 1).join("\n").trim(),
    file,
    modelLine: where.lineOf(fm.model && !modelOverride ? ["model"] : ["name"]),
  };
  parsedAgents.set(spec, where);
  if (problems.length) throw new AgentFileProblems(problems, spec);
  return spec;
}

/**
 * Options a toolset takes in an agent file (`tools: [{ shell_readonly: { allowed_commands: [ls, cat] } }]`).
 * They narrow a toolset, never widen it: allowed_commands is a subset of the read-only commands,
 * base_path a folder inside the toolset's root, read_only only ever true.
 */
const toolsetOptionsSchemas = lazy(() => {
  const filesystem = z
    .object({
      /** A folder under the toolset's root (project folder or cwd) that becomes its root. */
      base_path: z.string().min(1).max(1_000).optional(),
      read_only: z.literal(true, { error: "read_only can only be true (use the _ro toolset, or leave it out)" }).optional(),
      /** Largest file read_file reads and write_file writes, in bytes. */
      max_file_bytes: z.number().int().min(1).max(1024 * 1024 * 1024).optional(),
    })
    .strict();
  return {
    shell_readonly: z.object({ allowed_commands: z.array(z.enum(READONLY_COMMAND_NAMES)).min(1).max(READONLY_COMMAND_NAMES.length) }).strict(),
    shell_file_ops: z.object({ allowed_commands: z.array(z.enum(["ls", "mv"])).min(1).max(2) }).strict(),
    filesystem_project: filesystem,
    filesystem_project_ro: filesystem,
    filesystem_cwd: filesystem,
    filesystem_cwd_ro: filesystem,
  } as const;
});
export interface ToolsetOptions {
  allowed_commands?: string[];
  base_path?: string;
  read_only?: true;
  max_file_bytes?: number;
}

/** `tools` as names, and the options given to toolsets written as { name: options }. */
function readTools(file: string, where: Located, entries: Array<string | Record<string, Record<string, unknown>>>, problems: AgentFileError[]): { names: string[]; options: Record<string, ToolsetOptions> } {
  const names: string[] = [];
  const options: Record<string, ToolsetOptions> = {};
  for (const [i, entry] of entries.entries()) {
    if (typeof entry === "string") {
      names.push(entry);
      continue;
    }
    const keys = Object.keys(entry);
    if (keys.length !== 1) {
      problems.push(new AgentFileError(file, where.lineOf(["tools", i]), "tools: a toolset with options is written { name: { ...options } }, one toolset per entry"));
      continue;
    }
    const name = keys[0]!;
    const schemas = toolsetOptionsSchemas as Record<string, z.ZodType<ToolsetOptions>>;
    const schema = Object.hasOwn(toolsetOptionsSchemas, name) ? schemas[name] : undefined;
    if (!schema) {
      const takers = Object.keys(toolsetOptionsSchemas).join(", ");
      problems.push(new AgentFileError(file, where.lineOf(["tools", i]), `tools: ${JSON.stringify(name)} takes no options (toolsets with options: ${takers})`));
      continue;
    }
    const checked = schema.safeParse(entry[name]);
    if (!checked.success) {
      for (const issue of checked.error.issues) {
        problems.push(new AgentFileError(file, where.lineOf(["tools", i, name, ...(issue.path as PropertyKey[])]), `tools: ${name}${issue.path.length ? `.${issue.path.join(".")}` : ""}: ${issue.message}`));
      }
      continue;
    }
    names.push(name);
    options[name] = checked.data;
  }
  return { names, options };
}

function checkAgents(agents: Map<string, AgentSpec>, config: ProjectConfig, report: (err: AgentFileError) => void, toolsets: Map<string, AgentToolset> = new Map()): void {
  const providers = [...BUILTIN_PROVIDERS, ...Object.keys(config.providers)];
  for (const agent of agents.values()) {
    const where = parsedAgents.get(agent);
    const lineOf = (p: PropertyKey[]) => where?.lineOf(p) ?? 1;
    for (const [i, name] of agent.tools.entries()) {
      if ((TOOLSET_NAMES as readonly string[]).includes(name) || agents.has(name) || toolsets.has(name)) continue;
      const all = [...TOOLSET_NAMES, ...toolsets.keys()].join(", ");
      report(new AgentFileError(agent.file, lineOf(["tools", i]), `unknown tool ${JSON.stringify(name)}: not a toolset (${all}) nor an agent (${known(agents)})`));
    }
    if (new Set(agent.tools).size !== agent.tools.length) report(new AgentFileError(agent.file, lineOf(["tools"]), "a tool is listed twice"));
    for (const [i, name] of agent.agents.entries()) {
      if (!agents.has(name)) report(new AgentFileError(agent.file, lineOf(["agents", i]), `agents: unknown agent ${JSON.stringify(name)} (${known(agents)})`));
    }
    if (new Set(agent.agents).size !== agent.agents.length) report(new AgentFileError(agent.file, lineOf(["agents"]), "an agent is listed twice"));
    // agents.* is answered by this process's runtime; a serve server runs the code and cannot call back here.
    if (agent.agents.length && config.code_mode.executor === "remote") {
      report(new AgentFileError(agent.file, lineOf(["agents"]), 'agents: agents.* needs a local executor: with code_mode executor "remote" the code runs on a serve server, which cannot call agents back on this machine; use subprocess, sandbox or container'));
    }
    const provider = agent.model.slice(0, agent.model.indexOf(":"));
    // "" is a file whose model is missing or invalid, reported where it was read.
    if (agent.model !== "" && !providers.includes(provider)) {
      report(new AgentFileError(agent.file, agent.modelLine, `unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(agent.model)} (known: ${providers.join(", ")}; add others under "providers" in project.json)`));
    }
  }
}

/** The named toolset exports of project.json's `toolsets` modules; a name clashing with a built-in toolset or another module's is refused. */
async function loadToolsets(config: ProjectConfig, dir: string, file: string, where: Located, report: (err: unknown) => void): Promise<Map<string, AgentToolset>> {
  const out = new Map<string, AgentToolset>();
  if (!config.toolsets.length) return out;
  const { asToolset } = await import("./code-toolsets.js");
  const { importUserModule } = await import("../tools/code/load-module.js");
  for (const [i, rel] of config.toolsets.entries()) {
    const line = where.lineOf(["toolsets", i]);
    try {
      const abs = inside(dir, rel, file, line);
      const mod = await importUserModule(abs).catch((err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        throw new AgentFileError(file, line, `toolsets: ${rel} failed to load: ${e.name}: ${e.message.split("\n")[0]}`);
      });
      let found = 0;
      for (const [name, value] of Object.entries(mod)) {
        const toolset = name === "default" ? null : asToolset(value);
        if (!toolset) continue;
        found++;
        if ((TOOLSET_NAMES as readonly string[]).includes(name)) throw new AgentFileError(file, line, `toolsets: ${rel} exports ${name}, the name of a built-in toolset; rename the export`);
        if (out.has(name)) throw new AgentFileError(file, line, `toolsets: ${rel} exports ${name}, already exported by another toolset module`);
        out.set(name, toolset);
      }
      if (!found) throw new AgentFileError(file, line, `toolsets: ${rel} exports no toolset (export const name = defineToolset({...}), or an array of defineTool tools)`);
    } catch (err) {
      report(err);
    }
  }
  return out;
}

function parseEntry(config: ProjectConfig, agents: Map<string, AgentSpec>, dir: string, file: string, where: Located, fromFlag = false): Project["entry"] {
  const line = fromFlag ? 1 : where.lineOf(["entry"]);
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
