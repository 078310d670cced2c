/**
 * The MCP tools of a ts-code-mode server and their handlers. Each handler is a thin call into the
 * Session facade (or `session.dispatch`, the same host entry the agent's namespaces use, so checks
 * and error wording match what run_code sees) and returns readable text plus `structuredContent`
 * with the same data. A failure comes back as a tool error (`isError: true`) naming what was wrong;
 * it never ends the server.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { closestNames, didYouMean, NotFoundError } from "../errors.js";
import type { Session } from "../session.js";
import type { ArtifactData, ArtifactInfo } from "../storage/protocol.js";
import type { ToolListing } from "../tools/registry.js";
import type { WorkflowDetails, WorkflowSummary } from "../workflows/library.js";
import { DESCRIPTIONS, RUN_CODE_DESCRIPTION } from "./descriptions.js";
import {
  artifactSummary,
  bounded,
  formatArtifactList,
  formatRunResult,
  formatToolList,
  formatWorkflow,
  formatWorkflowList,
} from "./format.js";
import { inputs, outputs } from "./schemas.js";

export interface CodeModeToolsOptions {
  /** Longest text a tool returns, in characters; run_code's structured output is bounded too. */
  maxOutput: number;
  /** Whether add_dep and remove_dep are offered (runtime installs allowed and supported). */
  runtimeDeps: boolean;
  /** Where unexpected errors (bugs, not the agent's mistakes) are logged. */
  log: (line: string) => void;
}

interface Reply {
  text: string;
  structured: Record<string, unknown>;
  isError?: boolean;
}

/** Errors that describe the caller's input or data; anything else is also logged for a bug report. */
const EXPECTED_ERRORS: ReadonlySet<string> = new Set(["ValidationError", "NotFoundError", "InvalidNameError", "ToolError", "StorageError", "TypeError"]);

/** Registers the tools on `server`; returns their names in the order of `tools/list`. */
export function registerCodeModeTools(server: McpServer, session: Session, options: CodeModeToolsOptions): string[] {
  const { maxOutput } = options;
  const names: string[] = [];
  const send = (reply: Reply): CallToolResult => ({
    content: [{ type: "text", text: bounded(reply.text, maxOutput) }],
    structuredContent: reply.structured,
    ...(reply.isError ? { isError: true } : {}),
  });
  // Structured content is left out of a failure: clients validate it against the output schema.
  const fail = (err: unknown): CallToolResult => {
    const e = err instanceof Error ? err : new Error(String(err));
    if (!EXPECTED_ERRORS.has(e.name)) options.log(`tool handler failed: ${e.stack ?? e.message}`);
    return { content: [{ type: "text", text: bounded(`${e.name}: ${e.message}`, maxOutput) }], isError: true };
  };
  const guard =
    <A>(fn: (args: A) => Promise<Reply>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return send(await fn(args));
      } catch (err) {
        return fail(err);
      }
    };
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  names.push("run_code");
  server.registerTool(
    "run_code",
    { title: "Run TypeScript", description: RUN_CODE_DESCRIPTION, inputSchema: inputs.run_code, outputSchema: outputs.run_code, annotations: { openWorldHint: true } },
    guard(async ({ code, timeout_ms }) => {
      const result = await session.run(code, timeout_ms !== undefined ? { timeoutMs: timeout_ms } : {});
      const { text, structured } = formatRunResult(result, maxOutput);
      return { text, structured, isError: !result.ok };
    }),
  );

  // ---- tools ----
  names.push("list_tools", "search_tools", "describe_tool");
  server.registerTool(
    "list_tools",
    { description: DESCRIPTIONS.list_tools, outputSchema: outputs.list_tools, annotations: readOnly },
    guard(async () => {
      const tools = await session.listTools();
      return { text: formatToolList(tools, "No tools are configured (the server's tools folder has no tool YAML files)."), structured: { tools } };
    }),
  );
  server.registerTool(
    "search_tools",
    { description: DESCRIPTIONS.search_tools, inputSchema: inputs.search, outputSchema: outputs.search_tools, annotations: readOnly },
    guard(async ({ query, limit }) => {
      const tools: Array<ToolListing & { score: number }> = await session.searchTools(query, limit !== undefined ? { limit } : {});
      return { text: formatToolList(tools, `No tools match ${JSON.stringify(query)}. list_tools shows them all.`), structured: { tools } };
    }),
  );
  server.registerTool(
    "describe_tool",
    { description: DESCRIPTIONS.describe_tool, inputSchema: inputs.tool, outputSchema: outputs.describe_tool, annotations: readOnly },
    guard(async ({ name }) => {
      const declaration = await session.describeTool(name);
      return { text: declaration, structured: { name, declaration } };
    }),
  );

  // ---- workflows ----
  names.push("list_workflows", "search_workflows", "get_workflow", "create_workflow", "delete_workflow");
  server.registerTool(
    "list_workflows",
    { description: DESCRIPTIONS.list_workflows, outputSchema: outputs.list_workflows, annotations: readOnly },
    guard(async () => {
      const workflows = await session.listWorkflows();
      return { text: formatWorkflowList(workflows, "No workflows saved yet. create_workflow (or workflows.create in run_code) saves one."), structured: { workflows } };
    }),
  );
  server.registerTool(
    "search_workflows",
    { description: DESCRIPTIONS.search_workflows, inputSchema: inputs.search, outputSchema: outputs.search_workflows, annotations: readOnly },
    guard(async ({ query, limit }) => {
      const workflows: Array<WorkflowSummary & { score: number }> = await session.searchWorkflows(query, limit !== undefined ? { limit } : {});
      return { text: formatWorkflowList(workflows, `No workflows match ${JSON.stringify(query)}.`), structured: { workflows } };
    }),
  );
  server.registerTool(
    "get_workflow",
    { description: DESCRIPTIONS.get_workflow, inputSchema: inputs.workflow, outputSchema: outputs.get_workflow, annotations: readOnly },
    guard(async ({ name }) => {
      const workflow = await session.getWorkflow(name);
      if (!workflow) return notFoundWorkflow(session, name);
      return { text: formatWorkflow(workflow), structured: { workflow: plainWorkflow(workflow) } };
    }),
  );
  server.registerTool(
    "create_workflow",
    { description: DESCRIPTIONS.create_workflow, inputSchema: inputs.create_workflow, outputSchema: outputs.create_workflow },
    guard(async ({ name, source, description }) => {
      const workflow = await session.addWorkflow({ name, source, ...(description !== undefined ? { description } : {}) });
      const text = `Saved workflow ${workflow.name}. Run it in run_code with await workflows.${workflow.name}({ ...args }).\n\n${formatWorkflow(workflow)}`;
      return { text, structured: { workflow: plainWorkflow(workflow) } };
    }),
  );
  server.registerTool(
    "delete_workflow",
    { description: DESCRIPTIONS.delete_workflow, inputSchema: inputs.workflow, outputSchema: outputs.delete_workflow, annotations: { destructiveHint: true, idempotentHint: true } },
    guard(async ({ name }) => {
      const deleted = await session.removeWorkflow(name);
      return { text: deleted ? `Deleted workflow ${name}.` : `No workflow named ${JSON.stringify(name)}; nothing was deleted.`, structured: { name, deleted } };
    }),
  );

  // ---- artifacts ----
  names.push("list_artifacts", "load_artifact");
  server.registerTool(
    "list_artifacts",
    { description: DESCRIPTIONS.list_artifacts, outputSchema: outputs.list_artifacts, annotations: readOnly },
    guard(async () => {
      const artifacts = await session.listArtifacts();
      return { text: formatArtifactList(artifacts), structured: { artifacts } };
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
      return artifactReply(info, data);
    }),
  );

  // ---- deps ----
  names.push("list_deps");
  server.registerTool(
    "list_deps",
    { description: DESCRIPTIONS.list_deps, outputSchema: outputs.list_deps, annotations: readOnly },
    guard(async () => {
      const deps = (await session.dispatch("deps", "list", [])) as unknown[];
      const text = deps.length
        ? `${deps.length} package${deps.length === 1 ? "" : "s"}:\n${deps.map((d) => (typeof d === "string" ? d : JSON.stringify(d))).join("\n")}`
        : "No packages are listed. Packages installed next to the server's working directory can still be imported.";
      return { text, structured: { deps } };
    }),
  );
  if (options.runtimeDeps) {
    names.push("add_dep", "remove_dep");
    for (const [tool, op] of [["add_dep", "add"], ["remove_dep", "remove"]] as const) {
      server.registerTool(
        tool,
        { description: DESCRIPTIONS[tool], inputSchema: inputs.dep, outputSchema: outputs[tool] },
        guard(async ({ spec }) => {
          const result = await session.dispatch("deps", op, [spec]);
          return { text: `deps.${op}(${JSON.stringify(spec)}):\n${JSON.stringify(result, null, 2) ?? "done"}`, structured: { spec, result } };
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
  };
}

/** Text as text, JSON as JSON, bytes as base64 with a one-line summary (a model cannot read bytes). */
function artifactReply(info: ArtifactInfo, data: ArtifactData): Reply {
  const summary = artifactSummary(info);
  if (data instanceof Uint8Array) {
    const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
    return { text: `${summary}. The data is in the structured result as base64.`, structured: { artifact: info, base64 } };
  }
  if (typeof data === "string" && info.kind === "text") return { text: `${summary}:\n${data}`, structured: { artifact: info, text: data } };
  return { text: `${summary}:\n${JSON.stringify(data, null, 2)}`, structured: { artifact: info, json: data } };
}
