/**
 * The host's ProgramSpawner: argv started without a shell in its own process group (so a kill
 * reaches grandchildren), stdin/stdout/stderr as pipes. A container session's spawner
 * (execution/container/command.ts) has the same shape, so a toolable call is written once.
 */
import { spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import type { ProgramExit, ProgramOptions, RunningProgram } from "../protocol.js";
import { killGroup } from "./cli/run.js";

export function spawnOnHost(argv: readonly string[], options: ProgramOptions): RunningProgram {
  const executable = argv[0] ?? "";
  let child;
  try {
    child = spawn(executable, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], detached: true, shell: false, cwd: options.cwd, env: options.env, windowsHide: true });
  } catch (e) {
    // Synchronous failures (a NUL byte in an argument) are start errors like ENOENT.
    const none = new PassThrough();
    none.end();
    const message = e instanceof Error ? e.message : String(e);
    return { stdin: new PassThrough(), stdout: none, stderr: new PassThrough().end() as PassThrough, exit: Promise.resolve({ code: null, signal: null, startError: { code: "EINVAL", message } }), kill: () => undefined };
  }
  // A program that exits without reading stdin makes writes fail with EPIPE: not an error of the call.
  child.stdin.on("error", () => undefined);
  const exit = new Promise<ProgramExit>((resolve) => {
    let startError: NodeJS.ErrnoException | null = null;
    child.on("error", (e: NodeJS.ErrnoException) => {
      startError = e;
      if (child.pid === undefined) resolve({ code: null, signal: null, startError: { code: e.code ?? "EINVAL", message: e.message } });
    });
    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => {
      if (startError && child.pid === undefined) return;
      resolve({ code, signal });
    });
  });
  return { stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, exit, kill: () => killGroup(child), pid: child.pid };
}
