/**
 * skills.run inside the container: the skill's files (SKILL.md and its resources, already checked
 * by the skill library) are put into a fresh folder under the container's tmpfs /tmp as a tar
 * (dockerode putArchive), the script runs as an argv through the one exec path (exec.ts: no shell,
 * its own process group killed at the timeout, output capped), and the folder is removed after.
 * stdout is the result; stderr goes to a file beside the skill and is quoted in the error of a
 * failed run, so a script's warnings never corrupt the output a program parses.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import type Docker from "dockerode";
import { ToolError } from "../../errors.js";
import type { CallContext } from "../../tools/protocol.js";
import { execIn, MAX_EXEC_OUTPUT_CHARS } from "./exec.js";
import { tarOf, type TarEntry } from "./tar.js";

const DEFAULT_RUN_TIMEOUT_MS = 60_000;
const STDERR_TAIL_CHARS = 4_000;
/** Inside: removes the run's folder and prints the tail of the script's stderr. */
const CLEANUP = `const fs = require("node:fs"); const [dir, err, n] = process.argv.slice(1);
let t = ""; try { t = fs.readFileSync(err, "utf8"); } catch {}
fs.rmSync(dir, { recursive: true, force: true }); process.stdout.write(t.slice(-Number(n)));`;

/**
 * Inside: kills the process group of the script (the exec wrapper started it detached, so its
 * pid is its group's id), found in /proc as the process whose argv holds the script's unique path
 * (not a \`node -e\` helper: the wrapper and this one).
 */
const KILL = `const fs = require("node:fs"); const file = process.argv[1];
for (const p of fs.readdirSync("/proc")) {
  if (!/^\\d+$/.test(p) || Number(p) === process.pid) continue;
  let argv = []; try { argv = fs.readFileSync("/proc/" + p + "/cmdline", "utf8").split("\\0"); } catch { continue; }
  if (!argv.includes(file) || argv[0] === "node" && argv[1] === "-e") continue;
  try { process.kill(-Number(p), "SIGKILL"); } catch {}
}`;

export interface ContainerSkillRun {
  container: Docker.Container;
  workdir: string;
  /** "uid" or "uid:gid" of the container's user. */
  user: string;
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
  const errFile = `${dir}/stderr`;
  const label = `skills.run("${skill.name}", "${script}")`;
  // A run that ends early (timeout, cancel) kills the script's process group at once, not at its own deadline.
  const kill = () => void execIn(on.container, ["node", "-e", KILL, file], { timeoutMs: 10_000, workdir: on.workdir, user: on.user }).catch(() => undefined);
  ctx.signal?.addEventListener("abort", kill, { once: true });
  try {
    // sh only redirects stderr: the argv is passed as "$@", never parsed as shell words.
    const argv = ["/bin/sh", "-c", 'e="$1"; shift; exec "$@" 2>"$e"', "sh", errFile, ...interpreter(file), file, ...args];
    const r = await execIn(on.container, argv, { timeoutMs: ctx.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS, workdir: on.workdir, user: on.user });
    if (r.exitCode === 0 && !r.truncated) return r.output;
    const stderr = (await execIn(on.container, ["node", "-e", CLEANUP, dir, errFile, String(STDERR_TAIL_CHARS)], { timeoutMs: 10_000, workdir: on.workdir, user: on.user }).catch(() => null))?.output ?? "";
    const why = r.truncated ? `printed more than ${MAX_EXEC_OUTPUT_CHARS.toLocaleString("en-US")} characters` : r.exitCode === 124 ? "was stopped at its timeout" : `exited with code ${r.exitCode}`;
    throw new ToolError({
      tool: `skills.run(${skill.name}, ${script})`,
      callable: null,
      code: r.exitCode === 124 ? "TIMEOUT" : "INTERNAL",
      message: `${label} ${why} inside the container${stderr.trim() ? `: ${stderr.trim()}` : ""}`,
      ...(r.exitCode > 0 && r.exitCode !== 124 ? { exitCode: r.exitCode } : {}),
      ...(stderr.trim() ? { stderr: stderr.trim() } : {}),
    });
  } finally {
    ctx.signal?.removeEventListener("abort", kill);
    await execIn(on.container, ["node", "-e", CLEANUP, dir, errFile, "0"], { timeoutMs: 10_000, workdir: on.workdir, user: on.user }).catch(() => undefined);
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
