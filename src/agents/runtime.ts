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
import { NotFoundError, ValidationError } from "../errors.js";
import type { AgentsHost } from "../execution/host.js";
import type { CallContext as HostCallContext } from "../tools/protocol.js";
import { bounded } from "../mcp/format.js";
import type { Session } from "../session.js";
import { Approvals, rejectionText, type ApprovalHandler } from "./approvals.js";
import { EventLog, eventText, UsageTotals, type AgentEvent, type RuntimeEvent, type UsageReport } from "./events.js";
import type { AgentSpec, ApprovalMode, Project, ToolsetName, ToolsetOptions } from "./files.js";
import type { AgentModel } from "./model-type.js";
import { INTEGRATION_PACKAGES, loadPeer } from "../adapters/peer.js";
import { resolveModel } from "./models.js";
import { modelSampler } from "./sampler.js";
import { defaultSessionFactory, type SessionContext } from "./session-factory.js";
import type { Sampler } from "../tools/adapters/toolable/host.js";
import { agentToolsOf } from "./code-toolsets.js";
import { codeToolset } from "./toolsets/code.js";
import { directToolset } from "./toolsets/direct-tools.js";
import { shellFileOpsToolset } from "./toolsets/file-ops.js";
import { filesystemToolset } from "./toolsets/filesystem.js";
import { sessionCommandPlace, shellReadonlyToolset, shellToolset } from "./toolsets/shell.js";
import { skillsSystemText, skillsToolset } from "./toolsets/skills.js";
import type { AgentTool, ToolsetEnv } from "./toolsets/types.js";
import { noteAgentUsage, traceAgentCall } from "../telemetry/agents.js";
import type { Span } from "../telemetry/spans.js";
import { telemetryRegistered } from "../telemetry/api.js";

export const DEFAULT_MAX_OUTPUT_CHARS = 24_000;
/** Files one agent call may attach. */
const MAX_ATTACHMENTS = 8;

export interface RuntimeOptions {
  /** Overrides the project's approval_mode (the CLI's --approve-all / --reject-all). */
  approvalMode?: ApprovalMode;
  /** Answers approval prompts (mode "prompt"); without one, calls that need approval are rejected. */
  onApproval?: ApprovalHandler;
  onEvent?: (event: RuntimeEvent) => void;
  /** A model to use instead of resolving the agent's `provider:model` (tests, custom providers): an AI SDK `LanguageModel`. */
  model?: AgentModel | ((agent: AgentSpec) => AgentModel | undefined);
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

export interface AgentRunResult<Output = unknown> {
  answer: string;
  /** The entry's answer as a value: the validated object when the agent declares `output:`, else the answer text. */
  output: Output;
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

/** A run made more agent calls than project.json's `max_agent_calls`. */
export class AgentCallLimitError extends Error {
  override readonly name = "AgentCallLimitError";
}

/** An agent call from code (agents.*) was rejected at approval: the code reads this error. */
export class AgentCallRejectedError extends Error {
  override readonly name = "AgentCallRejectedError";
}

/** What one agent call answered: its text and, with `output:`, the validated value (else the text). */
interface Answer {
  text: string;
  value: unknown;
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
  /** Closers of the call's code toolset instances. */
  cleanups: Array<() => void | Promise<void>>;
}

/**
 * What a code entry (`file#export`) receives: it calls agents (`agents.analyst({ input })` or
 * `callAgent(name, input)`), and the project's tools when project.json says `entry_tools: true`.
 * An agent with `output:` answers with its validated value, otherwise with its text.
 */
export interface EntryContext {
  callAgent(name: string, input: unknown): Promise<unknown>;
  agents: Record<string, (args: { input: unknown; attachments?: string[] }) => Promise<unknown>>;
  /** `tools.<tool>.<callable>(args)`; present only with `entry_tools: true`. */
  tools?: Record<string, Record<string, (args?: Record<string, unknown>) => Promise<unknown>>>;
}

export class AgentRuntime {
  readonly usage = new UsageTotals();
  private readonly log = new EventLog();
  private readonly approvals: Approvals;
  private readonly entryHistory: ModelMessage[] = [];
  private readonly maxOutputChars: number;
  /** Agent calls made in the current run (max_agent_calls). */
  private agentCalls = 0;

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
    this.agentCalls = 0;
    let result: Answer;
    if (entry.kind === "agent") {
      const schema = this.project.agents.get(entry.name)?.input;
      if (schema) {
        // The entry's input comes from the user (--input-json), not a model: a bad one is refused before any request.
        const checked = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(input);
        if (!checked.success) throw new ValidationError(`the input does not match agent ${entry.name}'s input schema: ${z.prettifyError(checked.error).replace(/\n+/g, " ")}`);
      }
      result = await this.callAgent(entry.name, input, 0, this.entryHistory, []);
    } else {
      const fn = await loadEntryFunction(entry.file, entry.exportName);
      const { context, close } = this.entryContext();
      try {
        const value = await fn(input, context);
        result = { text: typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? ""), value };
      } finally {
        await close();
      }
    }
    return { answer: result.text, output: result.value, usage: this.usage.report(), events: this.events };
  }

  /** The code entry's context: agents at depth 1 (trusted code: no approval for the call itself), tools if allowed. */
  private entryContext(): { context: EntryContext; close: () => Promise<void> } {
    const chain = ["(entry code)"];
    const call = async (name: string, input: unknown, attachments?: string[]): Promise<unknown> => {
      const spec = this.project.agents.get(name);
      if (!spec) throw new NotFoundError(`agents.${name}: no such agent (${[...this.project.agents.keys()].join(", ")})`);
      this.countAgentCall(name, 1, chain);
      const childInput = attachments?.length ? await this.withAttachments(input, attachments, this.options.signal ?? new AbortController().signal) : input;
      return (await this.callAgent(name, childInput, 1, [], chain)).value;
    };
    const agents = new Proxy({} as EntryContext["agents"], {
      get: (_t, name) => (typeof name === "string" ? (args: { input: unknown; attachments?: string[] }) => call(name, args?.input, args?.attachments) : undefined),
    });
    let session: Promise<Session> | null = null;
    const context: EntryContext = { callAgent: (name, input) => call(name, input), agents };
    if (this.project.config.entry_tools) {
      const open = () => (session ??= (this.options.createSession ?? defaultSessionFactory)(this.project, { env: this.options.env ?? process.env }));
      context.tools = new Proxy({} as NonNullable<EntryContext["tools"]>, {
        get: (_t, tool) =>
          typeof tool !== "string"
            ? undefined
            : new Proxy({} as Record<string, (args?: Record<string, unknown>) => Promise<unknown>>, {
                get: (_u, callable) => (typeof callable === "string" ? async (args?: Record<string, unknown>) => (await open()).callTool(tool, callable, args ?? {}) : undefined),
              }),
      });
    }
    return { context: Object.freeze(context), close: async () => void (await session?.then((s) => s.close(), () => undefined)) };
  }

  /** Counted before approval and before the call: a call past the cap or max_depth is refused without asking anyone. */
  private countAgentCall(name: string, depth: number, chain: string[]): void {
    const max = this.project.config.max_depth;
    if (depth > max) {
      throw new MaxDepthError(`calling agent ${name} would run at depth ${depth}, past max_depth ${max} (project.json); call chain: ${[...chain, name].join(" → ")}. Answer without this call.`);
    }
    const cap = this.project.config.max_agent_calls;
    if (++this.agentCalls > cap) throw new AgentCallLimitError(`calling agent ${name}: this run already made ${cap} agent calls, the most project.json's max_agent_calls allows. Answer with what you have.`);
  }

  private emit(agent: string, depth: number, event: AgentEvent): void {
    const e = { agent, depth, event };
    this.log.push(e);
    this.options.onEvent?.(e);
  }

  private callAgent(name: string, input: unknown, depth: number, history: ModelMessage[], chain: string[]): Promise<Answer> {
    return traceAgentCall(name, depth, this.project.agents.get(name)?.model, (span) => this.callAgentIn(span, name, input, depth, history, chain));
  }

  private async callAgentIn(span: Span | undefined, name: string, input: unknown, depth: number, history: ModelMessage[], chain: string[]): Promise<Answer> {
    const spec = this.project.agents.get(name);
    if (!spec) throw new Error(`no agent named ${JSON.stringify(name)} (agents: ${[...this.project.agents.keys()].join(", ")})`);
    const ai = await loadPeer<typeof import("ai")>(INTEGRATION_PACKAGES.ai);
    const model = this.observed(ai, await this.model(spec), name, depth);
    const ctx: CallContext = { spec, depth, chain: [...chain, name], history, session: null, model, abort: new AbortController(), fatal: null, cleanups: [] };
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
      // With `output:` the model is asked for a JSON object of that schema (the SDK's structured output) and the answer is validated by it.
      const output = spec.output ? ai.Output.object({ schema: z.fromJSONSchema(spec.output as Parameters<typeof z.fromJSONSchema>[0]) }) : undefined;
      const result = await ai.generateText({
        model,
        ...(system ? { system } : {}),
        messages: [...ctx.history, userMessage],
        tools,
        ...(output ? { output } : {}),
        stopWhen: ai.stepCountIs(spec.maxSteps),
        abortSignal: stop,
        // With an SDK registered, the AI SDK's own spans (each model request) join the agent's span; prompts and answers stay out.
        ...(telemetryRegistered() ? { experimental_telemetry: { isEnabled: true, recordInputs: false, recordOutputs: false } } : {}),
      });
      noteAgentUsage(span, result.totalUsage);
      ctx.history.push(userMessage, ...result.response.messages);
      const answer: Answer = output ? structured(name, result) : { text: result.text, value: result.text };
      this.emit(name, depth, { type: "agent_end", answer: eventText(answer.text) });
      return answer;
    } catch (err) {
      throw ctx.fatal ?? err;
    } finally {
      ctx.abort.abort();
      if (ctx.session) await ctx.session.then((s) => s.close(), () => undefined);
      // A toolset's close failing must not hide the call's result or error.
      for (const close of ctx.cleanups) await Promise.resolve().then(close).catch(() => undefined);
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
    // AgentModel is the AI SDK's LanguageModel as the published types name it (see model-type.ts).
    if (given) return given as LanguageModel;
    return resolveModel({
      model: spec.model,
      agent: spec.name,
      file: spec.file,
      line: spec.modelLine,
      providers: this.project.config.providers,
      env: this.options.env ?? process.env,
    });
  }

  private needsApproval(ctx: CallContext, tool: { name: string; needsApproval: boolean }, isAgent: boolean): boolean {
    const override = this.project.config.overrides[ctx.spec.name]?.needs_approval?.[tool.name];
    if (override !== undefined) return override;
    return isAgent ? this.project.config.agent_calls_need_approval : tool.needsApproval;
  }

  /**
   * One tool call: events, the tool's own checks (an agent call's depth and the run's cap, before
   * anyone is asked), approval, then the tool. A thrown error reaches the model as the tool's
   * error; code calling an agent (agents.*) gets a rejection as an AgentCallRejectedError.
   */
  private async invoke<T>(ctx: CallContext, tool: CallableTool<T>, args: unknown, signal: AbortSignal, from: "model" | "code" = "model", hold?: () => () => void): Promise<T | string> {
    const { name } = ctx.spec;
    this.emit(name, ctx.depth, { type: "tool_call", tool: tool.name, args: eventText(args) });
    let runArgs = args;
    try {
      tool.precheck?.();
    } catch (err) {
      this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: false, result: eventText(err instanceof Error ? `${err.name}: ${err.message}` : String(err)) });
      throw err;
    }
    if (this.needsApproval(ctx, tool, this.project.agents.has(tool.name))) {
      // A person deciding does not count against the code's run time.
      const release = hold?.();
      const outcome = await this.approvals.decide({ agent: name, depth: ctx.depth, tool: tool.name, args }).finally(() => release?.());
      this.emit(name, ctx.depth, { type: "approval", tool: tool.name, approved: outcome.approved, how: outcome.approved ? outcome.how : outcome.reason });
      if (!outcome.approved) {
        const text = rejectionText(tool.name, outcome.reason);
        if (this.project.config.permission_errors === "fatal") {
          ctx.fatal = new PermissionDeniedError(`${name}: ${text}`);
          ctx.abort.abort(ctx.fatal);
          throw ctx.fatal;
        }
        this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: false, result: eventText(text) });
        if (from === "code") throw new AgentCallRejectedError(text);
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
      this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: true, result: eventText(tool.show ? tool.show(out) : out) });
      return out;
    } catch (err) {
      const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.emit(name, ctx.depth, { type: "tool_result", tool: tool.name, ok: false, result: eventText(message) });
      throw err;
    }
  }

  /**
   * agents.* for this call's code: each call is a child call exactly as a tool call to the agent
   * (events, depth, the run's cap, approval, usage), answered with the child's value.
   */
  private agentsHost(ctx: CallContext): AgentsHost {
    return {
      list: () => ctx.spec.agents.map((n) => ({ name: n, description: this.project.agents.get(n)?.description ?? "" })),
      call: async (agentName: string, args: unknown, hostCtx: HostCallContext) => {
        const child = ctx.spec.agents.includes(agentName) ? this.project.agents.get(agentName) : undefined;
        if (!child) throw new NotFoundError(`agents.${agentName}: not an agent this code may call (${ctx.spec.agents.join(", ") || "none: list them under agents: [...] in the agent file"})`);
        const tool = this.childTool(ctx, child);
        const checked = tool.inputSchema.safeParse(args);
        if (!checked.success) throw new ValidationError(`agents.${agentName}: expected { input, attachments? }: ${z.prettifyError(checked.error).replace(/\n+/g, " ")}`);
        const signal = hostCtx.signal ? AbortSignal.any([hostCtx.signal, ctx.abort.signal]) : ctx.abort.signal;
        const answer = (await this.invoke(ctx, tool, checked.data, signal, "code", hostCtx.holdDeadline)) as Answer;
        return answer.value;
      },
    };
  }

  /** What this call's toolsets share: one lazily started session (code, tools, shell and skills all use it). */
  private toolsetEnv(ctx: CallContext): ToolsetEnv {
    return {
      projectDir: this.project.dir,
      cwd: this.options.cwd ?? process.cwd(),
      maxOutputChars: this.maxOutputChars,
      session: () =>
        (ctx.session ??= (this.options.createSession ?? defaultSessionFactory)(this.project, {
          sampler: this.sampler(ctx),
          env: this.options.env ?? process.env,
          ...(ctx.spec.agents.length ? { agents: this.agentsHost(ctx) } : {}),
        })),
      callableAgents: ctx.spec.agents.map((n) => this.project.agents.get(n)!),
      containerSession: this.project.config.code_mode.executor === "container",
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
      const code = this.project.toolsets.get(name);
      if (child) out.push(this.agentTool(ctx, child));
      else if (code) {
        // A fresh instance for this call, closed when the call ends.
        const instance = await code.instance({ agent: ctx.spec.name, depth: ctx.depth, projectDir: this.project.dir, signal: ctx.abort.signal });
        if (instance.close) ctx.cleanups.push(instance.close);
        out.push(...agentToolsOf(code, instance, this.maxOutputChars, `${ctx.spec.name}@${ctx.depth}`));
      }
      else out.push(...(await toolset(name as ToolsetName, env, ctx.spec.toolOptions[name])));
    }
    return out;
  }

  /** A tool call to another agent, as the model sees it: the child's answer as text, cut to the output limit. */
  private agentTool(ctx: CallContext, child: AgentSpec): AgentTool {
    const tool = this.childTool(ctx, child);
    return {
      ...tool,
      description: `${child.description}\n(Another agent: it starts with no memory of this conversation, so give it everything it needs in input.)`,
      // The child's answer is model text of any length; the caller reads it like any tool's output.
      execute: async (args, signal) => bounded((await tool.execute(args, signal)).text, this.maxOutputChars),
    };
  }

  /** Calling `child` from `ctx`: its arguments, its checks before approval, and the call answering with text and value. */
  private childTool(ctx: CallContext, child: AgentSpec): CallableTool<Answer> {
    return {
      name: child.name,
      description: child.description,
      inputSchema: agentCallInput(child),
      needsApproval: true,
      precheck: () => this.countAgentCall(child.name, ctx.depth + 1, ctx.chain),
      show: (answer) => answer.text,
      execute: async (args, signal) => {
        const a = args as { input: unknown; attachments?: string[] };
        const childInput = a.attachments?.length ? await this.withAttachments(a.input, a.attachments, signal) : a.input;
        return this.callAgent(child.name, childInput, ctx.depth + 1, [], ctx.chain);
      },
    };
  }

  /** The input with project files appended, read with read_file of filesystem_project_ro: the same root and the same bounds. */
  private async withAttachments(input: unknown, attachments: string[], signal: AbortSignal): Promise<string> {
    const [readFile] = filesystemToolset(this.project.dir, true, this.maxOutputChars);
    const parts = [typeof input === "string" ? input : (JSON.stringify(input, null, 2) ?? "")];
    for (const p of attachments.slice(0, MAX_ATTACHMENTS)) parts.push(`Attachment ${p}:\n${await readFile!.execute({ path: p }, signal)}`);
    return parts.join("\n\n");
  }
}

/** A tool as invoke() runs it: an AgentTool whose result may be any value, with checks that run before approval. */
interface CallableTool<T> {
  name: string;
  description: string;
  inputSchema: z.ZodType;
  needsApproval: boolean;
  precheck?: () => void;
  execute(args: unknown, signal: AbortSignal): Promise<T>;
  /** What the tool_result event shows of a result (default: the result). */
  show?: (out: T) => unknown;
}

/** `{ input, attachments? }`, input by the child's input schema (else a string saying what is wanted). */
export function agentCallInput(child: AgentSpec): z.ZodType {
  const input = child.input ? z.fromJSONSchema(child.input as Parameters<typeof z.fromJSONSchema>[0]) : z.string().describe("what you want from this agent");
  return z.object({
    input,
    attachments: z.array(z.string().min(1)).max(MAX_ATTACHMENTS).optional().describe("paths of project files to give the agent (text, relative to the project folder)"),
  });
}

/** A structured answer: the SDK parsed and validated it; the text is its JSON. */
function structured(agent: string, result: { output: unknown }): Answer {
  let value: unknown;
  try {
    value = result.output;
  } catch (err) {
    throw new ValidationError(`agent ${agent}: its answer does not match its output schema: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { text: JSON.stringify(value, null, 2) ?? "", value };
}

async function toolset(name: ToolsetName, env: ToolsetEnv, options: ToolsetOptions = {}): Promise<AgentTool[]> {
  switch (name) {
    case "code":
      return codeToolset(env);
    case "tools":
      return directToolset(env);
    case "filesystem_project":
    case "filesystem_project_ro":
    case "filesystem_cwd":
    case "filesystem_cwd_ro": {
      const root = name.startsWith("filesystem_project") ? env.projectDir : env.cwd;
      // base_path narrows the root to a folder inside it (checked here: the agent file named it).
      const base = options.base_path === undefined ? root : path.resolve(root, options.base_path);
      const back = path.relative(root, base);
      if (back.startsWith("..") || path.isAbsolute(back)) throw new ValidationError(`${name}: base_path ${JSON.stringify(options.base_path)} is outside ${root}`);
      return filesystemToolset(base, name.endsWith("_ro") || options.read_only === true, env.maxOutputChars, options.max_file_bytes);
    }
    case "shell_readonly":
      return shellReadonlyToolset(env.projectDir, {
        ...(options.allowed_commands ? { allowedCommands: options.allowed_commands } : {}),
        ...(env.containerSession ? { place: async () => sessionCommandPlace(await env.session()) } : {}),
      });
    case "shell_file_ops":
      return shellFileOpsToolset(env.projectDir, options.allowed_commands);
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
