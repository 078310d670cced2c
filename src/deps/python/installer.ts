/**
 * pip for Python sessions: packages go into a virtual environment of their own (`<deps dir>/venv`),
 * made with the session's interpreter so the guest can import what is built for it. pip runs from
 * the venv by argv (no shell), each spec after `--`, with a timeout that kills its whole process
 * group and capped output (the one argv runner, ../../tools/adapters/cli/run.ts). Nothing about the
 * index is passed: pip reads the machine's configuration (pip.conf files, PIP_* variables) as it
 * would for the operator, so a local wheel index or a proxy configured there applies.
 */
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { ToolError } from "../../errors.js";
import { runCommand } from "../../tools/adapters/cli/run.js";
import type { InstallOptions, InstallOutcome } from "../installer.js";
import type { DepSpec } from "../spec.js";
import type { PackageManager } from "../service.js";
import { normalizePythonName, parsePythonSpec } from "./spec.js";

/** pip's stdout past this is not an install we want to wait for. */
const MAX_PIP_OUTPUT_BYTES = 4 * 1024 * 1024;
const OUTPUT_TAIL = 2_000;

export function venvOf(dir: string): string {
  return path.join(dir, "venv");
}

function venvPython(dir: string): string {
  return path.join(venvOf(dir), "bin", "python");
}

/** A pip PackageManager whose venv is made with `python` (a command on PATH or a path). */
export function pipPackages(python: string): PackageManager {
  return {
    label: "pip install",
    parse: (raw) => parsePythonSpec(raw),
    prepare: async (dir) => {
      await mkdir(dir, { recursive: true });
    },
    install: (specs, options) => pipInstall(python, specs, options),
    present: (dir, dep) => pythonPackagePresent(dir, dep),
  };
}

async function run(argv: string[], label: string, options: InstallOptions): Promise<InstallOutcome> {
  try {
    const stdout = await runCommand(argv, { tool: "deps", callable: "add", label, timeoutMs: options.timeoutMs, maxStdoutBytes: MAX_PIP_OUTPUT_BYTES, cwd: options.dir });
    if (options.onOutput) for (const line of stdout.split("\n")) if (line.trim()) options.onOutput(line);
    return { ok: true, output: stdout.slice(-OUTPUT_TAIL).trim() };
  } catch (err) {
    if (err instanceof ToolError && err.code === "DEPENDENCY") return { ok: false, output: `${label}: ${JSON.stringify(argv[0])} was not found; PythonExecutor's \`python\` option names the interpreter` };
    const message = err instanceof ToolError ? `${err.message}${err.stderr && !err.message.includes(err.stderr) ? `\n${err.stderr}` : ""}` : String(err);
    return { ok: false, output: message.slice(-OUTPUT_TAIL) };
  }
}

export async function pipInstall(python: string, specs: string[], options: InstallOptions): Promise<InstallOutcome> {
  const started = Date.now();
  await mkdir(options.dir, { recursive: true });
  if (!existsSync(venvPython(options.dir))) {
    // Made aside and renamed when complete: a venv stopped half-way (timeout) has a python but no
    // pip, and would fail every later install. `-m pip` never runs the path-bearing bin/ scripts.
    const partial = `${venvOf(options.dir)}.partial`;
    await rm(partial, { recursive: true, force: true });
    const made = await run([python, "-m", "venv", partial], "python -m venv", options);
    if (!made.ok) return made;
    await rename(partial, venvOf(options.dir));
  }
  const left = Math.max(1, options.timeoutMs - (Date.now() - started));
  // `--` ends pip's options: a spec can never be read as one (parsePythonSpec refuses them anyway).
  return run([venvPython(options.dir), "-m", "pip", "install", "--no-input", "--progress-bar", "off", "--", ...specs], "pip install", { ...options, timeoutMs: left });
}

/** Installed when the venv's site-packages holds a `<name>-<version>.dist-info` of that (normalised) name. */
async function pythonPackagePresent(dir: string, dep: DepSpec): Promise<boolean> {
  const lib = path.join(venvOf(dir), "lib");
  try {
    for (const version of await readdir(lib)) {
      const site = path.join(lib, version, "site-packages");
      const entries = await readdir(site).catch(() => [] as string[]);
      if (entries.some((e) => e.endsWith(".dist-info") && normalizePythonName(e.split("-")[0] ?? "") === dep.name)) return true;
    }
  } catch {
    return false;
  }
  return false;
}
