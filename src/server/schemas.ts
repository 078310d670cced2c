/**
 * The HTTP API of `ts-code-mode serve`, declared once: each route's request and response schemas
 * validate requests (app.ts) and become the OpenAPI document (openapi.ts), so the document cannot
 * drift from what the server accepts.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { NAMESPACES } from "../execution/host.js";
import { MAX_TIMEOUT_MS } from "../execution/options.js";
import { wireValueSchema } from "../execution/remote/wire.js";
import { MAX_CONTINUATION_CHARS } from "../runs/continuation.js";

const name = lazy(() => z.string().min(1).max(1_024));

export const errorBodySchema = lazy(() => z
  .object({
    error: z.object({
      name: z.string().describe("stable name, as in ExecutionResult.error: ValidationError, NotFoundError, ToolError, UnauthorizedError, ..."),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional().describe("ToolError fields, NotFoundError suggestions, ..."),
    }),
  })
  .describe("Every failure: a JSON body with a stable error name"));

export const storageDescriptorSchema = lazy(() => z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("file"), basePath: z.string().min(1).max(4_096), workspaceId: z.string().max(256).optional() }),
    z.strictObject({ type: z.literal("redis"), url: z.string().max(4_096).optional(), prefix: z.string().max(256), workspaceId: z.string().max(256).optional() }),
  ])
  .describe("The client's storage: must name the server's storage, unless the server was started with --client-storage (then it is opened; a redis url is needed)"));

export const createSessionSchema = lazy(() => z.strictObject({ storage: storageDescriptorSchema.optional() }));
export const capabilityReportSchema = lazy(() => z.object({ capabilities: z.array(z.string()), notes: z.array(z.string()) }));
export const sessionCreatedSchema = lazy(() => z.object({ id: z.string(), executor: z.string(), trust: z.enum(["trusted", "untrusted"]), capabilities: capabilityReportSchema, exec: z.boolean() }));

export const pendingCallSchema = lazy(() => z.object({
  id: z.string(),
  tool: z.string(),
  callable: z.string().nullable(),
  args: z.unknown(),
  reason: z.string(),
}));

export const runRequestSchema = lazy(() => z.strictObject({
  code: z.string().max(10_000_000),
  timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional(),
}));
export const executionResultSchema = lazy(() => z
  .object({
    ok: z.boolean(),
    value: z.unknown().describe("the value as JSON, when JSON can carry it"),
    wire: wireValueSchema.optional().describe("the exact value (for RemoteExecutor)"),
    display: z.string(),
    stdout: z.string(),
    stderr: z.string(),
    error: z.object({ name: z.string(), message: z.string(), stack: z.string().optional() }).nullable(),
    durationMs: z.number(),
    runId: z.string().optional().describe("durable sessions (serve --durable): the run's id in the ledger"),
    status: z.enum(["completed", "failed", "paused"]).optional().describe("durable sessions: how the run ended"),
    pending: z.array(pendingCallSchema).optional().describe("paused: the calls that wait for a decision"),
    continuation: z.string().optional().describe("paused: what POST /runs/{runId}/decisions takes, on any server sharing the storage"),
  })
  .describe("An ExecutionResult; with Accept: text/event-stream, `output` events ({ stream, text }) come first, then a `paused` event ({ runId, pending, continuation, display }) if the run paused, and this is the `result` event"));

export const decisionSchema = lazy(() => z.strictObject({
  id: z.string().min(1).max(64).describe("a pending call's id, e.g. call-49"),
  decision: z.enum(["approve", "edit", "reject"]),
  args: z.record(z.string(), z.unknown()).optional().describe("edit: the call's new arguments"),
  reason: z.string().max(2_000).optional().describe("reject: why (the agent's code reads it in the ToolError)"),
}));
export const decisionsRequestSchema = lazy(() => z.strictObject({
  continuation: z.string().min(1).max(MAX_CONTINUATION_CHARS).describe("the paused run's continuation (from its run result or paused event)"),
  decisions: z.array(decisionSchema).min(1).max(10_000).describe("one per pending call"),
  timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional(),
  session: z.string().min(1).max(200).optional().describe("resume in this open session (and its storage); default: a session of its own on the server's (or the workspace's) storage, closed after"),
}));
export const runListQuerySchema = lazy(() => z.object({ limit: z.coerce.number().int().min(1).max(10_000).optional() }));
const runSummarySchema = lazy(() => z.looseObject({
  id: z.string(),
  status: z.enum(["running", "paused", "completed", "failed", "rolled-back"]),
  executor: z.string(),
  calls: z.number(),
  bytes: z.number(),
  resumes: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  codePreview: z.string(),
  expiresAt: z.string().optional(),
}));
export const runListSchema = lazy(() => z.object({ runs: z.array(runSummarySchema) }));
export const runDetailSchema = lazy(() => z.object({
  run: runSummarySchema,
  calls: z.array(z.looseObject({ seq: z.number(), ns: z.string(), op: z.string(), state: z.enum(["applied", "pending", "rejected", "reverted"]) })).describe("every logged call with its state (arguments and results stay in the ledger)"),
  pending: z.array(pendingCallSchema).describe("a paused run's calls waiting for a decision"),
}));

export const execRequestSchema = lazy(() => z.strictObject({
  command: z.union([z.string().max(100_000), z.array(z.string().max(100_000)).min(1).max(10_000)]).describe("an argv array as is, or a string run under /bin/sh -c in the container"),
  timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional(),
  cwd: z.string().max(4_096).optional(),
}));
export const execResultSchema = lazy(() => z.object({ output: z.string(), exitCode: z.number(), truncated: z.boolean() }));

export const callRequestSchema = lazy(() => z.strictObject({ ns: z.enum(NAMESPACES), op: z.string().max(64), args: wireValueSchema }));
export const callReplySchema = lazy(() => z.object({ value: wireValueSchema }));

export const searchQuerySchema = lazy(() => z.object({ q: z.string().min(1).max(10_000), limit: z.coerce.number().int().min(1).max(1_000).optional() }));
export const nameQuerySchema = lazy(() => z.object({ name }));
export const toolCallSchema = lazy(() => z.strictObject({ callable: name.nullable().optional(), args: z.record(z.string(), z.unknown()).optional() }));
export const workflowCreateSchema = lazy(() => z.strictObject({ name, source: z.string().max(1_000_000), description: z.string().max(10_000).optional() }));
export const workflowInvokeSchema = lazy(() => z.strictObject({ args: z.record(z.string(), z.unknown()).optional() }));
export const approveSchema = lazy(() => z.strictObject({ source: z.string().max(1_000_000).optional() }));
export const depSpecSchema = lazy(() => z.strictObject({ spec: z.string().min(1).max(1_024) }));
export const valueReplySchema = lazy(() => z.object({ value: z.unknown() }));
export const okSchema = lazy(() => z.object({ ok: z.literal(true) }));
export const infoSchema = lazy(() => z.object({
  name: z.literal("ts-code-mode"),
  version: z.string(),
  executor: z.string(),
  capabilities: capabilityReportSchema,
  exec: z.boolean(),
  sessions: z.object({ open: z.number(), max: z.number(), idleTimeoutS: z.number() }),
  workspaceHeader: z.string().nullable(),
  clientStorage: z.boolean(),
}));

export type Method = "get" | "post" | "put" | "delete";

export interface RouteSpec {
  method: Method;
  /** OpenAPI path syntax: /sessions/{id}. */
  path: string;
  summary: string;
  auth: boolean;
  body?: z.ZodType;
  /** Raw bodies (artifact bytes): content types accepted. */
  rawBody?: string[];
  query?: z.ZodObject;
  response: z.ZodType | "bytes";
  stream?: boolean;
  status?: number;
}

const S = "/sessions/{id}";
/** Every route the server answers. app.ts registers exactly these. */
export const ROUTES = lazy(() => ({
  health: { method: "get", path: "/health", summary: "Liveness (no auth)", auth: false, response: z.object({ ok: z.literal(true) }) },
  info: { method: "get", path: "/info", summary: "Version, executor, capabilities, limits", auth: true, response: infoSchema },
  openapi: { method: "get", path: "/openapi.json", summary: "This document", auth: true, response: z.record(z.string(), z.unknown()) },
  createSession: { method: "post", path: "/sessions", summary: "Open a session (its id routes every later request; sessions live on the process that created them)", auth: true, body: createSessionSchema, response: sessionCreatedSchema, status: 201 },
  closeSession: { method: "delete", path: S, summary: "Close a session (its processes end)", auth: true, response: okSchema },
  run: { method: "post", path: `${S}/run`, summary: "Run code; Accept: text/event-stream streams output, and a disconnect cancels the run", auth: true, body: runRequestSchema, response: executionResultSchema, stream: true },
  cancel: { method: "post", path: `${S}/cancel`, summary: "Cancel the session's running code (its run answers with CancelledError)", auth: true, response: okSchema },
  reset: { method: "post", path: `${S}/reset`, summary: "Forget variables", auth: true, response: okSchema },
  exec: { method: "post", path: `${S}/exec`, summary: "Run a command where the executor can (501 NotSupportedError otherwise)", auth: true, body: execRequestSchema, response: execResultSchema },
  call: { method: "post", path: `${S}/call`, summary: "A namespace operation as the guest calls it (values in the wire codec)", auth: true, body: callRequestSchema, response: callReplySchema },
  listTools: { method: "get", path: `${S}/tools`, summary: "tools.list()", auth: true, response: valueReplySchema },
  searchTools: { method: "get", path: `${S}/tools/search`, summary: "tools.search(q, { limit })", auth: true, query: searchQuerySchema, response: valueReplySchema },
  describeTool: { method: "get", path: `${S}/tools/describe`, summary: "tools.describe(name): TypeScript declaration", auth: true, query: nameQuerySchema, response: valueReplySchema },
  callTool: { method: "post", path: `${S}/tools/call`, summary: "Call tools.<name>.<callable>(args)", auth: true, query: nameQuerySchema, body: toolCallSchema, response: valueReplySchema },
  listWorkflows: { method: "get", path: `${S}/workflows`, summary: "workflows.list()", auth: true, response: valueReplySchema },
  searchWorkflows: { method: "get", path: `${S}/workflows/search`, summary: "workflows.search(q, { limit })", auth: true, query: searchQuerySchema, response: valueReplySchema },
  getWorkflow: { method: "get", path: `${S}/workflows/get`, summary: "workflows.get(name) (null when missing)", auth: true, query: nameQuerySchema, response: valueReplySchema },
  createWorkflow: { method: "post", path: `${S}/workflows`, summary: "workflows.create({ name, source, description? })", auth: true, body: workflowCreateSchema, response: valueReplySchema },
  deleteWorkflow: { method: "delete", path: `${S}/workflows`, summary: "workflows.delete(name)", auth: true, query: nameQuerySchema, response: valueReplySchema },
  invokeWorkflow: { method: "post", path: `${S}/workflows/invoke`, summary: "workflows.invoke(name, args), run in the session", auth: true, query: nameQuerySchema, body: workflowInvokeSchema, response: executionResultSchema },
  approveWorkflow: { method: "post", path: `${S}/workflows/approve`, summary: "Vouch for a workflow an untrusted session saved", auth: true, query: nameQuerySchema, body: approveSchema, response: valueReplySchema },
  listArtifacts: { method: "get", path: `${S}/artifacts`, summary: "artifacts.list()", auth: true, response: valueReplySchema },
  getArtifact: { method: "get", path: `${S}/artifacts/info`, summary: "artifacts.get(name): metadata (null when missing)", auth: true, query: nameQuerySchema, response: valueReplySchema },
  loadArtifact: { method: "get", path: `${S}/artifacts/data`, summary: "artifacts.load(name): bytes as application/octet-stream, text as text/plain, JSON as application/json", auth: true, query: nameQuerySchema, response: "bytes" },
  saveArtifact: {
    method: "put",
    path: `${S}/artifacts/data`,
    summary: "artifacts.save(name, body): application/octet-stream saves bytes, text/plain text, application/json a JSON value; X-Artifact-Description and X-Artifact-Metadata (JSON object) headers",
    auth: true,
    query: nameQuerySchema,
    rawBody: ["application/octet-stream", "text/plain", "application/json"],
    response: valueReplySchema,
  },
  deleteArtifact: { method: "delete", path: `${S}/artifacts`, summary: "artifacts.delete(name)", auth: true, query: nameQuerySchema, response: valueReplySchema },
  listDeps: { method: "get", path: `${S}/deps`, summary: "deps.list()", auth: true, response: valueReplySchema },
  addDep: { method: "post", path: `${S}/deps`, summary: "deps.add(spec)", auth: true, body: depSpecSchema, response: valueReplySchema },
  removeDep: { method: "delete", path: `${S}/deps`, summary: "deps.remove(spec)", auth: true, query: z.object({ spec: z.string().min(1).max(1_024) }), response: valueReplySchema },
  syncDeps: { method: "post", path: `${S}/deps/sync`, summary: "deps.sync()", auth: true, response: valueReplySchema },
  listRuns: { method: "get", path: "/runs", summary: "The run ledger (durable runs), newest first; the workspace's with --workspace-header", auth: true, query: runListQuerySchema, response: runListSchema },
  getRun: { method: "get", path: "/runs/{id}", summary: "One run: its header, every logged call's state, and a paused run's pending calls", auth: true, response: runDetailSchema },
  decideRun: {
    method: "post",
    path: "/runs/{id}/decisions",
    summary: "Decide a paused run's pending calls (approve / edit args / reject with reason) and resume it (serve --durable); answers as POST run does, SSE included",
    auth: true,
    body: decisionsRequestSchema,
    response: executionResultSchema,
    stream: true,
  },
} as const satisfies Record<string, RouteSpec>));

export type RouteName = keyof typeof ROUTES;
