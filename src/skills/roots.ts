/**
 * Where clients keep skills besides our storage: `<project>/.agents/skills` and
 * `<project>/.claude/skills` (the spec's discovery folders). Discovery is opt-in; the result is
 * given to executors as `skillRoots`, in order (a later root wins a name clash).
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ValidationError } from "../errors.js";
import type { SkillFile } from "../storage/protocol.js";
import { MAX_SKILL_BYTES, MAX_SKILL_FILE_BYTES, MAX_SKILL_FILES } from "../storage/skill-names.js";

export const DISCOVERED_FOLDERS = [".agents/skills", ".claude/skills"] as const;

/** The discovery folders of `project` (default: the current folder) that exist, in spec order. */
export async function discoverSkillRoots(project: string = process.cwd()): Promise<string[]> {
  const out: string[] = [];
  for (const rel of DISCOVERED_FOLDERS) {
    const dir = path.resolve(project, rel);
    if ((await lstat(dir).catch(() => null))?.isDirectory()) out.push(dir);
  }
  return out;
}

/**
 * Every file of a skill folder on disk, for `skills add`: symlinks and dot-files are not taken,
 * and the per-file, per-skill and file-count limits of the stores apply while reading.
 */
export async function readSkillFolder(dir: string): Promise<SkillFile[]> {
  const out: SkillFile[] = [];
  let total = 0;
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > 8) throw new ValidationError(`${dir}: folders nested deeper than 8 levels`);
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(child, depth + 1);
      else if (e.isFile()) {
        const full = path.join(dir, child);
        const st = await lstat(full);
        if (st.size > MAX_SKILL_FILE_BYTES) throw new ValidationError(`${child} is ${st.size} bytes; a skill file may have at most 10 MB`);
        total += st.size;
        if (total > MAX_SKILL_BYTES) throw new ValidationError(`${dir} holds more than 64 MiB; a skill may hold at most that`);
        if (out.length >= MAX_SKILL_FILES) throw new ValidationError(`${dir} has more than ${MAX_SKILL_FILES} files`);
        out.push({ path: child, bytes: new Uint8Array(await readFile(full)) });
      }
    }
  };
  await walk("", 0);
  return out;
}
