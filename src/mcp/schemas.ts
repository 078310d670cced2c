/**
 * Input and output schemas of the MCP tools. The SDK validates arguments against the input shapes
 * (a bad argument comes back as a tool error naming it) and turns the output schemas into JSON
 * Schema for `tools/list`; clients validate `structuredContent` against them, so they describe
 * exactly what the handlers return. Objects are loose (extra properties allowed): a field added to
 * a listing later must not make every client reject the result.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { paramSchema } from "../storage/workflow-record.js";
import { MAX_TIMEOUT_MS } from "../execution/options.js";

/** Upper bound of `limit` in the search tools; a model never needs more in one answer. */
export const MAX_SEARCH_LIMIT = 100;

const name = (what: string) => z.string().min(1).describe(what);

export const inputs = lazy(() => ({
  run_code: {
    code: z.string().min(1).describe("TypeScript or JavaScript to run; the value of the last expression is returned"),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe("Stop the run after this many milliseconds (default: the server's --timeout)"),
  },
  /** run_code's `resume` argument: offered only by a durable session (the default surface stays small). */
  run_code_resume: {
    resume: z
      .strictObject({
        continuation: z.string().min(1).max(4_096).describe("The continuation a paused run returned"),
        decisions: z
          .array(
            z.strictObject({
              id: z.string().describe("A pending call's id"),
              decision: z.enum(["approve", "edit", "reject"]),
              args: z.record(z.string(), z.unknown()).optional().describe('"edit": the call\'s new arguments'),
              reason: z.string().max(2_000).optional(),
            }),
          )
          .max(1_000),
      })
      .optional()
      .describe("Resume a paused durable run instead of running `code` (pass the run's code again, or any text): a decision for each pending call"),
  },
  search: {
    query: z.string().min(1).describe("Words describing the task"),
    limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional().describe("At most this many results (default 10)"),
  },
  tool: { name: name("Tool name, e.g. from search_tools") },
  workflow: { name: name("Workflow name") },
  create_workflow: {
    name: name("Identifier: letters, digits and _, not starting with a digit"),
    source: z.string().min(1).describe("TypeScript module exporting async function run({ ...params })"),
    description: z.string().optional().describe("What it does (default: the module's leading JSDoc)"),
    language: z.enum(["typescript", "python"]).optional().describe('"python": source is a Python module defining run(...); default: the language run_code takes'),
  },
  artifact: { name: name("Artifact name, e.g. scans/a.json") },
  dep: { spec: name('Package spec, e.g. "lodash@^4"') },
}));

/** The languages run_code can offer; a server offering two takes `language` per call. */
export const MCP_LANGUAGES = ["typescript", "python"] as const;
export type McpLanguage = (typeof MCP_LANGUAGES)[number];

/** run_code's input when the server offers both languages: `language` picks one, `defaultLanguage` when absent. */
export function runCodeInputWithLanguage(defaultLanguage: McpLanguage) {
  return {
    ...inputs.run_code,
    code: z.string().min(1).describe("Code in `language` to run; the value of the last expression is returned"),
    language: z.enum(MCP_LANGUAGES).optional().describe(`The code's language (default ${defaultLanguage})`),
  };
}

const executionError = lazy(() => z.looseObject({ name: z.string(), message: z.string(), stack: z.string().optional() }));

export const runCodeOutput = lazy(() => z.looseObject({
  ok: z.boolean(),
  /** Present when JSON holds the value exactly and it fits the output limit. */
  value: z.unknown().optional(),
  display: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  error: executionError.nullable(),
  durationMs: z.number(),
  /** Characters cut from display, stdout, stderr and error to stay within --max-output. */
  cutChars: z.number(),
  /** Durable sessions: the run's id and status; when paused, the pending calls and the continuation. */
  runId: z.string().optional(),
  status: z.enum(["completed", "failed", "paused"]).optional(),
  pending: z.array(z.looseObject({ id: z.string(), tool: z.string(), callable: z.string().nullable(), args: z.unknown(), reason: z.string() })).optional(),
  continuation: z.string().optional(),
}));

const callable = lazy(() => z.looseObject({ name: z.string(), description: z.string(), signature: z.string() }));
const toolListing = lazy(() => z.looseObject({
  name: z.string(),
  type: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  callables: z.array(callable),
  direct: z.looseObject({ description: z.string(), signature: z.string() }).nullable(),
}));
const scored = lazy(() => ({ score: z.number() }));

// The stored parameter shape (one definition), open to fields a later version adds.
const workflowParam = lazy(() => paramSchema.loose());
const workflowSummary = lazy(() => z.looseObject({ name: z.string(), description: z.string(), params: z.array(workflowParam) }));
const workflowDetails = lazy(() => workflowSummary.extend({
  source: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  author: z.string().optional(),
}));

const artifactInfo = lazy(() => z.looseObject({
  name: z.string(),
  kind: z.enum(["text", "bytes", "json"]),
  size: z.number(),
  description: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
}));

export const outputs = lazy(() => ({
  run_code: runCodeOutput,
  list_tools: z.looseObject({ tools: z.array(toolListing) }),
  search_tools: z.looseObject({ tools: z.array(toolListing.extend(scored)) }),
  describe_tool: z.looseObject({ name: z.string(), declaration: z.string() }),
  list_workflows: z.looseObject({ workflows: z.array(workflowSummary) }),
  search_workflows: z.looseObject({ workflows: z.array(workflowSummary.extend(scored)) }),
  get_workflow: z.looseObject({ workflow: workflowDetails }),
  create_workflow: z.looseObject({ workflow: workflowDetails }),
  delete_workflow: z.looseObject({ name: z.string(), deleted: z.boolean() }),
  list_artifacts: z.looseObject({ artifacts: z.array(artifactInfo) }),
  load_artifact: z.looseObject({
    artifact: artifactInfo,
    /** Exactly one of these, by kind. */
    text: z.string().optional(),
    json: z.unknown().optional(),
    base64: z.string().optional(),
  }),
  list_deps: z.looseObject({ deps: z.array(z.unknown()) }),
  add_dep: z.looseObject({ spec: z.string(), result: z.unknown() }),
  remove_dep: z.looseObject({ spec: z.string(), result: z.unknown() }),
}));
