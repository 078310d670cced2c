export { compose, callName, type ToolCallContext, type ToolMiddleware } from "./types.js";
export {
  approval,
  auditLog,
  callsPerRun,
  policy,
  retry,
  DEFAULT_RETRY_CODES,
  type ApprovalDecision,
  type ApprovalOptions,
  type Approver,
  type AuditEvent,
  type AuditOptions,
  type PolicyOptions,
  type RetryOptions,
} from "./builtins.js";
export { globToRegExp } from "./glob.js";
