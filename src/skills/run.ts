/**
 * skills.run(name, script, args): runs a file from the skill's `scripts/` folder as an argv array,
 * without a shell, on the host of the session (the executor must say it can run commands). The
 * process gets its own group (killed whole on timeout or abort), a timeout and an output cap: the
 * one command runner of the CLI tools (src/tools/adapters/cli/run.ts) does all three.
 *
 * The interpreter comes from the extension (.py → python3, .js/.mjs/.cjs → this Node, .sh → sh);
 * any other file runs directly and must be executable. The script path is absolute, so no
 * argument can become an option of the interpreter. A store without files on disk (Redis) has its
 * skill copied to a private temp folder for the run, removed afterwards.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { lazy } from "../lazy.js";
import { ValidationError } from "../errors.js";
import { runCommand } from "../tools/adapters/cli/run.js";
import type { CallContext } from "../tools/protocol.js";
import { resourcePath, type SkillLibrary } from "./library.js";

export const MAX_RUN_ARGS = 1_000;
export const MAX_RUN_ARG_CHARS = 100_000;
/** Output a script may print before it is killed (the CLI tools' cap is larger; a skill's summary is small). */
export const MAX_RUN_STDOUT_BYTES = 4 * 1024 * 1024;
const DEFAULT_RUN_TIMEOUT_MS = 60_000;

export const runArgsSchema = lazy(() => z
  .array(z.string({ error: "each argument must be a string" }).max(MAX_RUN_ARG_CHARS, `an argument may have at most ${MAX_RUN_ARG_CHARS} characters`), {
    error: "args must be an array of strings (an argv; no shell is involved)",
  })
  .max(MAX_RUN_ARGS, `at most ${MAX_RUN_ARGS} arguments`));

/** The checks of every skills.run, wherever it runs: a file under scripts/ that the skill has, and the skill may be run here. */
async function scriptOf(library: SkillLibrary, name: string, script: string): Promise<Awaited<ReturnType<SkillLibrary["forRun"]>>> {
  resourcePath(script);
  if (!script.startsWith("scripts/")) throw new ValidationError(`only files under scripts/ can be run; got ${JSON.stringify(script)}`);
  const found = await library.forRun(name);
  if (!found.details.resources.includes(script)) {
    const scripts = found.details.resources.filter((r) => r.startsWith("scripts/"));
    throw new ValidationError(`skill "${name}" has no ${script}. Its scripts: ${scripts.join(", ") || "(none)"}`);
  }
  return found;
}

/** The files of a skill whose script is to run elsewhere (inside a container): SKILL.md and its resources, after the same checks. */
export async function skillFilesForRun(library: SkillLibrary, name: string, script: string): Promise<Array<{ path: string; bytes: Uint8Array }>> {
  const { store, details } = await scriptOf(library, name, script);
  const files: Array<{ path: string; bytes: Uint8Array }> = [];
  for (const f of ["SKILL.md", ...details.resources]) {
    const bytes = await store.read(name, f);
    if (bytes !== null) files.push({ path: f, bytes });
  }
  return files;
}

export async function runSkillScript(library: SkillLibrary, name: string, script: string, args: readonly string[], ctx: CallContext): Promise<string> {
  const { store, details } = await scriptOf(library, name, script);
  let folder = store.folder?.(name);
  let temp: string | undefined;
  try {
    if (!folder) {
      temp = await mkdtemp(path.join(tmpdir(), "tcm-skill-"));
      folder = path.join(temp, name);
      for (const f of [...details.resources, "SKILL.md"]) {
        const bytes = await store.read(name, f);
        if (bytes === null) continue;
        const target = path.join(folder, f);
        await mkdir(path.dirname(target), { recursive: true });
        await writeFile(target, bytes);
        if (f.startsWith("scripts/")) await chmod(target, 0o755);
      }
    }
    const file = path.join(folder, script);
    const argv = [...interpreter(file), file, ...args];
    return await runCommand(argv, {
      tool: `skills.run(${name}, ${script})`,
      label: `skills.run("${name}", "${script}")`,
      callable: null,
      timeoutMs: ctx.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
      maxStdoutBytes: MAX_RUN_STDOUT_BYTES,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } finally {
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}

function interpreter(file: string): string[] {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".py") return ["python3"];
  if (ext === ".js" || ext === ".mjs" || ext === ".cjs") return [process.execPath];
  if (ext === ".sh") return ["sh"];
  return [];
}
