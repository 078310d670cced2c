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
export type { WorkflowParam } from "../storage/protocol.js";
