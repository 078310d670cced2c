/**
 * The QuickJS engine as SandboxExecutor uses it: the instance (WebAssembly module, codec, the guest
 * bundle) and the guest's console methods. The executor imports this on its first sandbox start
 * (issue 42, cold start): importing the package, or a session with another executor, loads none of it.
 */
export { SandboxInstance } from "./instance.js";
export { CONSOLE_METHODS } from "./guest/runtime.js";
