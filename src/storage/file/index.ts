export { FileStorage, type FileStorageOptions } from "./storage.js";
export { FileWorkflowStore } from "./workflows.js";
export { FileArtifactStore } from "./artifacts.js";
