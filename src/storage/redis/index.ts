export { RedisStorage, type IoredisClient, type RedisClientOptions, type RedisStorageOptions, type RedisUrlOptions } from "./storage.js";
export { RedisWorkflowStore, type ReplaceWorkflowsOptions } from "./workflows.js";
export { RedisArtifactStore } from "./artifacts.js";
export { RedisToolStore, loadToolDocuments, validateToolFileStem, type ToolDocument } from "./tools.js";
export { redisKeys, validatePrefix, type RedisKeys } from "./keys.js";
export { parseRedisUrl, redact, DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS } from "./connection.js";
