/**
 * Span and attribute names. OpenTelemetry semantic conventions where one exists (gen_ai.*, http.*,
 * rpc.*, error.type, mcp.*); ours under the one `code_mode.` prefix otherwise.
 */

/** The instrumentation scope our tracer and meter are named by. */
export const SCOPE = "ts-code-mode";

export const ATTR = {
  // semantic conventions
  errorType: "error.type",
  genAiOperation: "gen_ai.operation.name",
  genAiToolName: "gen_ai.tool.name",
  genAiToolCallId: "gen_ai.tool.call.id",
  genAiToolType: "gen_ai.tool.type",
  genAiAgentName: "gen_ai.agent.name",
  genAiRequestModel: "gen_ai.request.model",
  genAiInputTokens: "gen_ai.usage.input_tokens",
  genAiOutputTokens: "gen_ai.usage.output_tokens",
  httpMethod: "http.request.method",
  httpRoute: "http.route",
  httpStatus: "http.response.status_code",
  urlPath: "url.path",
  rpcSystem: "rpc.system",
  rpcService: "rpc.service",
  rpcMethod: "rpc.method",
  mcpMethod: "mcp.method.name",
  // ours
  executor: "code_mode.executor",
  language: "code_mode.language",
  ok: "code_mode.ok",
  runId: "code_mode.run.id",
  runDurationMs: "code_mode.run.duration_ms",
  runValueBytes: "code_mode.run.value_bytes",
  runCode: "code_mode.run.code",
  runValue: "code_mode.run.value",
  namespace: "code_mode.namespace",
  operation: "code_mode.operation",
  tool: "code_mode.tool",
  callable: "code_mode.tool.callable",
  toolType: "code_mode.tool.type",
  toolErrorCode: "code_mode.tool.error_code",
  toolRetries: "code_mode.tool.retries",
  toolApprovalWaits: "code_mode.tool.approval_waits",
  toolApprovalWaitMs: "code_mode.tool.approval_wait_ms",
  toolArgs: "code_mode.tool.args",
  toolResult: "code_mode.tool.result",
  target: "code_mode.target",
  agentDepth: "code_mode.agent.depth",
  restartReason: "code_mode.executor.restart_reason",
  errorSource: "code_mode.error.source",
} as const;

export const METRIC = {
  runs: "code_mode.runs",
  runDuration: "code_mode.run.duration",
  toolCalls: "code_mode.tool.calls",
  toolDuration: "code_mode.tool.duration",
  errors: "code_mode.errors",
  sessionsOpen: "code_mode.sessions.open",
  executorRestarts: "code_mode.executor.restarts",
  ledgerEntries: "code_mode.ledger.entries",
  ledgerBytes: "code_mode.ledger.bytes",
} as const;
