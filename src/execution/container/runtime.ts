/**
 * What ContainerExecutor needs once it starts a container: the engine client, the guest, exec,
 * the image check, orphan reaping, commands and skills inside. The executor imports this module on
 * its first start (issue 42, cold start): importing the package, or a session that never uses a
 * container, loads none of it (nor the built-ins it pulls in).
 */
export { dockerClient } from "./engine.js";
export { execIn, ShellAdapter, parseExecInput } from "./exec.js";
export { ContainerGuest } from "./guest.js";
export { buildCommandFor, imageExists } from "./image.js";
export { reapOrphans } from "./cleanup.js";
export { runSkillInContainer } from "./skill-run.js";
export { containerPlace, fixFor, runArgvIn } from "./command.js";
