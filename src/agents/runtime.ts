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
import { codeToolset, pauseOf } from "./toolsets/code.js";
import { directToolset } from "./toolsets/direct-tools.js";
import { shellFileOpsToolset } from "./toolsets/file-ops.js";
import { filesystemToolset } from "./toolsets/filesystem.js";
import { sessionCommandPlace, shellReadonlyToolset, shellToolset } from "./toolsets/shell.js";
import { skillsSystemText, skillsToolset } from "./toolsets/skills.js";
import type { AgentTool, CodePause, CodeReply, ToolCallRef, ToolsetEnv } from "./toolsets/types.js";
import { AgentRunPausedError, checkPausedRun, type PausedAgentRun, type StepResult } from "./paused-runs.js";
import type { Decision } from "../runs/recorder.js";
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
  /**
   * Durable code runs (over project.json's code_mode.durable): a call inside the code that needs
   * approval pauses the code run; it is decided as any approval is (terminal, onApproval, the
   * mode) and the run resumed. With nobody to ask, the entry agent's run ends with
   * AgentRunPausedError, whose state `resume()` takes later, in any process. Needs
   * TS_CODE_MODE_RUNS_SECRET (docs/durable-runs.md).
   */
  durable?: boolean;
}

/** What `resume()` is told while it goes on. */
export interface ResumeHooks {
  /** The code run went on and ended: from here the state needs no decisions (save it again to survive a failed model call). */
  onCodeResumed?(state: PausedAgentRun): void | Promise<void>;
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
  /** The model step whose tools are running: what it was sent and what it answered (to suspend at a pause). */
  step: { messages: ModelMessage[]; content: unknown[] | null };
  /** This step's tool calls by id, each settling to its result (cleared when the next step starts). */
  inflight: Map<string, Promise<StepResult>>;
  /** Results of the step carried over from a suspended run. */
  carried: StepResult[];
}

/** Where a resumed entry call starts: the suspended state and the decisions (none: ask as any approval). */
interface ResumeFrom {
  state: PausedAgentRun;
  decisions: Decision[] | undefined;
  hooks: ResumeHooks;
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

  /**
   * Goes on with an entry run that ended with AgentRunPausedError: the code run resumes with the
   * decisions (its logged calls replayed, not made again; without decisions they are asked as any
   * approval is), and the model reads run_code's result and continues. It may pause again.
   */
  async resume(state: PausedAgentRun, decisions?: Decision[], hooks: ResumeHooks = {}): Promise<AgentRunResult> {
    const checked = checkPausedRun(state);
    const entry = this.project.entry;
    if (entry.kind !== "agent" || entry.name !== checked.agent) {
      throw new ValidationError(`the paused run is agent ${checked.agent}'s, but this project's entry is ${entry.kind === "agent" ? `agent ${entry.name}` : "code"}; resume it with --entry ${checked.agent}`);
    }
    this.agentCalls = 0;
    const result = await this.callAgent(checked.agent, undefined, 0, this.entryHistory, [], { state: checked, decisions, hooks });
    return { answer: result.text, output: result.value, usage: this.usage.report(), events: this.events };
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

  private callAgent(name: string, input: unknown, depth: number, history: ModelMessage[], chain: string[], resumeFrom?: ResumeFrom): Promise<Answer> {
    return traceAgentCall(name, depth, this.project.agents.get(name)?.model, (span) => this.callAgentIn(span, name, input, depth, history, chain, resumeFrom));
  }

  private async callAgentIn(span: Span | undefined, name: string, input: unknown, depth: number, history: ModelMessage[], chain: string[], resumeFrom?: ResumeFrom): Promise<Answer> {
    const spec = this.project.agents.get(name);
    if (!spec) throw new Error(`no agent named ${JSON.stringify(name)} (agents: ${[...this.project.agents.keys()].join(", ")})`);
    const ai = await loadPeer<typeof import("ai")>(INTEGRATION_PACKAGES.ai);
    const step: CallContext["step"] = { messages: [], content: null };
    const model = this.observed(ai, await this.model(spec), name, depth, (content) => (step.content = content));
    const ctx: CallContext = { spec, depth, chain: [...chain, name], history, session: null, model, abort: new AbortController(), fatal: null, cleanups: [], step, inflight: new Map(), carried: [] };
    const stop = this.options.signal ? AbortSignal.any([this.options.signal, ctx.abort.signal]) : ctx.abort.signal;
    const prompt = resumeFrom ? `(resumed run ${resumeFrom.state.id})` : typeof input === "string" ? input : (JSON.stringify(input, null, 2) ?? "");
    this.emit(name, depth, { type: "agent_start", input: eventText(prompt) });
    try {
      const tools: Record<string, Tool> = {};
      const env = this.toolsetEnv(ctx);
      for (const t of await this.buildTools(ctx, env)) {
        tools[t.name] = ai.tool({
          description: t.description,
          inputSchema: t.inputSchema,
          execute: (args: unknown, opts: { abortSignal?: AbortSignal; toolCallId: string; messages: ModelMessage[] }) =>
            this.tracked(ctx, opts, t.name, () => this.invoke(ctx, t, args, opts.abortSignal ?? stop, "model", undefined, { toolCallId: opts.toolCallId })),
        } as Tool);
      }
      const messages = resumeFrom ? await this.resumedMessages(ai, ctx, env, resumeFrom, stop) : [...ctx.history, { role: "user", content: prompt } satisfies ModelMessage];
      // The skills toolset's catalog follows the agent's own instructions (read from the call's session).
      const system = [spec.instructions, spec.tools.includes("skills") ? await skillsSystemText(env) : ""].filter((t) => t !== "").join("\n\n");
      // With `output:` the model is asked for a JSON object of that schema (the SDK's structured output) and the answer is validated by it.
      const output = spec.output ? ai.Output.object({ schema: z.fromJSONSchema(spec.output as Parameters<typeof z.fromJSONSchema>[0]) }) : undefined;
      const result = await ai.generateText({
        model,
        ...(system ? { system } : {}),
        messages,
        tools,
        ...(output ? { output } : {}),
        stopWhen: ai.stepCountIs(spec.maxSteps),
        abortSignal: stop,
        // With an SDK registered, the AI SDK's own spans (each model request) join the agent's span; prompts and answers stay out.
        ...(telemetryRegistered() ? { experimental_telemetry: { isEnabled: true, recordInputs: false, recordOutputs: false } } : {}),
      });
      noteAgentUsage(span, result.totalUsage);
      ctx.history.splice(0, ctx.history.length, ...messages, ...result.response.messages);
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
  private observed(ai: typeof import("ai"), model: LanguageModel, agent: string, depth: number, onContent: (assistant: unknown[]) => void): LanguageModel {
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
          onContent(assistantContent(r.content));
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
  private async invoke<T>(ctx: CallContext, tool: CallableTool<T>, args: unknown, signal: AbortSignal, from: "model" | "code" = "model", hold?: () => () => void, call?: ToolCallRef): Promise<T | string> {
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
      const out = await tool.execute(runArgs, signal, call);
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
          durable: this.durable,
          ...(ctx.spec.agents.length ? { agents: this.agentsHost(ctx) } : {}),
        })),
      callableAgents: ctx.spec.agents.map((n) => this.project.agents.get(n)!),
      containerSession: this.project.config.code_mode.executor === "container",
      onPause: (pause, call) => this.settlePause(ctx, pause, call),
    };
  }

  /** Whether code sessions record their runs (pause for approvals): the option, else project.json. */
  private get durable(): boolean {
    return this.options.durable ?? this.project.config.code_mode.durable ?? false;
  }

  /** A model tool call, its result kept by id while it runs: a suspended step saves its siblings' results. */
  private tracked(ctx: CallContext, opts: { toolCallId: string; messages: ModelMessage[] }, toolName: string, run: () => Promise<unknown>): Promise<unknown> {
    // The SDK hands every call of a step the same messages array: a new one is a new step, whose
    // siblings are the only calls a suspension needs.
    if (opts.messages !== ctx.step.messages) {
      ctx.step.messages = opts.messages;
      ctx.inflight.clear();
    }
    const out = run();
    const settled = out.then(
      (value): StepResult => ({ toolCallId: opts.toolCallId, toolName, output: { type: "text", value: typeof value === "string" ? value : (JSON.stringify(value) ?? "") } }),
      (err: unknown): StepResult => ({ toolCallId: opts.toolCallId, toolName, output: { type: "error-text", value: err instanceof Error ? `${err.name}: ${err.message}` : String(err) } }),
    );
    ctx.inflight.set(opts.toolCallId, settled);
    return out;
  }

  /**
   * A durable code run paused: each pending call is decided as any approval is (the mode, the
   * session cache, the terminal or onApproval) and the run resumed, until it ends; run_code's
   * result is then what the model reads. With nobody to ask, the entry agent's run is suspended
   * (AgentRunPausedError); anywhere else the calls are rejected with the reason, as a blocking
   * approval would be.
   */
  private async settlePause(ctx: CallContext, pause: CodePause, call: ToolCallRef | undefined): Promise<string> {
    const { name } = ctx.spec;
    let current = pause;
    for (;;) {
      if (this.approvals.asksNobody && call && ctx.depth === 0 && ctx.step.content) await this.suspend(ctx, current, call);
      const decisions: Decision[] = [];
      for (const p of current.pending) {
        const tool = p.callable === null ? p.tool : `${p.tool}.${p.callable}`;
        const outcome = await this.approvals.decide({ agent: name, depth: ctx.depth, tool, args: p.args });
        this.emit(name, ctx.depth, { type: "approval", tool, approved: outcome.approved, how: outcome.approved ? outcome.how : outcome.reason });
        if (!outcome.approved) decisions.push({ id: p.id, decision: "reject", reason: outcome.reason });
        else if (outcome.how === "edited") decisions.push({ id: p.id, decision: "edit", args: outcome.args as Record<string, unknown> });
        else decisions.push({ id: p.id, decision: "approve" });
      }
      const next: CodeReply = await current.resume(decisions);
      if (!next.paused) return next.text;
      current = next.paused;
    }
  }

  /** Ends the entry run at a pause once the step's other tool calls are done: the error carries what resume() needs. */
  private async suspend(ctx: CallContext, pause: CodePause, call: ToolCallRef): Promise<never> {
    const siblings = [...ctx.inflight].filter(([id]) => id !== call.toolCallId).map(([, settled]) => settled);
    const results = [...ctx.carried, ...(await Promise.all(siblings))];
    const state: PausedAgentRun = {
      version: 1,
      id: pause.runId,
      agent: ctx.spec.name,
      messages: ctx.step.messages,
      assistant: ctx.step.content ?? [],
      results,
      code: { toolCallId: call.toolCallId, pending: pause.pending, continuation: pause.continuation },
      createdAt: new Date().toISOString(),
    };
    ctx.fatal = new AgentRunPausedError(state);
    ctx.abort.abort(ctx.fatal);
    throw ctx.fatal;
  }

  /**
   * The messages a resumed entry call goes on from: the suspended step with every tool result,
   * run_code's from the resumed code run (which may pause, and be decided or suspended, again).
   */
  private async resumedMessages(ai: typeof import("ai"), ctx: CallContext, env: ToolsetEnv, from: ResumeFrom, signal: AbortSignal): Promise<ModelMessage[]> {
    const { state, decisions, hooks } = from;
    const messages = ai.modelMessageSchema.array().safeParse(state.messages);
    const assistant = ai.assistantModelMessageSchema.safeParse({ role: "assistant", content: state.assistant });
    if (!messages.success || !assistant.success) throw new ValidationError(`paused run ${state.id}: its saved conversation is not valid model messages`);
    let results = state.results;
    if (state.code) {
      const code = state.code;
      ctx.step = { messages: messages.data, content: state.assistant };
      ctx.carried = results;
      const session = await env.session();
      const pause = pauseOf(session, { runId: state.id, pending: code.pending, continuation: code.continuation }, this.maxOutputChars, signal);
      const text = decisions ? await this.continueDecided(ctx, pause, decisions, { toolCallId: code.toolCallId }) : await this.settlePause(ctx, pause, { toolCallId: code.toolCallId });
      results = [...results, { toolCallId: code.toolCallId, toolName: "run_code", output: { type: "text", value: text } }];
      await hooks.onCodeResumed?.({ ...state, results, code: null });
    }
    return [...messages.data, assistant.data, { role: "tool", content: toolResults(state.assistant, results) }];
  }

  /** Resumes with decisions already given; a further pause is decided or suspended like the first. */
  private async continueDecided(ctx: CallContext, pause: CodePause, decisions: Decision[], call: ToolCallRef): Promise<string> {
    const next = await pause.resume(decisions);
    return next.paused ? this.settlePause(ctx, next.paused, call) : next.text;
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
  execute(args: unknown, signal: AbortSignal, call?: ToolCallRef): Promise<T>;
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

/**
 * A model response's content as an assistant message's parts: text, reasoning and tool calls (the
 * provider's input JSON parsed, as the SDK does). Other parts (sources, files) are not replayed.
 */
function assistantContent(content: ReadonlyArray<object & { type: string }>): unknown[] {
  const parts: unknown[] = [];
  for (const c of content) {
    if (c.type === "text") parts.push({ type: "text", text: (c as unknown as { text: string }).text });
    else if (c.type === "reasoning") parts.push({ type: "reasoning", text: (c as unknown as { text: string }).text });
    else if (c.type === "tool-call") {
      const call = c as unknown as { toolCallId: string; toolName: string; input: string };
      let input: unknown;
      try {
        input = JSON.parse(call.input);
      } catch {
        input = call.input;
      }
      parts.push({ type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input });
    }
  }
  return parts;
}

/** One tool-result part per tool call of the step, in its order; a call that never ended says so. */
function toolResults(assistant: unknown[], results: StepResult[]): Array<{ type: "tool-result"; toolCallId: string; toolName: string; output: StepResult["output"] }> {
  const byId = new Map(results.map((r) => [r.toolCallId, r]));
  return assistant.flatMap((part) => {
    const p = part as { type?: string; toolCallId?: string; toolName?: string };
    if (p.type !== "tool-call" || typeof p.toolCallId !== "string") return [];
    const r = byId.get(p.toolCallId);
    return [{ type: "tool-result" as const, toolCallId: p.toolCallId, toolName: p.toolName ?? "", output: r?.output ?? { type: "error-text" as const, value: "not run: the agent run paused before this call ended" } }];
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
