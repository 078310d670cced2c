/**
 * The first thing the bin does (issue 42 item 1, cold start): decide whether this process keeps
 * spare executor children (only the long-lived `mcp` and `serve` do; see spare-children.ts), and
 * for a `run` on the default subprocess executor, start its child right away, before commander, the
 * command's modules and the session are loaded, so the child's node start-up overlaps the host's
 * instead of following it. The session takes that child only when it would have started exactly
 * the same one (same environment, folder and import folders); otherwise the session's first child
 * ends it (it never keeps the process alive, and dies with it). Only Node's modules and small
 * leaves are loaded before the spawn (../execution/subprocess/node-child.ts): not the ChildHandle
 * and what it needs, which the session loads while the child starts.
 */
import path from "node:path";
import { startEarlyChild, stringEnv } from "../execution/subprocess/node-child.js";
import { setSpareChildren } from "../execution/subprocess/spare-children.js";

/** `run` flags after which the child would differ (or there is none): no early child then. */
const CHANGES_THE_CHILD = new Set(["--storage", "--language", "--remote", "--workspace", "--sessions-per-child", "--help", "-h"]);
/** As DEFAULT_BASE in ./shared.ts (not imported: that module loads what this one runs before). */
const DEFAULT_BASE = "./.code-mode";

export function prepareProcess(args: readonly string[]): void {
  const named = args.find((a) => !a.startsWith("-"));
  if (named !== "mcp" && named !== "serve") setSpareChildren(false);
  if (args[0] !== "run") return;
  let base = DEFAULT_BASE;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const value = eq < 0 ? args[i + 1] : arg.slice(eq + 1);
    if (CHANGES_THE_CHILD.has(flag)) return;
    if (flag === "--executor" && value !== "subprocess") return;
    if (flag === "--base" && value !== undefined) base = value;
    if ((flag === "--base" || flag === "--executor") && eq < 0) i++;
  }
  const cwd = process.cwd();
  // What SubprocessExecutor.spawn() gives a session on FileStorage(base): the deps folder, then cwd.
  const importBases = [path.join(path.resolve(base), "deps"), cwd];
  const env = { ...stringEnv(process.env), TS_CODE_MODE_IMPORT_BASES: JSON.stringify(importBases) };
  try {
    startEarlyChild({ maxMemoryMb: undefined, permissions: undefined, env, cwd });
  } catch {
    // Not startable here (no built child.js, ...): the session starts its child the ordinary way and reports why.
  }
}
