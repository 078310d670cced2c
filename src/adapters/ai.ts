/**
 * `ts-code-mode/ai`: code mode as Vercel AI SDK 6 tools.
 *
 * ```ts
 * const result = await generateText({ model, tools: codeModeTools(session), system: await codeModeSystemPrompt(session), prompt, stopWhen: stepCountIs(10) });
 * ```
 *
 * run_code's output is the run's result trimmed for a model: `text` (what the model reads, via
 * `toModelOutput`; a failed run is sent as an error result) and `structured` (the same data for
 * programs and UIs). `needsApproval` maps to the SDK's own tool approval: the step ends with a
 * `tool-approval-request` and the code runs only after a `tool-approval-response` approves it.
 * In a durable session a call paused *inside* the code reaches the same flow: the model's
 * run_code call that resumes the run (`resume`, with its proposed decisions) ends the step with a
 * `tool-approval-request`; approving it resumes the run with those decisions, denying it leaves
 * the run paused and tells the model why (`approveResume`, default true).
 *
 * Your own AI SDK tools go in as they are: `new Session({ storage, tools: { getWeather, sendEmail } })`
 * gives `tools.getWeather(args)` inside the code. `createCodeModeTool(tools)` does both steps in
 * one call, the shape of the code-mode packages of the AI SDK and Cloudflare.
 */
import type { Tool, ToolSet } from "ai";
import { codeModeSystemPrompt, resolveOptions, runCodeApproval, toolSpecs, type CodeModeToolsOptions, type RunCodeInput, type RunCodeReply, type ToolReply, type ToolSpec } from "./core.js";
import { loadPeer } from "./peer.js";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Session } from "../session.js";
import type { Executor } from "../execution/protocol.js";
import { SubprocessExecutor } from "../execution/subprocess/executor.js";
import { FileStorage } from "../storage/file/storage.js";
import type { StorageBackend } from "../storage/protocol.js";
import { CodeToolSet, type CodeToolsInput } from "../tools/code/tool-set.js";

const ai = await loadPeer<typeof import("ai")>({ name: "ai", adapter: "ts-code-mode/ai", install: "ai@^6" });

export { codeModeSystemPrompt, type CodeModeToolsOptions, type RunCodeInput, type RunCodeReply, type ToolReply };
export { MissingPeerError } from "./peer.js";

/** The tools by name: run_code always; search_tools, describe_tool and search_workflows with `discovery: true`. */
export type CodeModeToolSet = ToolSet & { run_code: Tool<RunCodeInput, RunCodeReply> };

/** AI SDK tools for `generateText` / `streamText` / `Agent`, backed by `session` (started by you, closed by you). */
export function codeModeTools(session: Session, options: CodeModeToolsOptions = {}): CodeModeToolSet {
  const resolved = resolveOptions(options);
  const tools: Record<string, Tool<never, ToolReply>> = {};
  for (const spec of toolSpecs(session, resolved)) {
    tools[spec.name] = toAiTool(spec, spec.name === "run_code" ? runCodeApproval(session, resolved) : undefined);
  }
  return tools as CodeModeToolSet;
}

export interface CreateCodeModeToolOptions extends CodeModeToolsOptions {
  /**
   * Builds the executor that runs the code, given the tools (default: a SubprocessExecutor), e.g.
   * `({ tools }) => new SandboxExecutor({ tools })` for untrusted code.
   */
  executor?: (options: { tools: CodeToolSet }) => Executor;
  /** Where workflows and artifacts are kept (default: a FileStorage in a new temporary folder, removed by close()). */
  storage?: StorageBackend;
}

/** run_code as one AI SDK tool, with the session behind it (started on the first call). */
export type CodeModeTool = Tool<RunCodeInput, RunCodeReply> & {
  readonly session: Session;
  /** Closes the session (its executor, its temporary storage folder). */
  close(): Promise<void>;
};

/**
 * Your AI SDK tools (`{ getWeather: tool({...}) }`, or any `tools` option form) plus code mode, as
 * one AI SDK tool: `generateText({ model, tools: { codeMode: createCodeModeTool(tools) }, prompt })`.
 * Its description carries the tools' TypeScript declarations, so the model writes
 * `await tools.getWeather({ location })` without a lookup first.
 */
export function createCodeModeTool(tools: CodeToolsInput, options: CreateCodeModeToolOptions = {}): CodeModeTool {
  const { executor: makeExecutor, storage: givenStorage, ...rest } = options;
  const set = CodeToolSet.from(tools, "createCodeModeTool(tools)");
  const resolved = resolveOptions(rest);
  const tempDir = givenStorage ? undefined : mkdtempSync(path.join(os.tmpdir(), "ts-code-mode-"));
  const storage = givenStorage ?? new FileStorage({ basePath: tempDir! });
  const session = new Session({ storage, executor: makeExecutor ? makeExecutor({ tools: set }) : new SubprocessExecutor({ tools: set }) });
  const spec = toolSpecs(session, { ...resolved, discovery: false })[0]!;
  const description = `${spec.description}\n\nThe tools inside the code (\`tools.<name>(args)\`, each returns a Promise):\n\n${set.declarations()}`;
  const runCode = toAiTool({ ...spec, description }, runCodeApproval(session, resolved));
  return Object.assign(runCode as unknown as Tool<RunCodeInput, RunCodeReply>, {
    session,
    close: async () => {
      await session.close();
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    },
  });
}

function toAiTool(spec: ToolSpec, needsApproval: ((input: Record<string, unknown>) => Promise<boolean>) | undefined): Tool<never, ToolReply> {
  const t = ai.tool<Record<string, unknown>, ToolReply>({
    description: spec.description,
    inputSchema: spec.inputSchema,
    execute: (input, { abortSignal }) => spec.execute(input, abortSignal),
    // The model reads the text; a failed run is an error result, as MCP's isError.
    toModelOutput: ({ output }) => (output.isError ? { type: "error-text", value: output.text } : { type: "text", value: output.text }),
    ...(needsApproval ? { needsApproval } : {}),
  });
  return t as unknown as Tool<never, ToolReply>;
}
