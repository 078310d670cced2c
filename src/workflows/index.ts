/** Workflows layer (host side): module format, parameter extraction, names, library. */
export { extractSignature, type WorkflowSignature, type WorkflowSyntaxError } from "./signature.js";
export {
  validateWorkflowName,
  isWellFormedWorkflowName,
  isReservedWorkflowName,
  RESERVED_WORKFLOW_NAMES,
  WORKFLOW_NAME_PATTERN,
  MAX_WORKFLOW_NAME_LENGTH,
} from "./names.js";
export {
  WorkflowLibrary,
  type WorkflowSummary,
  type WorkflowDetails,
  type CreateWorkflowInput,
  type WorkflowLibraryOptions,
  MAX_WORKFLOW_SOURCE_BYTES,
  MAX_WORKFLOW_DESCRIPTION_LENGTH,
  DEFAULT_SEARCH_LIMIT,
} from "./library.js";
export {
  UntrustedWorkflowError,
  WorkflowProtectedError,
  describeProvenance,
  trustOf,
  type TrustLevel,
  type WorkflowProvenance,
  type WorkflowPrincipal,
  type UntrustedWorkflowPolicy,
  type UntrustedWorkflowInfo,
} from "./provenance.js";
export type { WorkflowParam } from "../storage/protocol.js";
