/** Public API of ts-code-mode. */
export { Session, type SessionOptions, type FromBaseOptions } from "./session.js";
export { InProcessExecutor, type InProcessExecutorOptions } from "./execution/in-process/executor.js";
export { SubprocessExecutor, type SubprocessExecutorOptions } from "./execution/subprocess/executor.js";
export { SandboxExecutor, type SandboxExecutorOptions } from "./execution/sandbox/executor.js";
export { PythonExecutor, type PythonExecutorOptions } from "./execution/python/executor.js";
export type { ChildPermissions } from "./execution/subprocess/child-process.js";
export { HostServices, NAMESPACES, type Namespace, type HostServicesOptions } from "./execution/host.js";
export { DEFAULT_TIMEOUT_MS, type ExecutorOptions } from "./execution/options.js";
export { ALL_CAPABILITIES, isExecutor } from "./execution/protocol.js";
export type { Capability, CapabilityReport, ExecutionError, ExecutionResult, Executor, RunOptions } from "./execution/protocol.js";
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
} from "./storage/protocol.js";
export { FileStorage, type FileStorageOptions } from "./storage/file/index.js";
export { RedisStorage, loadToolDocuments, type RedisStorageOptions, type RedisUrlOptions, type RedisClientOptions, type ToolDocument } from "./storage/redis/index.js";
export { isStorageBackend, parseStorageDescriptor, storageFromDescriptor, validateArtifactName } from "./storage/index.js";
export * from "./tools/index.js";
export * from "./workflows/index.js";
export * from "./search/index.js";
export { SerialQueue } from "./serial-queue.js";
export { DepsService, FileDepsStore, parseDepSpec, depsServiceFor, type DepsConfig, type DepEntry, type DepSpec, type DepsStore, type InstallResult } from "./deps/index.js";
export {
  InvalidNameError,
  NotFoundError,
  StorageError,
  ToolError,
  ValidationError,
  type StorageErrorCode,
  type ToolErrorCode,
  type ToolErrorInit,
} from "./errors.js";
export * from "./agents/index.js";
export { ContainerExecutor, type ContainerExecutorOptions, type ContainerMount } from "./execution/container/executor.js";
export { buildImage, defaultImageTag, pruneContainers } from "./execution/container/public.js";
export type { ImageBuildOptions } from "./execution/container/image.js";
export type { PruneResult } from "./execution/container/cleanup.js";
export type { DockerodeClient, ExecOptions, ExecResult } from "./execution/container/types.js";
export { ContainerEngineError, SessionLostError } from "./errors.js";
export { RemoteExecutor, type RemoteExecutorOptions } from "./execution/remote/executor.js";
export type { HostFacade } from "./execution/protocol.js";
export * from "./skills/index.js";
export { setSpareChildren, spareChildren } from "./execution/subprocess/spare-children.js";
export { SharedChildren, type SharedChildrenOptions } from "./execution/subprocess/shared-children.js";
export { ExecutorPool, type ExecutorPoolOptions, type Prestartable } from "./execution/pool.js";
export * from "./runs/index.js";
export type { PendingCall } from "./execution/protocol.js";
export { configureTelemetry, type TelemetryOptions } from "./telemetry/content.js";
