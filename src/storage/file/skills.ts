/**
 * Skills as folders: `<dir>/<name>/SKILL.md`, `<dir>/<name>/scripts/...`. The same class reads the
 * read-only roots a user configures (`.agents/skills`, `.claude/skills`), with `readOnly: true`.
 *
 * A save writes the whole new folder under `<dir>/.tmp/` and then renames it into place: that
 * rename is the skill's one commit point, so a reader never sees new SKILL.md with old scripts.
 * Replacing an existing folder takes a second rename (the old folder moves aside first): for that
 * instant a reader sees no skill, never a mixed one.
 *
 * Reading is confined and bounded: symlinks are not followed out of the skill's folder, at most
 * MAX_SKILL_FILES files are listed, and a file over MAX_SKILL_FILE_BYTES is not read.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, readdir, realpath, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ValidationError } from "../../errors.js";
import { compareNames } from "../names.js";
import { guardFs, isAlive, isErrno } from "../atomic.js";
import type { SkillFile, SkillStore } from "../protocol.js";
import { checkSkillFiles, skillBytes, skillsFull, MAX_SKILL_FILE_BYTES, MAX_SKILL_FILES, PROVENANCE_FILE, SKILL_FILE, skillNameProblem, validateSkillName, validateSkillPath } from "../skill-names.js";

export const SKILL_TEMP_DIR = ".tmp";
/** Deepest folder nesting listed inside a skill. */
const MAX_DEPTH = 8;

export class FileSkillStore implements SkillStore {
  constructor(
    readonly dir: string,
    private readonly options: { readOnly?: boolean; maxStoreBytes?: number } = {},
  ) {}

  location(name: string): string {
    return path.join(this.folder(name), SKILL_FILE);
  }

  folder(name: string): string {
    return path.join(this.dir, validateSkillName(name));
  }

  async names(): Promise<string[]> {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, "ENOENT", "ENOTDIR")) return [];
      throw err;
    }
    const names: string[] = [];
    for (const e of entries) {
      if (names.length >= 10_000) break;
      // A symlinked skill folder (common in ~/.claude/skills) counts when it points at a folder.
      if ((e.isDirectory() || e.isSymbolicLink()) && skillNameProblem(e.name) === null) names.push(e.name);
    }
    return names.sort(compareNames);
  }

  async files(name: string): Promise<Array<{ path: string; size: number }> | null> {
    // A save swaps the whole folder by rename. A walk that ran across a swap could mix the old
    // folder's top level with the new one's sub-folders: the folder's identity (inode) is checked
    // before and after, and the walk is repeated when it changed.
    for (let attempt = 0; attempt < 20; attempt++) {
      const root = await this.realFolder(name);
      if (root === null) return null;
      const before = await lstat(root).catch(() => null);
      const out = await guardFs("list skill", root, () => this.walk(root));
      const after = await lstat(root).catch(() => null);
      if (before && after && before.ino === after.ino && before.dev === after.dev) {
        return out.some((f) => f.path === SKILL_FILE) ? out.sort((a, b) => compareNames(a.path, b.path)) : null;
      }
    }
    throw new ValidationError(`skill "${name}" kept changing while it was listed; try again`);
  }

  private async walk(root: string): Promise<Array<{ path: string; size: number }>> {
    const out: Array<{ path: string; size: number }> = [];
    const walk = async (rel: string, depth: number): Promise<void> => {
      if (depth > MAX_DEPTH) return;
      const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => compareNames(a.name, b.name))) {
        if (out.length >= MAX_SKILL_FILES) return;
        if (e.name.startsWith(".")) continue;
        const child = rel ? `${rel}/${e.name}` : e.name;
        // Symlinks are not followed: a link could point anywhere on the host.
        if (e.isDirectory()) await walk(child, depth + 1);
        else if (e.isFile()) {
          const st = await lstat(path.join(root, child)).catch(() => null);
          if (st?.isFile()) out.push({ path: child, size: st.size });
        }
      }
    };
    await walk("", 0);
    return out;
  }

  async read(name: string, filePath: string): Promise<Uint8Array | null> {
    validateSkillPath(filePath);
    const root = await this.realFolder(name);
    if (root === null) return null;
    const target = path.join(root, filePath);
    // Every segment must be a real folder/file inside the skill: no symlink may lead out of it.
    let at = root;
    for (const segment of filePath.split("/")) {
      at = path.join(at, segment);
      const st = await lstat(at).catch(() => null);
      if (!st || st.isSymbolicLink()) return null;
    }
    return guardFs("read skill file", target, async () => {
      let handle;
      try {
        handle = await open(target, "r");
      } catch (err) {
        if (isErrno(err, "ENOENT", "ENOTDIR", "EISDIR")) return null;
        throw err;
      }
      try {
        const st = await handle.stat();
        if (!st.isFile()) return null;
        if (st.size > MAX_SKILL_FILE_BYTES) throw new ValidationError(`${filePath} of skill "${name}" is ${st.size} bytes; files over 10 MB are not read`);
        // Read at most the limit + 1 even if the file grows while we read.
        const buf = Buffer.alloc(Math.min(st.size, MAX_SKILL_FILE_BYTES) + 1);
        let n = 0;
        for (;;) {
          const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
          if (bytesRead === 0) break;
          n += bytesRead;
          if (n === buf.length) break;
        }
        if (n > MAX_SKILL_FILE_BYTES) throw new ValidationError(`${filePath} of skill "${name}" is over 10 MB; not read`);
        return new Uint8Array(buf.buffer, buf.byteOffset, n);
      } finally {
        await handle.close();
      }
    });
  }

  async save(name: string, files: readonly SkillFile[]): Promise<void> {
    validateSkillName(name);
    this.writable("save");
    checkSkillFiles(name, files);
    await this.checkQuota(name, skillBytes(files));
    const target = path.join(this.dir, name);
    const tmpDir = path.join(this.dir, SKILL_TEMP_DIR);
    const staging = path.join(tmpDir, `${name}.${process.pid}.${randomBytes(6).toString("hex")}`);
    await guardFs("save skill", target, async () => {
      await mkdir(staging, { recursive: true });
      try {
        for (const f of files) {
          const file = path.join(staging, f.path);
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, f.bytes, { mode: f.path.startsWith("scripts/") ? 0o755 : 0o644 });
        }
        // Another writer may put its folder in place between our two renames: move it aside and retry.
        for (let attempt = 0; ; attempt++) {
          try {
            await rename(staging, target);
            return;
          } catch (err) {
            if (!isErrno(err, "ENOTEMPTY", "EEXIST", "EISDIR", "ENOTDIR") || attempt >= 10) throw err;
            const aside = `${staging}.old${attempt}`;
            try {
              await rename(target, aside);
            } catch (e) {
              if (!isErrno(e, "ENOENT")) throw e;
            }
            await rm(aside, { recursive: true, force: true });
          }
        }
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    });
  }

  async delete(name: string): Promise<boolean> {
    validateSkillName(name);
    this.writable("delete");
    const target = path.join(this.dir, name);
    const aside = path.join(this.dir, SKILL_TEMP_DIR, `${name}.${process.pid}.${randomBytes(6).toString("hex")}.deleted`);
    return guardFs("delete skill", target, async () => {
      await mkdir(path.dirname(aside), { recursive: true });
      try {
        // One rename takes it away at once; the removal of the files happens out of sight.
        await rename(target, aside);
      } catch (err) {
        if (isErrno(err, "ENOENT")) return false;
        throw err;
      }
      await rm(aside, { recursive: true, force: true });
      return true;
    });
  }

  /**
   * The store-wide quota: the other skills plus this save must fit in `maxStoreBytes`. Exact
   * within one process; like the artifacts' quota, writers in other processes are seen when they land.
   */
  private async checkQuota(name: string, size: number): Promise<void> {
    const limit = this.options.maxStoreBytes;
    if (limit === undefined) return;
    let used = 0;
    for (const other of await this.names()) {
      if (other === name) continue;
      for (const f of (await this.files(other)) ?? []) used += f.size;
    }
    if (used + size > limit) throw skillsFull(name, size, used, limit);
  }

  /**
   * Removes what killed writers left in `.tmp/` (staged or set-aside folders named
   * `<name>.<pid>.<hex>…`) once older than `maxAgeMs` and their writer is gone. Never throws.
   */
  async sweep(maxAgeMs: number): Promise<number> {
    const tmp = path.join(this.dir, SKILL_TEMP_DIR);
    const entries = await readdir(tmp).catch((): string[] => []);
    let removed = 0;
    for (const entry of entries) {
      const m = /^[^.]+\.(\d+)\.[0-9a-f]{12}/.exec(entry);
      if (!m) continue;
      try {
        const st = await lstat(path.join(tmp, entry));
        if (Date.now() - st.mtimeMs < maxAgeMs || isAlive(Number(m[1]))) continue;
        await rm(path.join(tmp, entry), { recursive: true, force: true });
        removed++;
      } catch {
        // gone already: a sweep is housekeeping
      }
    }
    return removed;
  }

  /** The skill's folder with symlinks resolved (a symlinked skill folder is allowed), or null. */
  private async realFolder(name: string): Promise<string | null> {
    try {
      const real = await realpath(this.folder(name));
      const st = await lstat(real);
      return st.isDirectory() ? real : null;
    } catch (err) {
      if (isErrno(err, "ENOENT", "ENOTDIR", "ELOOP")) return null;
      throw err;
    }
  }

  private writable(op: string): void {
    if (this.options.readOnly) throw new ValidationError(`cannot ${op}: ${this.dir} is a read-only skills folder`);
  }
}

export { PROVENANCE_FILE };
