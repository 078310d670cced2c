export type {
  ArtifactData,
  ArtifactInfo,
  ArtifactProblem,
  ArtifactKind,
  ArtifactStore,
  JsonValue,
  SaveArtifactOptions,
  StorageBackend,
  StorageDescriptor,
  WorkflowParam,
  WorkflowFileProblem,
  WorkflowRecord,
  WorkflowStore,
} from "./protocol.js";
export { DEFAULT_MAX_ARTIFACT_BYTES, DEFAULT_MAX_STORE_BYTES, type QuotaOptions } from "./quota.js";
export { isStorageBackend } from "./protocol.js";
export { FileArtifactStore, FileStorage, FileWorkflowStore, type FileStorageOptions } from "./file/index.js";
export {
  RedisArtifactStore,
  RedisStorage,
  RedisToolStore,
  RedisWorkflowStore,
  loadToolDocuments,
  type RedisClientOptions,
  type RedisStorageOptions,
  type RedisUrlOptions,
  type ToolDocument,
} from "./redis/index.js";
export { parseStorageDescriptor, storageFromDescriptor } from "./descriptor.js";
export {
  MAX_NAME_BYTES,
  MAX_SEGMENT_BYTES,
  MAX_WORKFLOW_NAME_LENGTH,
  WORKFLOW_NAME_PATTERN,
  artifactNameProblem,
  validateArtifactName,
  validateWorkflowName,
  validateWorkspaceId,
} from "./names.js";
