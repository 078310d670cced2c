/**
 * What the three framework adapters share: the tools (name, description, input schema, handler)
 * and the system-prompt text. The texts and the result format are the MCP server's own
 * (src/mcp/descriptions.ts, src/mcp/format.ts), so a model sees the same run_code whichever way it
 * reaches ts-code-mode. Each framework file only wraps these specs in its framework's tool type;
 * nothing here imports a framework.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import type { ExecutionResult } from "../execution/protocol.js";
import { DESCRIPTIONS, RUN_CODE_DESCRIPTION } from "../mcp/descriptions.js";
import { bounded, formatRunResult, formatToolList, formatWorkflowList, type RunCodeOutput } from "../mcp/format.js";
import { DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT } from "../mcp/limits.js";
import { inputs } from "../mcp/schemas.js";
import type { Session } from "../session.js";
import { ValidationError } from "../errors.js";
import { count } from "../values/count.js";

export type { RunCodeOutput };

/** Decides whether one run_code call needs a human's approval (before any of its code runs). */
export type NeedsApproval = boolean | ((code: string) => boolean | Promise<boolean>);

export interface CodeModeToolsOptions {
  /** Also offer search_tools, describe_tool and search_workflows (the same data run_code reaches). Default false. */
  discovery?: boolean;
  /** Longest text a tool returns to the model, in characters. Default 24,000 (about 6,000 tokens). */
  maxOutput?: number;
  /**
   * Ask before run_code runs, through the framework's own approval mechanism (AI SDK and OpenAI
   * Agents `needsApproval`; LangChain: `codeModeApproval()` middleware). `true` asks for every
   * call; a function sees the code. Approval of single tool calls made *inside* the code is the
   * `approval()` tool middleware's job. Default false.
   */
  needsApproval?: NeedsApproval;
  /**
   * Durable sessions: a run_code call that resumes a paused run (its `resume` argument) goes
   * through the same framework approval, so the calls the code paused on are decided by a human,
   * not by the model that wrote the code. The model relays the pause (its resume call proposes the
   * decisions); the framework asks (AI SDK `tool-approval-request`, OpenAI Agents interruption,
   * LangChain `codeModeApproval()` interrupt); approving runs the proposal. Default true; false lets
   * the model's resume go on at once, as MCP's run_code does.
   */
  approveResume?: boolean;
}

/** What a tool returns: text for the model, the same data structured for programs. */
export interface ToolReply {
  text: string;
  structured: Record<string, unknown>;
  /** The run failed (or the lookup did): frameworks that can mark a result as an error do. */
  isError: boolean;
}

export interface RunCodeReply extends ToolReply {
  structured: RunCodeOutput;
}

/** One tool, framework-neutral. */
export interface ToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  description: string;
  inputSchema: z.ZodObject<Shape>;
  execute(input: z.infer<z.ZodObject<Shape>>, signal?: AbortSignal): Promise<ToolReply>;
}

/** Told to the model with a pause when its resume call goes to a human first (approveResume). */
const REVIEWED_RESUME = "A person reviews your resume call (its decisions) before the run goes on; if they deny it, the run stays paused: do not retry it, say what waits for them.";

/** The name options are given under in truncation notes the model reads. */
const LIMIT_NAME = "maxOutput";

export const runCodeInput = lazy(() => z.object(inputs.run_code));
/** run_code of a durable session: also `resume: { continuation, decisions }`, as the MCP server's (the pause's text says how). */
const runCodeResumableInput = lazy(() => z.object({ ...inputs.run_code, ...inputs.run_code_resume }));
export type RunCodeInput = z.infer<typeof runCodeResumableInput>;
type RunCodeShape = typeof inputs.run_code & typeof inputs.run_code_resume;
const searchInput = lazy(() => z.object(inputs.search));
const toolInput = lazy(() => z.object(inputs.tool));

/** The options with their defaults, checked (a bad value fails when the tools are made, not on the model's first call). */
export function resolveOptions(options: CodeModeToolsOptions = {}): Required<CodeModeToolsOptions> {
  const maxOutput = options.maxOutput ?? DEFAULT_MAX_OUTPUT;
  if (!Number.isInteger(maxOutput) || maxOutput < MIN_MAX_OUTPUT) {
    throw new ValidationError(`maxOutput must be a whole number of characters >= ${MIN_MAX_OUTPUT}; got ${String(options.maxOutput)}`);
  }
  const needsApproval = options.needsApproval ?? false;
  if (typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    throw new ValidationError(`needsApproval must be true, false or a function (code) => boolean; got ${typeof needsApproval}`);
  }
  const approveResume = options.approveResume ?? true;
  if (typeof approveResume !== "boolean") throw new ValidationError(`approveResume must be true or false; got ${typeof approveResume}`);
  return { discovery: options.discovery ?? false, maxOutput, needsApproval, approveResume };
}

/** Whether this run_code call must be approved first (the framework asks the human). */
export async function runNeedsApproval(needsApproval: NeedsApproval, code: string): Promise<boolean> {
  return typeof needsApproval === "function" ? (await needsApproval(code)) === true : needsApproval;
}

/** A run_code call that resumes a paused durable run (it carries `resume: { continuation, decisions }`). */
export function isResumption(input: Record<string, unknown>): boolean {
  return typeof input["resume"] === "object" && input["resume"] !== null;
}

/**
 * The framework's approval predicate for run_code, or undefined when no call can need one: a
 * resumption in a durable session (with `approveResume`), or code `needsApproval` flags. The
 * frameworks ask before a tool runs, never while it runs, so a pause *inside* the code is brought
 * to them as the model's next run_code call (the resumption), which is what they ask about.
 */
export function runCodeApproval(session: Session, options: Pick<Required<CodeModeToolsOptions>, "needsApproval" | "approveResume">): ((input: Record<string, unknown>) => Promise<boolean>) | undefined {
  const resumes = options.approveResume && session.isDurable;
  if (!resumes && options.needsApproval === false) return undefined;
  return async (input) => (resumes && isResumption(input)) || runNeedsApproval(options.needsApproval, String(input["code"]));
}

/**
 * The run_code tool: runs the code in the session; the result is trimmed to `maxOutput` as for MCP.
 * In a durable session a call that needs approval pauses the run: the reply says so (pending calls,
 * continuation) and run_code takes `resume` to go on; the application may instead call
 * `session.resume(structured.continuation, decisions)` itself.
 */
export function runCodeSpec(session: Session, maxOutput: number, approveResume = false): ToolSpec<RunCodeShape> {
  // Only a durable session offers `resume`: the default schema stays as small as before.
  const schema = (session.isDurable ? runCodeResumableInput : runCodeInput) as z.ZodObject<RunCodeShape>;
  const failed = (name: string, message: string): RunCodeReply => ({
    text: bounded(`--- error ---\n${name}: ${message}`, maxOutput, LIMIT_NAME),
    structured: { ok: false, display: "", stdout: "", stderr: "", error: { name, message }, durationMs: 0, cutChars: 0 },
    isError: true,
  });
  return {
    name: "run_code",
    description: RUN_CODE_DESCRIPTION,
    inputSchema: schema,
    async execute(input, signal): Promise<RunCodeReply> {
      // Not every framework validates (OpenAI Agents' non-strict tools do not): check here, and
      // answer a bad input as a failed run the model can read and correct.
      const parsed = schema.safeParse(input);
      if (!parsed.success) return failed("ValidationError", invalidInput("run_code", parsed.error));
      const { code, timeout_ms, resume } = parsed.data;
      const options = { ...(timeout_ms !== undefined ? { timeoutMs: timeout_ms } : {}), ...(signal ? { signal } : {}) };
      let result: ExecutionResult;
      try {
        // session.run never throws for the agent's code; resume throws its refusals (ContinuationUsedError, DecisionError, ...).
        result = resume ? await session.resume(resume.continuation, resume.decisions, options) : await session.run(code, options);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        return failed(e.name, e.message);
      }
      const formatted = formatRunResult(result, maxOutput, LIMIT_NAME);
      // The model relays the pause; it should know a person reviews what it proposes. (Appended
      // after the fitting, as the continuation is: cutting either would make the pause unusable.)
      const text = approveResume && result.status === "paused" ? `${formatted.text}\n${REVIEWED_RESUME}` : formatted.text;
      return { text, structured: formatted.structured, isError: !result.ok };
    },
  };
}

/** The optional discovery tools: the host-side twins of tools.search, tools.describe and workflows.search. */
export function discoverySpecs(session: Session, maxOutput: number): ToolSpec[] {
  /** A search tool: the query and limit checked, the hits as the MCP server lists them. */
  const search = <T>(name: string, description: string, find: (query: string, options: { limit?: number }) => Promise<T[]>, format: (hits: T[], empty: string) => string): ToolSpec<typeof inputs.search> => ({
    name,
    description,
    inputSchema: searchInput,
    execute: (input) =>
      reply(maxOutput, async () => {
        const { query, limit } = parse(searchInput, input, name);
        const hits = await find(query, limit !== undefined ? { limit } : {});
        return { text: format(hits, `No matches for ${JSON.stringify(query)}.`), structured: { hits } };
      }),
  });
  const describeTool: ToolSpec<typeof inputs.tool> = {
    name: "describe_tool",
    description: DESCRIPTIONS.describe_tool,
    inputSchema: toolInput,
    execute: (input) =>
      reply(maxOutput, async () => {
        const { name } = parse(toolInput, input, "describe_tool");
        return { text: await session.describeTool(name), structured: { name } };
      }),
  };
  return [
    search("search_tools", DESCRIPTIONS.search_tools, (q, o) => session.searchTools(q, o), formatToolList),
    describeTool,
    search("search_workflows", DESCRIPTIONS.search_workflows, (q, o) => session.searchWorkflows(q, o), formatWorkflowList),
  ] as ToolSpec[];
}

/** All the tools for these options, run_code first. */
export function toolSpecs(session: Session, options: Required<CodeModeToolsOptions>): ToolSpec[] {
  const specs: ToolSpec[] = [runCodeSpec(session, options.maxOutput, options.approveResume && session.isDurable) as unknown as ToolSpec];
  if (options.discovery) specs.push(...discoverySpecs(session, options.maxOutput));
  return specs;
}

/** "run_code: invalid input: ✖ Invalid input: expected string, received undefined → at code" */
function invalidInput(tool: string, error: z.ZodError): string {
  return `${tool}: invalid input: ${z.prettifyError(error).replace(/\n+/g, " ")}`;
}

function parse<T>(schema: z.ZodType<T>, input: unknown, tool: string): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new ValidationError(invalidInput(tool, parsed.error));
  return parsed.data;
}

/**
 * A lookup's reply with its text bounded; a failure (unknown tool, bad query) is a reply the model
 * reads, naming what was wrong, never an exception that ends the agent's loop. Only the text goes
 * to the model: the structured data of a discovery tool is for programs and is not bounded here.
 */
async function reply(maxOutput: number, fn: () => Promise<{ text: string; structured: Record<string, unknown> }>): Promise<ToolReply> {
  try {
    const { text, structured } = await fn();
    return { text: bounded(text, maxOutput, LIMIT_NAME), structured, isError: false };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    return { text: bounded(`${e.name}: ${e.message}`, maxOutput, LIMIT_NAME), structured: { error: { name: e.name, message: e.message } }, isError: true };
  }
}

/**
 * Text for the agent's system prompt: what run_code is for and what this session holds, as counts
 * (never the lists themselves, so the prompt stays the same few hundred characters with 5 tools
 * or 500; the model finds them with tools.search inside run_code). Skills are the exception, by
 * the Agent Skills spec: their catalog (name + description, about 100 tokens each) belongs in the
 * system prompt so the model knows when to load one; none when the session has no skills. It goes
 * here, not in the tool definitions, so the definitions' footprint never grows with the store.
 */
export async function codeModeSystemPrompt(session: Session): Promise<string> {
  const [tools, workflows, artifacts, catalog] = await Promise.all([session.listTools(), session.listWorkflows(), session.listArtifacts(), session.skillsCatalog()]);
  const lines = [
    "You can run TypeScript with the run_code tool. Prefer one run_code call that does several steps (loops, Promise.all) over many small calls.",
    "Inside run_code these namespaces are in scope; every call returns a Promise:",
    `- tools: ${count(tools.length, "tool")} (CLI commands and APIs). Find them with tools.search("what you need"), read one with tools.describe(name), call tools.<name>.<callable>({ ...args }).`,
    `- workflows: ${count(workflows.length, "saved workflow")}. workflows.search("task"), then workflows.<name>({ ...args }); save new ones with workflows.create.`,
    `- artifacts: ${count(artifacts.length, "stored artifact")}. artifacts.list(), artifacts.load(name), artifacts.save(name, data).`,
    "- deps: deps.list() shows the packages code may import.",
    "Return only what you need: long output is cut, so save large results as artifacts.",
  ];
  if (catalog === "") return lines.join("\n");
  return [
    ...lines,
    "Skills are instructions (and scripts) for specific tasks. When a task matches one below, read it first inside run_code with skills.load(name) (its `body`), then skills.read(name, path) for a file it names, or skills.run(name, script, args) where it says to run one.",
    catalog,
  ].join("\n");
}

