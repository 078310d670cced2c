/**
 * The agent runtime. One AgentRuntime per process or embedding holds what is shared: the project,
 * approval policy and session approvals, usage totals, the event stream and the entry's history
 * (kept across `run()` calls, which is what `--chat` does). Each agent call gets its own
 * CallContext: depth, a fresh history (the entry's is the one exception), and toolset instances
 * (a ts-code-mode Session among them) that are closed when the call ends. Agents named in `tools`
 * are tools whose result is the child's answer; the parent never sees the child's messages.
 *
 * The AI SDK is imported on first use, so importing ts-code-mode stays fast.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { readFile } from "node:fs/promises";
import type { LanguageModel, ModelMessage, Tool } from "ai";
import { z } from "zod";
import { ValidationError } from "../errors.js";
import { bounded } from "../mcp/format.js";
import type { Session } from "../session.js";
import { Approvals, rejectionText, type ApprovalHandler } from "./approvals.js";
import { EventLog, eventText, UsageTotals, type AgentEvent, type RuntimeEvent, type UsageReport } from "./events.js";
import type { AgentSpec, ApprovalMode, Project, ToolsetName } from "./files.js";
import { resolveModel } from "./models.js";
import { modelSampler } from "./sampler.js";
import { defaultSessionFactory, type SessionContext } from "./session-factory.js";
import type { Sampler } from "../tools/adapters/toolable/host.js";
import { codeToolset } from "./toolsets/code.js";
import { directToolset } from "./toolsets/direct-tools.js";
import { filesystemToolset } from "./toolsets/filesystem.js";
import { sessionCommandPlace, shellReadonlyToolset, shellToolset } from "./toolsets/shell.js";
import { skillsSystemText, skillsToolset } from "./toolsets/skills.js";
import type { AgentTool, ToolsetEnv } from "./toolsets/types.js";

export const DEFAULT_MAX_OUTPUT_CHARS = 24_000;
/** Files one agent call may attach. */
const MAX_ATTACHMENTS = 8;

export interface RuntimeOptions {
  /** Overrides the project's approval_mode (the CLI's --approve-all / --reject-all). */
  approvalMode?: ApprovalMode;
  /** Answers approval prompts (mode "prompt"); without one, calls that need approval are rejected. */
  onApproval?: ApprovalHandler;
  onEvent?: (event: RuntimeEvent) => void;
  /** A model to use instead of resolving the agent's `provider:model` (tests, custom providers). */
  model?: LanguageModel | ((agent: AgentSpec) => LanguageModel | undefined);
  /** Where API keys and OPENAI_BASE_URL are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Root of filesystem_cwd; default process.cwd(). */
  cwd?: string;
  /**
   * A started Session for one agent call's code/tools/shell toolsets; closed when the call ends.
   * `context.sampler` answers toolable sampling requests with the calling agent's model: wire it
   * into the session's executor (`toolable: { sampler }`) to keep that.
   */
  createSession?: (project: Project, context: SessionContext) => Promise<Session>;
  /** Longest text one tool returns to the model (default 24,000). */
  maxOutputChars?: number;
  signal?: AbortSignal;
}

export interface AgentRunResult {
  answer: string;
  usage: UsageReport;
  events: RuntimeEvent[];
}

/** A call past `max_depth`; the calling model reads this message as the tool's error. */
export class MaxDepthError extends Error {
  override readonly name = "MaxDepthError";
}

/** A tool call was rejected and the project says `permission_errors: "fatal"`: the run ends. */
export class PermissionDeniedError extends Error {
  override readonly name = "PermissionDeniedError";
}

interface CallContext {
  spec: AgentSpec;
  depth: number;
  chain: string[];
  history: ModelMessage[];
  session: Promise<Session> | null;
  /** The agent's model as the call uses it (usage counted, events emitted): it also answers sampling. */
  model: LanguageModel;
  abort: AbortController;
  fatal: Error | null;
}

/** What a code entry (`file#export`) receives: it may call agents and nothing else. */
export interface EntryContext {
  callAgent(name: string, input: unknown): Promise<string>;
}

export class AgentRuntime {
  readonly usage = new UsageTotals();
  private readonly log = new EventLog();
  private readonly approvals: Approvals;
  private readonly entryHistory: ModelMessage[] = [];
  private readonly maxOutputChars: number;

  constructor(
    readonly project: Project,
    private readonly options: RuntimeOptions = {},
  ) {
    this.approvals = new Approvals(options.approvalMode ?? project.config.approval_mode, options.onApproval ?? null);
    this.maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  }

  get events(): RuntimeEvent[] {
    return this.log.list();
  }

  /** One turn of the entry. The entry agent keeps its history across turns (a chat). */
  async run(input: unknown): Promise<AgentRunResult> {
    const entry = this.project.entry;
    let answer: string;
    if (entry.kind === "agent") {
      const schema = this.project.agents.get(entry.name)?.input;
      if (schema) {
        // The entry's input comes from the user (--input-json), not a model: a bad one is refused before any request.
        const checked = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(input);
        if (!checked.success) throw new ValidationError(`the input does not match agent ${entry.name}'s input schema: ${z.prettifyError(checked.error).replace(/\n+/g, " ")}`);
      }
      answer = await this.callAgent(entry.name, input, 0, this.entryHistory, []);
    }
    else {
      const fn = await loadEntryFunction(entry.file, entry.exportName);
      const context: EntryContext = Object.freeze({ callAgent: (name: string, childInput: unknown) => this.callAgent(name, childInput, 1, [], ["(entry code)"]) });
      const value = await fn(input, context);
      answer = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "");
    }
    return { answer, usage: this.usage.report(), events: this.events };
  }

  private emit(agent: string, depth: number, event: AgentEvent): void {
    const e = { agent, depth, event };
    this.log.push(e);
    this.options.onEvent?.(e);
  }

  async callAgent(name: string, input: unknown, depth: number, history: ModelMessage[], chain: string[]): Promise<string> {
    const spec = this.project.agents.get(name);
    if (!spec) throw new Error(`no agent named ${JSON.stringify(name)} (agents: ${[...this.project.agents.keys()].join(", ")})`);
    const max = this.project.config.max_depth;
    if (depth > max) {
      throw new MaxDepthError(`calling agent ${name} would run at depth ${depth}, past max_depth ${max} (project.json); call chain: ${[...chain, name].join(" → ")}. Answer without this call.`);
    }
    const ai = await import("ai");
    const model = this.observed(ai, await this.model(spec), name, depth);
    const ctx: CallContext = { spec, depth, chain: [...chain, name], history, session: null, model, abort: new AbortController(), fatal: null };
    const stop = this.options.signal ? AbortSignal.any([this.options.signal, ctx.abort.signal]) : ctx.abort.signal;
    const prompt = typeof input === "string" ? input : (JSON.stringify(input, null, 2) ?? "");
    this.emit(name, depth, { type: "agent_start", input: eventText(prompt) });
    try {
      const tools: Record<string, Tool> = {};
      const env = this.toolsetEnv(ctx);
      for (const t of await this.buildTools(ctx, env)) {
        tools[t.name] = ai.tool({
          description: t.description,
          inputSchema: t.inputSchema,
          execute: (args: unknown, opts: { abortSignal?: AbortSignal }) => this.invoke(ctx, t, args, opts.abortSignal ?? stop),
        } as Tool);
      }
      const userMessage: ModelMessage = { role: "user", content: prompt };
      // The skills toolset's catalog follows the agent's own instructions (read from the call's session).
      const system = [spec.instructions, spec.tools.includes("skills") ? await skillsSystemText(env) : ""].filter((t) => t !== "").join("\n\n");
      const result = await ai.generateText({
        model,
        ...(system ? { system } : {}),
        messages: [...ctx.history, userMessage],
        tools,
        stopWhen: ai.stepCountIs(spec.maxSteps),
        abortSignal: stop,
      });
      ctx.history.push(userMessage, ...result.response.messages);
      this.emit(name, depth, { type: "agent_end", answer: eventText(result.text) });
      return result.text;
    } catch (err) {
      throw ctx.fatal ?? err;
    } finally {
      if (ctx.session) await ctx.session.then((s) => s.close(), () => undefined);
    }
  }

  /**
   * The model wrapped so each request is an event and its usage is counted when it happens (the
   * SDK's onStepFinish fires only after the step's tools ran, which would misorder the call tree).
   */
  private observed(ai: typeof import("ai"), model: LanguageModel, agent: string, depth: number): LanguageModel {
    if (typeof model === "string" || model.specificationVersion !== "v3") return model;
    let step = 0;
    return ai.wrapLanguageModel({
      model,
      middleware: {
        specificationVersion: "v3",
        wrapGenerate: async ({ doGenerate }) => {
          this.emit(agent, depth, { type: "model_request", step: ++step });
          const r = await doGenerate();
          const inputTokens = r.usage.inputTokens.total ?? 0;
          const outputTokens = r.usage.outputTokens.total ?? 0;
          this.usage.add(agent, inputTokens, outputTokens);
          const text = r.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
          const toolCalls = r.content.flatMap((c) => (c.type === "tool-call" ? [c.toolName] : []));
          this.emit(agent, depth, { type: "model_response", step, text: eventText(text), toolCalls, inputTokens, outputTokens });
          return r;
        },
      },
    });
  }

  private async model(spec: AgentSpec): Promise<LanguageModel> {
    const given = typeof this.options.model === "function" ? this.options.model(spec) : this.options.model;
    if (given) return given;
    return resolveModel({
      model: spec.model,
      agent: spec.name,
      file: spec.file,
      line: spec.modelLine,
      providers: this.project.config.providers,
      env: this.options.env ?? process.env,
    });
  }

  private needsApproval(ctx: CallContext, tool: AgentTool, isAgent: boolean): boolean {
    const override = this.project.config.overrides[ctx.spec.name]?.needs_approval?.[tool.name];
    if (override !== undefined) return override;
    return isAgent ? this.project.config.agent_calls_need_approval : tool.needsApproval;
  }

  /** One tool call: events, approval, then the tool. A thrown error reaches the model as the tool's error. */
  private async invoke(ctx: CallContext, tool: AgentTool, args: unknown, signal: AbortSignal): Promise<string> {
    const { name } = ctx.spec;
    this.emit(name, ctx.depth, { type: "tool_call", tool: tool.name, args: eventText(args) });
    let runArgs = args;
    if (this.needsApproval(ctx, tool, this.project.agents.has(tool.name))) {
      const outcome = await this.approvals.decide({ agent: name, depth: ctx.depth, tool: tool.name, args });
      this.emit(name, ctx.depth, { type: "approval", tool: tool.name, approved: outcome.approved, how: outcome.approved ? outcome.how : outcome.reason });
      if (!outcome.approved) {
        const text = rejectionText(tool.name, outcome.reason);
        if (this.project.config.permission_errors === "fatal") {
          ctx.fatal = new PermissionDeniedError(`${name}: ${text}`);
          ctx.abort.abort(ctx.fatal);
          throw ctx.fatal;
        }
        this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: false, result: eventText(text) });
        return text;
      }
      if (outcome.how === "edited") {
        // Edited arguments get the same validation the model's arguments got.
        const checked = tool.inputSchema.safeParse(outcome.args);
        if (!checked.success) throw new Error(`the edited arguments are not valid for ${tool.name}: ${z.prettifyError(checked.error)}`);
        runArgs = checked.data;
      }
    }
    try {
      const out = await tool.execute(runArgs, signal);
      this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: true, result: eventText(out) });
      return out;
    } catch (err) {
      const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: false, result: eventText(message) });
      throw err;
    }
  }

  /** What this call's toolsets share: one lazily started session (code, tools, shell and skills all use it). */
  private toolsetEnv(ctx: CallContext): ToolsetEnv {
    return {
      projectDir: this.project.dir,
      cwd: this.options.cwd ?? process.cwd(),
      maxOutputChars: this.maxOutputChars,
      containerSession: this.project.config.code_mode.executor === "container",
      session: () => (ctx.session ??= (this.options.createSession ?? defaultSessionFactory)(this.project, { sampler: this.sampler(ctx), env: this.options.env ?? process.env })),
    };
  }

  /**
   * A toolable tool's sampling request from this call's code, answered by the call's model (its
   * tokens counted as the agent's). It needs approval only where the project says so for the
   * pseudo-tool `sampling` (overrides.<agent>.needs_approval.sampling): the run_code call that
   * made it was already under the agent's policy.
   */
  private sampler(ctx: CallContext): Sampler {
    const answer = modelSampler(ctx.model);
    return async (req) => {
      const { name } = ctx.spec;
      const args = { tool: `${req.tool}.${req.callable}`, prompt: req.prompt };
      this.emit(name, ctx.depth, { type: "tool_call", tool: "sampling", args: eventText(args) });
      if (this.project.config.overrides[name]?.needs_approval?.["sampling"] === true) {
        const outcome = await this.approvals.decide({ agent: name, depth: ctx.depth, tool: "sampling", args });
        this.emit(name, ctx.depth, { type: "approval", tool: "sampling", approved: outcome.approved, how: outcome.approved ? outcome.how : outcome.reason });
        if (!outcome.approved) throw new Error(rejectionText("sampling", outcome.reason));
      }
      try {
        const text = await answer(req);
        this.emit(name, ctx.depth, { type: "tool_result", tool: "sampling", ok: true, result: eventText(text) });
        return text;
      } catch (err) {
        this.emit(name, ctx.depth, { type: "tool_result", tool: "sampling", ok: false, result: eventText(err instanceof Error ? err.message : String(err)) });
        throw err;
      }
    };
  }

  private async buildTools(ctx: CallContext, env: ToolsetEnv): Promise<AgentTool[]> {
    const out: AgentTool[] = [];
    for (const name of ctx.spec.tools) {
      const child = this.project.agents.get(name);
      if (child) out.push(this.agentTool(ctx, child));
      else out.push(...(await toolset(name as ToolsetName, env)));
    }
    return out;
  }

  private agentTool(ctx: CallContext, child: AgentSpec): AgentTool {
    const input = child.input ? z.fromJSONSchema(child.input as Parameters<typeof z.fromJSONSchema>[0]) : z.string().describe("what you want from this agent");
    // Attachments are read with read_file of filesystem_project_ro: the same root and the same bounds.
    const [readFile] = filesystemToolset(this.project.dir, true, this.maxOutputChars);
    return {
      name: child.name,
      description: `${child.description}\n(Another agent: it starts with no memory of this conversation, so give it everything it needs in input.)`,
      inputSchema: z.object({
        input,
        attachments: z.array(z.string().min(1)).max(MAX_ATTACHMENTS).optional().describe("paths of project files to give the agent (text, relative to the project folder)"),
      }),
      needsApproval: true,
      execute: async (args, signal) => {
        const a = args as { input: unknown; attachments?: string[] };
        let childInput = a.input;
        if (a.attachments?.length) {
          const parts = [typeof a.input === "string" ? a.input : (JSON.stringify(a.input, null, 2) ?? "")];
          for (const p of a.attachments) parts.push(`Attachment ${p}:\n${await readFile!.execute({ path: p }, signal)}`);
          childInput = parts.join("\n\n");
        }
        // The child's answer is model text of any length; the caller reads it like any tool's output.
        return bounded(await this.callAgent(child.name, childInput, ctx.depth + 1, [], ctx.chain), this.maxOutputChars);
      },
    };
  }
}

async function toolset(name: ToolsetName, env: ToolsetEnv): Promise<AgentTool[]> {
  switch (name) {
    case "code":
      return codeToolset(env);
    case "tools":
      return directToolset(env);
    case "filesystem_project":
    case "filesystem_project_ro":
      return filesystemToolset(env.projectDir, name.endsWith("_ro"), env.maxOutputChars);
    case "filesystem_cwd":
    case "filesystem_cwd_ro":
      return filesystemToolset(env.cwd, name.endsWith("_ro"), env.maxOutputChars);
    case "shell_readonly":
      return shellReadonlyToolset(env.projectDir, env.containerSession ? { place: async () => sessionCommandPlace(await env.session()) } : {});
    case "shell":
      return shellToolset(env);
    case "skills":
      return skillsToolset(env);
  }
}

type EntryFunction = (input: unknown, context: EntryContext) => unknown;

/** A code entry's function. TypeScript is stripped with sucrase (already a dependency) and imported as a data URL. */
async function loadEntryFunction(file: string, exportName: string): Promise<EntryFunction> {
  let mod: Record<string, unknown>;
  if (/\.(ts|mts)$/.test(file)) {
    const { transform } = await import("sucrase");
    const js = transform(await readFile(file, "utf8"), { transforms: ["typescript"], filePath: file }).code;
    mod = (await import(`data:text/javascript;base64,${Buffer.from(js).toString("base64")}`)) as Record<string, unknown>;
  } else mod = (await import(pathToFileURL(path.resolve(file)).href)) as Record<string, unknown>;
  const fn = mod[exportName];
  if (typeof fn !== "function") throw new Error(`${file}: no exported function ${exportName} (exports: ${Object.keys(mod).join(", ") || "none"})`);
  return fn as EntryFunction;
}
