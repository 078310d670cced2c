/**
 * Readable text for each MCP tool's result. The structured result carries the same data for
 * programs; this text is what a model reads, so it is compact, says how to use what it lists, and
 * never exceeds the output limit.
 */
import type { z } from "zod";
import type { ExecutionError, ExecutionResult } from "../execution/protocol.js";
import type { ArtifactInfo, WorkflowParam } from "../storage/protocol.js";
import type { ToolListing } from "../tools/registry.js";
import type { WorkflowDetails, WorkflowSummary } from "../workflows/library.js";
import { describeProvenance } from "../workflows/provenance.js";
import { exactJson } from "./json.js";
import type { runCodeOutput } from "./schemas.js";
import { cutMiddle, fitSections, renderSections, type Section } from "./truncate.js";
import { count } from "../values/count.js";

export type RunCodeOutput = z.infer<typeof runCodeOutput>;

/**
 * The run's value, stdout, stderr and error as labelled sections (empty ones left out), within
 * `maxChars`. `limit` names the setting in the truncation note: `--max-output` for the MCP server,
 * the option's name for the framework adapters (src/adapters), which share this one format.
 */
export function formatRunResult(result: ExecutionResult, maxChars: number, limit = "--max-output"): { text: string; structured: RunCodeOutput } {
  const sections: Section[] = [];
  // A pause's explanation is both its display and its error's message: the model reads it once.
  const pauseExplained = result.status === "paused" && result.error?.message === result.display;
  if (result.display !== "" && !pauseExplained) sections.push({ label: "value", text: result.display });
  if (result.stdout !== "") sections.push({ label: "stdout", text: result.stdout });
  if (result.stderr !== "") sections.push({ label: "stderr", text: result.stderr });
  if (result.error) sections.push({ label: "error", text: errorText(result.error) });

  const fitted = fitSections(sections, maxChars - truncationNote(Number.MAX_SAFE_INTEGER, maxChars, limit).length - 1);
  const get = (label: string) => fitted.sections.find((s) => s.label === label);
  let text = sections.length === 0 ? "(no value and no output)" : renderSections(fitted.sections);
  if (fitted.cut > 0) text += `\n${truncationNote(fitted.cut, maxChars, limit)}`;

  const structured: RunCodeOutput = {
    ok: result.ok,
    display: get("value")?.text ?? "",
    stdout: get("stdout")?.text ?? "",
    stderr: get("stderr")?.text ?? "",
    error: structuredError(result.error, get("error")),
    durationMs: Math.round(result.durationMs * 1000) / 1000,
    cutChars: fitted.cut,
  };
  const value = exactJson(result.value, maxChars);
  if (value !== undefined) structured.value = value;
  // A durable run's pause: the explanation is the error's text; what to resume with is structured.
  if (result.runId !== undefined) structured.runId = result.runId;
  if (result.status !== undefined) structured.status = result.status;
  if (result.pending) structured.pending = result.pending.map((p) => ({ ...p, args: exactJson(p.args, maxChars) ?? null }));
  if (result.continuation !== undefined) {
    structured.continuation = result.continuation;
    text += `\n\nTo go on, call run_code again with resume: { continuation: "${result.continuation}", decisions: [${(result.pending ?? []).map((p) => `{ id: "${p.id}", decision: "approve" }`).join(", ")}] } (or "edit" with args, or "reject" with a reason).`;
  }
  return { text, structured };
}

function truncationNote(cut: number, maxChars: number, limit: string): string {
  return `[output cut to ${maxChars.toLocaleString("en-US")} characters (${limit}): ${cut.toLocaleString("en-US")} characters left out; return less, or save big results with artifacts.save]`;
}

/** `Name: message` and the stack frames in the agent's code, without repeating the first line. */
function errorText(error: ExecutionError): string {
  const head = `${error.name}: ${error.message}`;
  if (!error.stack) return head;
  return error.stack.startsWith(head) ? error.stack : `${head}\n${error.stack}`;
}

/** The error as it was, unless its section had to be cut: then the cut text stands in for the message. */
function structuredError(error: ExecutionError | null, section: { text: string; cut: number } | undefined): RunCodeOutput["error"] {
  if (!error) return null;
  if (!section || section.cut === 0) return { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  return { name: error.name, message: section.text };
}

/** Room for cutMiddle's marker line, e.g. `\n[… 12,345,678 characters cut …]\n`. */
const MARKER_ROOM = 48;

/** Any other tool's text, cut in the middle (with cutMiddle's marker) when it is longer than `maxChars`. */
export function bounded(text: string, maxChars: number, limit = "--max-output"): string {
  if (text.length <= maxChars) return text;
  const note = `\n[text cut to ${maxChars.toLocaleString("en-US")} characters (${limit}); get what you need in run_code, a part at a time]`;
  return cutMiddle(text, Math.max(0, maxChars - note.length - MARKER_ROOM)) + note;
}

// ---- tools ----------------------------------------------------------------------------------------

export function formatToolList(tools: ReadonlyArray<ToolListing & { score?: number }>, empty: string): string {
  if (tools.length === 0) return empty;
  const head = `${count(tools.length, "tool")}. Call them in run_code as shown; describe_tool gives the full argument types.`;
  return [head, ...tools.map(formatTool)].join("\n\n");
}

function formatTool(t: ToolListing & { score?: number }): string {
  const score = t.score !== undefined ? ` (score ${t.score.toFixed(2)})` : "";
  const tags = t.tags.length ? ` [${t.tags.join(", ")}]` : "";
  const lines = [`${t.name} — ${oneLine(t.description)}${tags}${score}`];
  for (const c of t.callables) lines.push(`  tools.${t.name}.${c.signature}${c.description ? ` — ${oneLine(c.description)}` : ""}`);
  if (t.direct) lines.push(`  tools.${t.direct.signature}${t.direct.description ? ` — ${oneLine(t.direct.description)}` : ""}`);
  return lines.join("\n");
}

// ---- workflows ------------------------------------------------------------------------------------

export function formatWorkflowList(workflows: ReadonlyArray<WorkflowSummary & { score?: number }>, empty: string): string {
  if (workflows.length === 0) return empty;
  const head = `${count(workflows.length, "workflow")}. Run them in run_code with await workflows.<name>({ ...args }); get_workflow shows the source.`;
  const lines = workflows.map((w) => {
    const score = w.score !== undefined ? ` (score ${w.score.toFixed(2)})` : "";
    return `${signature(w)}${w.description ? ` — ${oneLine(w.description)}` : ""}${score}${w.provenance?.trust === "untrusted" ? " [untrusted]" : ""}`;
  });
  return [head, ...lines].join("\n");
}

export function formatWorkflow(w: WorkflowDetails): string {
  const lines = [`workflow ${signature(w)}`];
  if (w.description) lines.push(w.description);
  for (const p of w.params) lines.push(`  ${p.name}${p.required ? "" : "?"}: ${p.type}${p.default !== undefined ? ` = ${JSON.stringify(p.default)}` : p.defaultExpression !== undefined ? ` = ${p.defaultExpression}` : ""}${p.description ? ` — ${oneLine(p.description)}` : ""}`);
  lines.push(`created ${w.createdAt}, updated ${w.updatedAt}${w.author ? ` by ${w.author}` : ""}; ${describeProvenance(w.provenance)}`, "", "```ts", w.source.replace(/\n$/, ""), "```");
  return lines.join("\n");
}

/** `triple({ n: number; label?: string })`, the way run_code calls it. */
function signature(w: WorkflowSummary): string {
  if (w.params.length === 0) return `${w.name}()`;
  return `${w.name}({ ${w.params.map(param).join("; ")} })`;
}

function param(p: WorkflowParam): string {
  return `${p.name}${p.required ? "" : "?"}: ${p.type}`;
}

// ---- artifacts ------------------------------------------------------------------------------------

export function formatArtifactList(artifacts: readonly ArtifactInfo[]): string {
  if (artifacts.length === 0) return "No artifacts yet. Save one in run_code with await artifacts.save(name, data).";
  const head = `${count(artifacts.length, "artifact")}. Load one with load_artifact, or in run_code with await artifacts.load(name).`;
  return [head, ...artifacts.map((a) => `${a.name}  ${a.kind}  ${size(a.size)}${a.description ? `  — ${oneLine(a.description)}` : ""}`)].join("\n");
}

export function artifactSummary(a: ArtifactInfo): string {
  return `${a.kind} artifact ${JSON.stringify(a.name)}, ${size(a.size)}${a.description ? ` — ${oneLine(a.description)}` : ""}`;
}

export function size(bytes: number): string {
  return `${bytes.toLocaleString("en-US")} ${bytes === 1 ? "byte" : "bytes"}`;
}

// ---- helpers --------------------------------------------------------------------------------------


/** Descriptions from JSDoc span lines; a list shows one. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
