/**
 * The MCP tools of a ts-code-mode server and their handlers. The default surface ("code") is
 * run_code alone: its description teaches discovery inside code (tools.search, tools.describe,
 * workflows.search, artifacts.list), so `tools/list` stays a few kilobytes whatever the store
 * holds. The "full" surface adds one tool per facade operation (list_tools, load_artifact, ...)
 * for hosts that want them. Each handler is a thin call into the Session facade (or
 * `session.dispatch`, the same host entry the agent's namespaces use, so checks and error wording
 * match what run_code sees) and returns readable text plus `structuredContent` with the same data,
 * both bounded by maxOutput (see ./bounds.ts). A failure comes back as a tool error
 * (`isError: true`) naming what was wrong; it never ends the server.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { closestNames, didYouMean, NotFoundError } from "../errors.js";
import type { Session } from "../session.js";
import type { ArtifactData, ArtifactInfo } from "../storage/protocol.js";
import type { ToolListing } from "../tools/registry.js";
import type { WorkflowDetails, WorkflowSummary } from "../workflows/library.js";
import { DESCRIPTIONS, OTHER_LANGUAGE_LINE, RUN_CODE_DESCRIPTION, RUN_PYTHON_CODE_DESCRIPTION } from "./descriptions.js";
import { artifactUri } from "./resources.js";
import {
  artifactSummary,
  bounded,
  formatArtifactList,
  formatRunResult,
  formatToolList,
  formatWorkflow,
  formatWorkflowList,
} from "./format.js";
import type { ClientApprovals } from "./approvals.js";
import { fitItems, fitText, truncationNote, type Truncation } from "./bounds.js";
import { startProgress, streamOutput, type ToolExtra } from "./progress.js";
import { inputs, outputs, runCodeInputWithLanguage, type McpLanguage } from "./schemas.js";
import type { Decision } from "../runs/recorder.js";

/** Which MCP tools are offered: run_code alone (the default), or one tool per facade operation too. */
export type McpSurface = "code" | "full";
export const MCP_SURFACES: readonly McpSurface[] = ["code", "full"];

export interface CodeModeToolsOptions {
  /** Longest text a tool returns, in characters; run_code's structured output is bounded too. */
  maxOutput: number;
  /** Whether add_dep and remove_dep are offered (runtime installs allowed and supported). */
  runtimeDeps: boolean;
  /** Where unexpected errors (bugs, not the agent's mistakes) are logged. */
  log: (line: string) => void;
  /** Default "code": run_code only. */
  surface?: McpSurface;
  /** Time between progress notifications of a long call (when the client asked for progress). */
  progressIntervalMs: number;
  /** Questions for tool-call approval are sent as part of the run_code request being served. */
  approvals?: ClientApprovals;
  /** Called after a call that may have changed workflows or artifacts (resources/list_changed). */
  onStoreChanged?: () => Promise<void>;
  /** The other language run_code offers through its `language` argument, and the session that runs it (made on first use). */
  otherLanguage?: { language: McpLanguage; session: () => Session };
}

interface Reply {
  text: string;
  structured: Record<string, unknown>;
  isError?: boolean;
  /** Set when the data was cut to fit: the text gets a note and the structured result this field. */
  truncated?: Truncation;
}

/** Room left in the text for a reply's summary line and truncation note when its data is cut to fit. */
const textRoom = (maxOutput: number) => maxOutput - Math.min(1_000, Math.floor(maxOutput / 2));

/** A run_code result is at most 2 × maxOutput (sections + value); anything past this is a bug, refused rather than sent. */
const STRUCTURED_SLACK = 4_096;

/** Errors that describe the caller's input or data; anything else is also logged for a bug report. */
const EXPECTED_ERRORS: ReadonlySet<string> = new Set(["ValidationError", "NotFoundError", "InvalidNameError", "ToolError", "StorageError", "TypeError"]);

/**
 * Registers the tools on `server`; returns their names in the order of `tools/list`.
 * @internal (createCodeModeServer's part; stripped from the published declarations, which do not
 * name the MCP SDK's types: the SDK is bundled in, so its types are not installed with us)
 */
export function registerCodeModeTools(server: McpServer, session: Session, options: CodeModeToolsOptions): string[] {
  const { maxOutput } = options;
  const names: string[] = [];
  const send = (reply: Reply): CallToolResult => {
    const text = reply.truncated ? `${reply.text}\n\n${truncationNote(reply.truncated)}` : reply.text;
    const structured = reply.truncated ? { ...reply.structured, truncated: reply.truncated } : reply.structured;
    // The last line of defence for the transport: a reply past its bound is a bug, not sent.
    if ((JSON.stringify(structured)?.length ?? 0) > 2 * maxOutput + STRUCTURED_SLACK) {
      options.log(`tool reply over its bound (a bug); refused: ${text.slice(0, 200)}`);
      return fail(new Error("The reply was too large to send; return less (filter or slice the data in run_code)"));
    }
    return {
      content: [{ type: "text", text: bounded(text, maxOutput) }],
      structuredContent: structured,
      ...(reply.isError ? { isError: true } : {}),
    };
  };
  // Structured content is left out of a failure: clients validate it against the output schema.
  const fail = (err: unknown): CallToolResult => {
    const e = err instanceof Error ? err : new Error(String(err));
    if (!EXPECTED_ERRORS.has(e.name)) options.log(`tool handler failed: ${e.stack ?? e.message}`);
    return { content: [{ type: "text", text: bounded(`${e.name}: ${e.message}`, maxOutput) }], isError: true };
  };
  const guard =
    <A>(fn: (args: A, extra: ToolExtra) => Promise<Reply>) =>
    async (args: A, extra: ToolExtra): Promise<CallToolResult> => {
      try {
        return send(await fn(args, extra));
      } catch (err) {
        return fail(err);
      }
    };
  /** For tools without arguments: the SDK then calls the handler with `extra` alone. */
  const guardNoArgs = (fn: () => Promise<Reply>) => {
    const guarded = guard(async () => fn());
    return (extra: ToolExtra) => guarded(undefined, extra);
  };
  const storeChanged = () => {
    options.onStoreChanged?.().catch((err: unknown) => options.log(`resources/list_changed failed: ${String(err)}`));
  };
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  names.push("run_code");
  // A Python session (PythonExecutor) is described in Python terms.
  const python = (session.executor as { language?: unknown }).language === "python";
  const language: McpLanguage = python ? "python" : "typescript";
  /** create_workflow without `language` saves in this language. */
  const defaultLanguage = language;
  const other = options.otherLanguage?.language !== language ? options.otherLanguage : undefined;
  const description = python ? RUN_PYTHON_CODE_DESCRIPTION : RUN_CODE_DESCRIPTION;
  // Both languages: one more line and a `language` argument; the other language's session starts on its first call.
  const baseInput = other ? runCodeInputWithLanguage(language) : inputs.run_code;
  const inputSchema = session.isDurable ? { ...baseInput, ...inputs.run_code_resume } : baseInput;
  const sessionFor = (wanted: McpLanguage | undefined): Session => (other && wanted === other.language ? other.session() : session);
  server.registerTool(
    "run_code",
    {
      title: other ? "Run code" : python ? "Run Python" : "Run TypeScript",
      description: other ? `${description}\n${OTHER_LANGUAGE_LINE[other.language]}` : description,
      inputSchema,
      outputSchema: outputs.run_code,
      annotations: { openWorldHint: true },
    },
    guard(async (args: { code: string; timeout_ms?: number | undefined; language?: McpLanguage | undefined; resume?: { continuation: string; decisions: Decision[] } | undefined }, extra) => {
      const { code, timeout_ms } = args;
      const session = sessionFor(args.language);
      const stop = startProgress(extra, "run_code", options.progressIntervalMs);
      // With a progress token, what the run prints is streamed as logging notifications.
      const log = streamOutput(extra, maxOutput);
      try {
        // A client's notifications/cancelled aborts extra.signal: the run stops as on a timeout.
        const runOptions = { ...(timeout_ms !== undefined ? { timeoutMs: timeout_ms } : {}), signal: extra.signal, ...(log ? { onOutput: log.onOutput } : {}) };
        // `resume`: a paused durable run goes on with the decisions (the code is the ledger's).
        const run = () => (args.resume ? session.resume(args.resume.continuation, args.resume.decisions, runOptions) : session.run(code, runOptions));
        const result = await (options.approvals ? options.approvals.during(extra, run) : run());
        const { text, structured } = formatRunResult(result, maxOutput);
        return { text, structured, isError: !result.ok };
      } finally {
        log?.close();
        stop();
        storeChanged();
      }
    }),
  );
  if (options.surface !== "full") return names;

  // ---- tools ----
  names.push("list_tools", "search_tools", "describe_tool");
  server.registerTool(
    "list_tools",
    { description: DESCRIPTIONS.list_tools, outputSchema: outputs.list_tools, annotations: readOnly },
    guardNoArgs(async () => {
      const all = await session.listTools();
      const { items: tools, truncated } = fitItems(all, textRoom(maxOutput));
      const reply: Reply = { text: formatToolList(tools, "No tools are configured (the server's tools folder has no tool YAML files)."), structured: { tools } };
      return truncated ? { ...reply, truncated: items(tools.length, all.length, `(await tools.list()).slice(${tools.length})`) } : reply;
    }),
  );
  server.registerTool(
    "search_tools",
    { description: DESCRIPTIONS.search_tools, inputSchema: inputs.search, outputSchema: outputs.search_tools, annotations: readOnly },
    guard(async ({ query, limit }) => {
      const all: Array<ToolListing & { score: number }> = await session.searchTools(query, limit !== undefined ? { limit } : {});
      const { items: tools, truncated } = fitItems(all, textRoom(maxOutput));
      const reply: Reply = { text: formatToolList(tools, `No tools match ${JSON.stringify(query)}. list_tools shows them all.`), structured: { tools } };
      return truncated ? { ...reply, truncated: items(tools.length, all.length, `(await tools.search(${JSON.stringify(query)})).slice(${tools.length})`) } : reply;
    }),
  );
  server.registerTool(
    "describe_tool",
    { description: DESCRIPTIONS.describe_tool, inputSchema: inputs.tool, outputSchema: outputs.describe_tool, annotations: readOnly },
    guard(async ({ name }) => {
      const full = await session.describeTool(name);
      const { text: declaration, truncated } = fitText(full, textRoom(maxOutput));
      const reply: Reply = { text: declaration, structured: { name, declaration } };
      return truncated ? { ...reply, truncated: chars(declaration.length, full.length, `(await tools.describe(${JSON.stringify(name)})).slice(start, end)`) } : reply;
    }),
  );

  // ---- workflows ----
  names.push("list_workflows", "search_workflows", "get_workflow", "create_workflow", "delete_workflow");
  server.registerTool(
    "list_workflows",
    { description: DESCRIPTIONS.list_workflows, outputSchema: outputs.list_workflows, annotations: readOnly },
    guardNoArgs(async () => {
      const all = await session.listWorkflows();
      const { items: workflows, truncated } = fitItems(all, textRoom(maxOutput));
      const reply: Reply = { text: formatWorkflowList(workflows, "No workflows saved yet. create_workflow (or workflows.create in run_code) saves one."), structured: { workflows } };
      return truncated ? { ...reply, truncated: items(workflows.length, all.length, `(await workflows.list()).slice(${workflows.length})`) } : reply;
    }),
  );
  server.registerTool(
    "search_workflows",
    { description: DESCRIPTIONS.search_workflows, inputSchema: inputs.search, outputSchema: outputs.search_workflows, annotations: readOnly },
    guard(async ({ query, limit }) => {
      const all: Array<WorkflowSummary & { score: number }> = await session.searchWorkflows(query, limit !== undefined ? { limit } : {});
      const { items: workflows, truncated } = fitItems(all, textRoom(maxOutput));
      const reply: Reply = { text: formatWorkflowList(workflows, `No workflows match ${JSON.stringify(query)}.`), structured: { workflows } };
      return truncated ? { ...reply, truncated: items(workflows.length, all.length, `(await workflows.search(${JSON.stringify(query)})).slice(${workflows.length})`) } : reply;
    }),
  );
  server.registerTool(
    "get_workflow",
    { description: DESCRIPTIONS.get_workflow, inputSchema: inputs.workflow, outputSchema: outputs.get_workflow, annotations: readOnly },
    guard(async ({ name }) => {
      const workflow = await session.getWorkflow(name);
      if (!workflow) return notFoundWorkflow(session, name);
      return workflowReply("", workflow, maxOutput);
    }),
  );
  server.registerTool(
    "create_workflow",
    { description: DESCRIPTIONS.create_workflow, inputSchema: inputs.create_workflow, outputSchema: outputs.create_workflow },
    guard(async ({ name, source, description, language }) => {
      // Without `language`, the workflow is in the language this server's run_code takes (a Python server's agent writes Python).
      const workflow = await session.addWorkflow({ name, source, ...(description !== undefined ? { description } : {}), language: language ?? defaultLanguage });
      storeChanged();
      return workflowReply(`Saved workflow ${workflow.name}. Run it in run_code with await workflows.${workflow.name}({ ...args }).\n\n`, workflow, maxOutput);
    }),
  );
  server.registerTool(
    "delete_workflow",
    { description: DESCRIPTIONS.delete_workflow, inputSchema: inputs.workflow, outputSchema: outputs.delete_workflow, annotations: { destructiveHint: true, idempotentHint: true } },
    guard(async ({ name }) => {
      const deleted = await session.removeWorkflow(name);
      storeChanged();
      return { text: deleted ? `Deleted workflow ${name}.` : `No workflow named ${JSON.stringify(name)}; nothing was deleted.`, structured: { name, deleted } };
    }),
  );

  // ---- artifacts ----
  names.push("list_artifacts", "load_artifact");
  server.registerTool(
    "list_artifacts",
    { description: DESCRIPTIONS.list_artifacts, outputSchema: outputs.list_artifacts, annotations: readOnly },
    guardNoArgs(async () => {
      const all = await session.listArtifacts();
      const { items: artifacts, truncated } = fitItems(all, textRoom(maxOutput));
      const reply: Reply = { text: formatArtifactList(artifacts), structured: { artifacts } };
      return truncated ? { ...reply, truncated: items(artifacts.length, all.length, `(await artifacts.list()).slice(${artifacts.length})`) } : reply;
    }),
  );
  server.registerTool(
    "load_artifact",
    { description: DESCRIPTIONS.load_artifact, inputSchema: inputs.artifact, outputSchema: outputs.load_artifact, annotations: readOnly },
    guard(async ({ name }) => {
      // Through dispatch: a missing artifact gets the same "Did you mean" error as artifacts.load.
      const data = (await session.dispatch("artifacts", "load", [name])) as ArtifactData;
      const info = (await session.dispatch("artifacts", "get", [name])) as ArtifactInfo | null;
      if (!info) throw new NotFoundError(`artifacts.load: ${JSON.stringify(name)} was deleted while it was being loaded`);
      return artifactReply(info, data, maxOutput);
    }),
  );

  // ---- deps ----
  names.push("list_deps");
  server.registerTool(
    "list_deps",
    { description: DESCRIPTIONS.list_deps, outputSchema: outputs.list_deps, annotations: readOnly },
    guardNoArgs(async () => {
      const all = (await session.dispatch("deps", "list", [])) as unknown[];
      const { items: deps, truncated } = fitItems(all, textRoom(maxOutput));
      const text = deps.length
        ? `${deps.length} package${deps.length === 1 ? "" : "s"}:\n${deps.map((d) => (typeof d === "string" ? d : JSON.stringify(d))).join("\n")}`
        : "No packages are listed. Packages installed next to the server's working directory can still be imported.";
      return { text, structured: { deps }, ...(truncated ? { truncated: items(deps.length, all.length, `(await deps.list()).slice(${deps.length})`) } : {}) };
    }),
  );
  if (options.runtimeDeps) {
    names.push("add_dep", "remove_dep");
    for (const [tool, op] of [["add_dep", "add"], ["remove_dep", "remove"]] as const) {
      server.registerTool(
        tool,
        { description: DESCRIPTIONS[tool], inputSchema: inputs.dep, outputSchema: outputs[tool] },
        guard(async ({ spec }, extra) => {
          // An install can take a while: heartbeats keep a client that resets its timeout on progress waiting.
          const stop = startProgress(extra, `deps.${op}`, options.progressIntervalMs);
          try {
            const result = await session.dispatch("deps", op, [spec]);
            return { text: `deps.${op}(${JSON.stringify(spec)}):\n${JSON.stringify(result, null, 2) ?? "done"}`, structured: { spec, result } };
          } finally {
            stop();
          }
        }),
      );
    }
  }
  return names;
}

/** A missing workflow is the caller's mistake: a tool error with the closest names. */
async function notFoundWorkflow(session: Session, name: string): Promise<Reply> {
  const names = (await session.listWorkflows()).map((w) => w.name);
  throw new NotFoundError(`No workflow named ${JSON.stringify(name)}.${didYouMean(name, names)} list_workflows shows them all.`, closestNames(name, names));
}

/** Only the documented fields: a store may carry more, and the output schema is what clients check. */
function plainWorkflow(w: WorkflowDetails): WorkflowDetails {
  return {
    name: w.name,
    description: w.description,
    params: w.params,
    source: w.source,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
    ...(w.author !== undefined ? { author: w.author } : {}),
    ...(w.provenance !== undefined ? { provenance: w.provenance } : {}),
    ...(w.language !== undefined ? { language: w.language } : {}),
  };
}

function items(shown: number, total: number, rest: string): Truncation {
  return { shown, total, unit: "items", rest };
}

function chars(shown: number, total: number, rest: string): Truncation {
  return { shown, total, unit: "characters", rest };
}

/** The workflow with its source cut to fit, when it is that long. */
function workflowReply(prefix: string, w: WorkflowDetails, maxOutput: number): Reply {
  const { text: source, truncated } = fitText(w.source, textRoom(maxOutput));
  const workflow = { ...plainWorkflow(w), source };
  const reply: Reply = { text: prefix + formatWorkflow(workflow), structured: { workflow } };
  return truncated ? { ...reply, truncated: chars(source.length, w.source.length, `(await workflows.get(${JSON.stringify(w.name)})).source.slice(start, end)`) } : reply;
}

/**
 * Text as text, JSON as JSON, bytes as base64 with a one-line summary (a model cannot read bytes).
 * Data larger than the limit is cut (text), or left out of the structured result (JSON, bytes),
 * and the note says how to read slices of it from code or as the artifact:// resource.
 */
function artifactReply(info: ArtifactInfo, data: ArtifactData, maxOutput: number): Reply {
  const summary = artifactSummary(info);
  const load = `(await artifacts.load(${JSON.stringify(info.name)}))`;
  const resource = ` or read the resource ${artifactUri(info.name)}`;
  if (data instanceof Uint8Array) {
    const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
    if (base64.length <= maxOutput) return { text: `${summary}. The data is in the structured result as base64.`, structured: { artifact: info, base64 } };
    return { text: `${summary}.`, structured: { artifact: info }, truncated: { shown: 0, total: data.byteLength, unit: "characters", rest: `${load}.subarray(start, end)${resource}` } };
  }
  if (typeof data === "string" && info.kind === "text") {
    const { text, truncated } = fitText(data, textRoom(maxOutput));
    const reply: Reply = { text: `${summary}:\n${text}`, structured: { artifact: info, text } };
    return truncated ? { ...reply, truncated: chars(text.length, data.length, `${load}.slice(start, end)${resource}`) } : reply;
  }
  const json = JSON.stringify(data, null, 2) ?? "null";
  if (json.length <= maxOutput) return { text: `${summary}:\n${json}`, structured: { artifact: info, json: data } };
  const shown = fitText(json, textRoom(maxOutput)).text;
  return { text: `${summary}:\n${shown}`, structured: { artifact: info }, truncated: chars(shown.length, json.length, `pick the part you need from ${load}${resource}`) };
}
