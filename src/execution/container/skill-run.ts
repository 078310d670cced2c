/**
 * skills.run inside the container: the skill's files (SKILL.md and its resources, already checked
 * by the skill library) are put into a fresh folder under the container's tmpfs /tmp as a tar
 * (dockerode putArchive), the script runs as an argv through the one seam every in-container
 * program takes (command.ts's runArgvIn: no shell, its own process group, killed at the timeout
 * or when the run ends, output capped), and the folder is removed after. stdout is the result;
 * stderr is kept apart and quoted in the error of a failed run, so a script's warnings never
 * corrupt the output a program parses.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import type Docker from "dockerode";
import { ToolError } from "../../errors.js";
import type { CallContext } from "../../tools/protocol.js";
import { runArgvIn, type ProgramLauncher } from "./command.js";
import { MAX_EXEC_OUTPUT_CHARS } from "./exec.js";
import { tarOf, type TarEntry } from "./tar.js";

const DEFAULT_RUN_TIMEOUT_MS = 60_000;
const STDERR_TAIL_CHARS = 4_000;

export interface ContainerSkillRun {
  container: Docker.Container;
  workdir: string;
  /** "uid" or "uid:gid" of the container's user. */
  user: string;
  image: string;
  via?: ProgramLauncher;
}

export async function runSkillInContainer(on: ContainerSkillRun, skill: { name: string; files: Array<{ path: string; bytes: Uint8Array }> }, script: string, args: readonly string[], ctx: CallContext): Promise<string> {
  const [uid = 65534, gid = uid] = on.user.split(":").map(Number);
  const top = `tcm-skill-${randomUUID()}`;
  const entries: TarEntry[] = [{ path: top, mode: 0o700 }, { path: `${top}/${skill.name}`, mode: 0o755 }];
  const folders = new Set<string>();
  for (const f of skill.files) {
    for (let d = path.posix.dirname(f.path); d !== "."; d = path.posix.dirname(d)) folders.add(d);
  }
  for (const d of [...folders].sort()) entries.push({ path: `${top}/${skill.name}/${d}`, mode: 0o755 });
  for (const f of skill.files) entries.push({ path: `${top}/${skill.name}/${f.path}`, bytes: f.bytes, mode: f.path.startsWith("scripts/") ? 0o755 : 0o644 });
  await on.container.putArchive(tarOf(entries, { uid, gid }), { path: "/tmp" });

  const dir = `/tmp/${top}`;
  const file = `${dir}/${skill.name}/${script}`;
  const label = `skills.run("${skill.name}", "${script}")`;
  const where = { cwd: on.workdir, user: on.user, ...(on.via ? { via: on.via } : {}) };
  try {
    const argv = [...interpreter(file), file, ...args];
    const r = await runArgvIn(on.container, argv, { ...where, timeoutMs: ctx.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS, maxStdoutBytes: MAX_EXEC_OUTPUT_CHARS * 4, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    if (r.exitCode === 0 && !r.stopped && r.stdout.length <= MAX_EXEC_OUTPUT_CHARS) return r.stdout;
    const stderr = r.stderr.trim().slice(-STDERR_TAIL_CHARS);
    const missing = r.startError?.code === "ENOENT" ? `: '${argv[0]}' is not in the container image ${on.image}; add it with \`ts-code-mode image build --with ${argv[0]}\` (and use that image)` : "";
    const why =
      r.stopped === "cap" || r.stdout.length > MAX_EXEC_OUTPUT_CHARS
        ? `printed more than ${MAX_EXEC_OUTPUT_CHARS.toLocaleString("en-US")} characters`
        : r.stopped === "timeout" || r.exitCode === 124
          ? "was stopped at its timeout"
          : r.stopped === "abort"
            ? "was stopped (the run ended)"
            : r.startError
              ? "could not start"
              : `exited with code ${r.exitCode}`;
    throw new ToolError({
      tool: `skills.run(${skill.name}, ${script})`,
      callable: null,
      code: r.startError?.code === "ENOENT" ? "DEPENDENCY" : r.stopped === "timeout" || r.exitCode === 124 ? "TIMEOUT" : "INTERNAL",
      message: `${label} ${why} inside the container${missing}${stderr ? `: ${stderr}` : ""}`,
      ...(r.exitCode > 0 && r.exitCode !== 124 && !r.startError ? { exitCode: r.exitCode } : {}),
      ...(stderr ? { stderr } : {}),
    });
  } finally {
    await runArgvIn(on.container, ["rm", "-rf", "--", dir], { ...where, timeoutMs: 10_000 }).catch(() => undefined);
  }
}

/** The interpreter by extension, as on the host (src/skills/run.ts), with the container's node. */
function interpreter(file: string): string[] {
  const ext = path.posix.extname(file).toLowerCase();
  if (ext === ".py") return ["python3"];
  if (ext === ".js" || ext === ".mjs" || ext === ".cjs") return ["node"];
  if (ext === ".sh") return ["sh"];
  return [];
}
