/**
 * Agents as files on the Vercel AI SDK: load a project, run its entry. `runAgent` is the one-call
 * form; `createRuntime` keeps a runtime for several turns (a chat) and for reading usage and events.
 */
import { AgentRuntime, type AgentRunResult, type RuntimeOptions } from "./runtime.js";
import { loadProject, type Project } from "./files.js";

export { AgentRuntime, AgentCallLimitError, AgentCallRejectedError, MaxDepthError, PermissionDeniedError, type AgentRunResult, type EntryContext as AgentEntryContext, type RuntimeOptions as AgentRuntimeOptions } from "./runtime.js";
export { loadProject as loadAgentProject, type AgentSpec, type ApprovalMode, type Project as AgentProject, type ProjectConfig as AgentProjectConfig } from "./files.js";
export { APPROVAL_MODES, TOOLSET_NAMES } from "./names.js";
export { AgentFileError } from "./locate.js";
export { AgentRunPausedError, checkPausedRun, type PausedAgentRun } from "./paused-runs.js";
export type { ResumeHooks as AgentResumeHooks } from "./runtime.js";
export { defineToolset, type AgentToolset, type ToolsetCall, type ToolsetDefinition, type ToolsetInstance } from "./code-toolsets.js";
export type { ApprovalDecision as AgentApprovalDecision, ApprovalHandler as AgentApprovalHandler, ApprovalRequest as AgentApprovalRequest } from "./approvals.js";
export type { AgentModel } from "./model-type.js";
export type { AgentEvent, RuntimeEvent as AgentRuntimeEvent, Usage as AgentUsage, UsageReport as AgentUsageReport } from "./events.js";

/** A runtime for a project folder, its project.json, or an already loaded Project. */
export async function createRuntime(project: string | Project, options: RuntimeOptions = {}): Promise<AgentRuntime> {
  return new AgentRuntime(typeof project === "string" ? await loadProject(project) : project, options);
}

/**
 * Loads the project, runs its entry once with `input`, and returns the answer, usage and events.
 * `output` is the entry's validated value when it declares `output:` (name its type: runAgent<Review>(...)).
 */
export async function runAgent<Output = unknown>(project: string | Project, input: unknown, options: RuntimeOptions = {}): Promise<AgentRunResult<Output>> {
  return (await (await createRuntime(project, options)).run(input)) as AgentRunResult<Output>;
}
