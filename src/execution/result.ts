/**
 * Building an ExecutionResult, the same way in every executor: the value is a structured-clone
 * copy (or undefined when it cannot be cloned), `display` is a bounded util.inspect rendering
 * (../values/display.ts: bounded in time whatever the value's shape), and anything thrown becomes
 * `{ name, message, stack }` with a stable name.
 */
import { renderValue } from "../values/display.js";
import type { ExecutionError, ExecutionResult } from "./protocol.js";

/** Longest `display` string; a model reads it, so beyond this it is cut with a visible marker. */
export const MAX_DISPLAY_CHARS = 20_000;

/** Cut `text` to `max` characters, saying how much was cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… [${text.length - max} more characters cut]`;
}

/** Readable rendering for an LLM. Strings are shown as they are; undefined shows as nothing. */
export function renderDisplay(value: unknown, max = MAX_DISPLAY_CHARS): string {
  if (value === undefined) return "";
  if (typeof value === "string") return truncate(value, max);
  let text: string;
  try {
    text = renderValue(value, max);
  } catch (err) {
    text = `[value could not be displayed: ${err instanceof Error ? err.message : String(err)}]`;
  }
  return truncate(text, max);
}

/** A structured-clone copy, or undefined for values that cannot cross (functions, proxies, sockets). */
export function cloneValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return typeof value === "function" || typeof value === "symbol" ? undefined : value;
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

/**
 * Anything the agent's code threw, as an ExecutionError. Errors from another realm (vm context)
 * fail `instanceof Error`, so this reads the fields instead.
 */
export function errorFromThrown(thrown: unknown): ExecutionError {
  if (typeof thrown === "object" && thrown !== null && typeof (thrown as Error).message === "string") {
    const e = thrown as Error & { code?: unknown };
    const name = typeof e.name === "string" && e.name ? e.name : "Error";
    const out: ExecutionError = { name, message: e.code === "ERR_ACCESS_DENIED" ? accessDeniedMessage(e) : e.message };
    if (typeof e.stack === "string") out.stack = cleanStack(out.message === e.message ? e.stack : e.stack.replace(e.message, out.message));
    return out;
  }
  return { name: "Error", message: `Uncaught ${renderDisplay(thrown, 2_000)}` };
}

/** Which executor option grants each of Node's permission-model permissions. */
const PERMISSION_OPTIONS: Record<string, string> = {
  FileSystemRead: "permissions.fsRead",
  FileSystemWrite: "permissions.fsWrite",
  ChildProcess: "permissions.childProcess",
};

/**
 * Node's permission model says only "Access to this API has been restricted"; its error carries
 * the permission and the path as properties. The agent (and whoever set `permissions`) needs both
 * in the message to know what was refused and which option would allow it.
 */
function accessDeniedMessage(e: Error & { permission?: unknown; resource?: unknown }): string {
  const permission = typeof e.permission === "string" ? e.permission : "unknown";
  const resource = typeof e.resource === "string" && e.resource ? ` for ${JSON.stringify(e.resource.slice(0, 500))}` : "";
  const option = PERMISSION_OPTIONS[permission];
  return `${e.message}: ${permission} denied${resource}${option ? ` (not granted by the executor's ${option})` : " (not available under the executor's permissions)"}`;
}

/**
 * Keeps the lines of a stack that point at the agent's code (snippets, workflows) and drops
 * executor internals, which only confuse a model.
 */
export function cleanStack(stack: string): string {
  const lines = stack.split("\n");
  const head: string[] = [];
  const frames: string[] = [];
  for (const line of lines) {
    if (/^\s+at /.test(line)) {
      if (line.includes("snippet") || line.includes("workflows/")) frames.push(line);
    } else if (frames.length === 0) head.push(line);
  }
  return [...head, ...frames].join("\n");
}

/** Result for an error raised before or around the agent's code (syntax, timeout, closed session). */
export function errorResult(error: ExecutionError, startedAt: number, output: { stdout?: string; stderr?: string } = {}): ExecutionResult {
  return {
    ok: false,
    value: undefined,
    display: "",
    stdout: output.stdout ?? "",
    stderr: output.stderr ?? "",
    error,
    durationMs: performance.now() - startedAt,
  };
}
