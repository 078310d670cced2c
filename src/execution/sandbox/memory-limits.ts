/** The QuickJS module's memory bounds, apart from wasm.ts so that SandboxExecutor validates `memoryMb` without loading the engine (issue 42). */
/** The module's own minimum (16 MB: heap start plus a 5 MB C stack); the memory limit must exceed it. */
export const MIN_MEMORY_MB = 32;
/** What the module's memory import allows (2 GB, wasm32 as built). */
export const MAX_MEMORY_MB = 2048;
