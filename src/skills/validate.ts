/**
 * Strict validation of skill folders on disk (`ts-code-mode skills validate [DIR]`): every problem
 * of each folder, in the wording of the reference validator (`skills-ref validate`). Reading is
 * bounded: SKILL.md over 10 MB is a problem, not a read.
 */
import { open, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { MAX_SKILL_FILE_BYTES, parseSkillMd, SKILL_FILE, validateFrontmatter } from "./spec.js";

/** Problems of one skill folder; empty when it is valid. */
export async function validateSkillDir(dir: string): Promise<string[]> {
  const resolved = path.resolve(dir);
  const st = await stat(resolved).catch(() => null);
  if (!st) return [`Path does not exist: ${resolved}`];
  if (!st.isDirectory()) return [`Not a directory: ${resolved}`];
  // The reference accepts a lower-case skill.md too.
  let file: string | null = null;
  for (const name of [SKILL_FILE, "skill.md"]) {
    const f = path.join(resolved, name);
    if ((await stat(f).catch(() => null))?.isFile()) {
      file = f;
      break;
    }
  }
  if (!file) return [`Missing required file: ${SKILL_FILE}`];
  const content = await readBounded(file);
  if (content === null) return [`${SKILL_FILE} is larger than 10 MB`];
  try {
    const { frontmatter } = parseSkillMd(content);
    return validateFrontmatter(frontmatter, path.basename(resolved));
  } catch (err) {
    return [(err as Error).message];
  }
}

/**
 * `dir` itself when it holds a SKILL.md, else each of its sub-folders: the folders to validate
 * (at most 10,000).
 */
export async function skillFoldersIn(dir: string): Promise<string[]> {
  const resolved = path.resolve(dir);
  if ((await stat(path.join(resolved, SKILL_FILE)).catch(() => null))?.isFile()) return [resolved];
  const entries = await readdir(resolved, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .slice(0, 10_000)
    .map((e) => path.join(resolved, e.name))
    .sort();
}

async function readBounded(file: string): Promise<string | null> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    if (size > MAX_SKILL_FILE_BYTES) return null;
    // One byte more than the size seen: a file that grows while we read is noticed, not followed.
    const buf = Buffer.alloc(size + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) return n > MAX_SKILL_FILE_BYTES ? null : buf.toString("utf8");
    }
    return buf.subarray(0, n).toString("utf8");
  } finally {
    await handle.close();
  }
}
