/**
 * Skills as folders: `<dir>/<name>/SKILL.md`, `<dir>/<name>/scripts/...`. The same class reads the
 * read-only roots a user configures (`.agents/skills`, `.claude/skills`), with `readOnly: true`.
 *
 * A stored skill is an immutable version folder plus a pointer (issue 35.1):
 *
 *   <dir>/<name>                         symlink → `.versions/<name>.<pid>.<hex>` (relative)
 *   <dir>/.versions/<name>.<pid>.<hex>/  SKILL.md, scripts/, ... — never changed once written
 *
 * A save writes a new version folder, then renames a new symlink over `<dir>/<name>`. Replacing a
 * symlink by rename is atomic, so that rename is the save's one commit point: a reader resolves the
 * pointer to the old version or the new one, never to nothing, and a SIGKILL at any moment leaves
 * the old pointer (and its folder) or the new one. Folders (a folder and a file cannot be swapped
 * in one rename, which is why the old design had a moment with no skill) are never moved.
 *
 * Garbage: after its commit a save removes the versions of that name no pointer refers to, except
 * those another save may still be about to point at: versions of this process's saves in flight,
 * and versions whose writer (the pid in the name) is another live process. A dead writer's version
 * goes at the next save of that name or on open (`sweep`). A reader that resolved the pointer just
 * before a save removed the old version finds files missing, sees that the pointer moved, and reads
 * again (`files`, `read`); an unchanged pointer means the answer stands.
 *
 * A skill folder that is a real folder (a store written by an older version, or copied in by hand)
 * is moved to `.versions/<name>.<pid>.<hex>.legacy` by its first replace, then the pointer is made.
 * For that one moment the pointer is missing: readers then read the `.legacy` folder, and a
 * SIGKILL in between leaves it for the next open, which moves it back when no pointer was made.
 *
 * Reading is confined and bounded: symlinks are not followed out of the skill's folder, at most
 * MAX_SKILL_FILES files are listed, and a file over MAX_SKILL_FILE_BYTES is not read.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, readdir, readlink, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { ValidationError } from "../../errors.js";
import { compareNames } from "../names.js";
import { guardFs, isAlive, isErrno } from "../atomic.js";
import { faultPoint } from "../faults.js";
import type { SkillFile, SkillStore } from "../protocol.js";
import { checkSkillFiles, skillBytes, skillsFull, MAX_SKILL_FILE_BYTES, MAX_SKILL_FILES, PROVENANCE_FILE, SKILL_FILE, skillNameProblem, validateSkillName, validateSkillPath } from "../skill-names.js";

export const SKILL_TEMP_DIR = ".tmp";
/** Immutable version folders, `<name>.<pid>.<12 hex>` (plus `.legacy` for a migrated real folder). */
export const SKILL_VERSIONS_DIR = ".versions";
const VERSION_NAME = /^([^.]+)\.(\d+)\.[0-9a-f]{12}(\.legacy)?$/;
/** Versions this process is writing and has not pointed at yet: never garbage. */
const inFlight = new Set<string>();
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
    // A real folder being moved aside for its first pointer is still a skill (see the top of this file).
    if (!this.options.readOnly) {
      for (const e of await readdir(path.join(this.dir, SKILL_VERSIONS_DIR)).catch((): string[] => [])) {
        const legacyOf = e.endsWith(".legacy") ? VERSION_NAME.exec(e)?.[1] : undefined;
        if (legacyOf !== undefined && !names.includes(legacyOf)) names.push(legacyOf);
      }
    }
    return names.sort(compareNames);
  }

  async files(name: string): Promise<Array<{ path: string; size: number }> | null> {
    // A save moves the pointer; the version it left may be removed while we walk it. The folder's
    // identity (resolved path and inode) is checked before and after, and the walk is repeated
    // when it changed: an unchanged identity means the walk read one whole version.
    for (let attempt = 0; attempt < 100; attempt++) {
      const root = await this.realFolder(name);
      if (root === null) return null;
      const before = await lstat(root).catch(() => null);
      const out = await guardFs("list skill", root, () => this.walk(root));
      const again = await this.realFolder(name);
      const after = again === root ? await lstat(root).catch(() => null) : null;
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
    for (let attempt = 0; attempt < 100; attempt++) {
      const root = await this.realFolder(name);
      if (root === null) return null;
      const bytes = await this.readIn(root, name, filePath);
      // Missing: the version may have been removed after a save moved the pointer; ask again.
      if (bytes !== null || (await this.realFolder(name)) === root) return bytes;
    }
    throw new ValidationError(`skill "${name}" kept changing while ${filePath} was read; try again`);
  }

  private async readIn(root: string, name: string, filePath: string): Promise<Uint8Array | null> {
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
    const versions = path.join(this.dir, SKILL_VERSIONS_DIR);
    const id = `${name}.${process.pid}.${randomBytes(6).toString("hex")}`;
    const version = path.join(versions, id);
    const link = path.join(this.dir, SKILL_TEMP_DIR, `${id}.link`);
    await guardFs("save skill", target, async () => {
      inFlight.add(version);
      try {
        await mkdir(version, { recursive: true });
        for (const f of files) {
          const file = path.join(version, f.path);
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, f.bytes, { mode: f.path.startsWith("scripts/") ? 0o755 : 0o644 });
        }
        await mkdir(path.dirname(link), { recursive: true });
        await symlink(path.join(SKILL_VERSIONS_DIR, id), link);
        faultPoint("temp-written", target);
        await this.commitPointer(link, target, name);
        faultPoint("committed", target);
      } catch (err) {
        await rm(link, { force: true });
        // Unless the pointer reached it (a failure after the commit), the version is garbage.
        if ((await this.pointsAt(target)) !== id) await rm(version, { recursive: true, force: true });
        throw err;
      } finally {
        inFlight.delete(version);
      }
      await this.collect(name);
    });
  }

  /** Renames the new symlink over the pointer; a real folder in the way is moved to `.versions` first (once). */
  private async commitPointer(link: string, target: string, name: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await rename(link, target);
        return;
      } catch (err) {
        if (!isErrno(err, "EISDIR", "ENOTEMPTY", "EEXIST", "ENOTDIR") || attempt >= 10) throw err;
        // A real folder: the layout of an older version, or one copied in by hand. Readers read the
        // `.legacy` folder until the pointer exists (realFolder); a crash here is undone on open.
        const legacy = path.join(this.dir, SKILL_VERSIONS_DIR, `${name}.${process.pid}.${randomBytes(6).toString("hex")}.legacy`);
        inFlight.add(legacy);
        try {
          await rename(target, legacy);
          await rename(link, target);
          return;
        } catch (e) {
          if (!isErrno(e, "ENOENT", "EISDIR", "ENOTEMPTY", "EEXIST", "ENOTDIR")) throw e;
        } finally {
          inFlight.delete(legacy);
        }
      }
    }
  }

  /** The version id the pointer `<dir>/<name>` names, or null (no pointer, or a real folder). */
  private async pointsAt(target: string): Promise<string | null> {
    try {
      return path.basename(await readlink(target));
    } catch {
      return null;
    }
  }

  /**
   * Removes the versions of `name` that are garbage: not the pointer's, not being written by a
   * save of this process, and not written by another live process (that save may still be about
   * to point at it; it collects them itself). With no pointer at all (a delete won, or a legacy
   * folder is being moved), nothing is collected.
   */
  private async collect(name: string): Promise<void> {
    const target = path.join(this.dir, name);
    const versions = path.join(this.dir, SKILL_VERSIONS_DIR);
    for (const entry of await readdir(versions).catch((): string[] => [])) {
      const m = VERSION_NAME.exec(entry);
      if (!m || m[1] !== name || inFlight.has(path.join(versions, entry))) continue;
      const pid = Number(m[2]);
      if (pid !== process.pid && isAlive(pid)) continue;
      // The pointer is read after the in-flight check, per entry: a save of ours leaves the set only
      // once its pointer is in place, so a version not pointed at now never will be again.
      const current = await this.pointsAt(target);
      if (current === null) return;
      if (entry !== current) await rm(path.join(versions, entry), { recursive: true, force: true });
    }
  }

  async delete(name: string): Promise<boolean> {
    validateSkillName(name);
    this.writable("delete");
    const target = path.join(this.dir, name);
    const aside = path.join(this.dir, SKILL_TEMP_DIR, `${name}.${process.pid}.${randomBytes(6).toString("hex")}.deleted`);
    return guardFs("delete skill", target, async () => {
      await mkdir(path.dirname(aside), { recursive: true });
      try {
        // One rename takes the pointer (or a real folder) away at once; the files go out of sight.
        await rename(target, aside);
      } catch (err) {
        if (isErrno(err, "ENOENT")) return false;
        throw err;
      }
      const id = await this.pointsAt(aside);
      if (id !== null && VERSION_NAME.test(id)) await rm(path.join(this.dir, SKILL_VERSIONS_DIR, id), { recursive: true, force: true });
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
   * Removes what killed writers left in `.tmp/` (staged links, set-aside folders named
   * `<name>.<pid>.<hex>…`) once older than `maxAgeMs` and their writer is gone, and in `.versions/`
   * the versions no pointer names whose writer is gone (or is this process, not saving them). A `.legacy` folder whose pointer was never
   * made (a writer killed mid-migration) is moved back into place. Never throws.
   */
  async sweep(maxAgeMs: number): Promise<number> {
    if (this.options.readOnly) return 0;
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
    const versions = path.join(this.dir, SKILL_VERSIONS_DIR);
    for (const entry of await readdir(versions).catch((): string[] => [])) {
      const m = VERSION_NAME.exec(entry);
      const pid = Number(m?.[2]);
      if (!m || inFlight.has(path.join(versions, entry)) || (pid !== process.pid && isAlive(pid))) continue;
      const name = m[1]!;
      const target = path.join(this.dir, name);
      try {
        if ((await this.pointsAt(target)) === entry) continue;
        if (m[3] && (await lstat(target).catch(() => null)) === null) {
          await rename(path.join(versions, entry), target);
          continue;
        }
        await rm(path.join(versions, entry), { recursive: true, force: true });
        removed++;
      } catch {
        // a live save got there first: housekeeping only
      }
    }
    return removed;
  }

  /** The skill's folder with symlinks resolved (a symlinked skill folder is allowed), or null. */
  private async realFolder(name: string): Promise<string | null> {
    const folder = this.folder(name);
    for (let attempt = 0; attempt < 100; attempt++) {
      const link = await this.pointsAt(folder);
      try {
        const real = await realpath(folder);
        const st = await lstat(real);
        return st.isDirectory() ? real : null;
      } catch (err) {
        if (!isErrno(err, "ENOENT", "ENOTDIR", "ELOOP")) throw err;
        // The pointer moved while it was resolved and the version it named was collected: resolve
        // again. The same pointer still there means it names nothing (a dangling link): no skill.
        if (link !== null && (await this.pointsAt(folder)) !== link) continue;
        return this.options.readOnly ? null : this.legacyFolder(name);
      }
    }
    throw new ValidationError(`skill "${name}" kept changing while it was read; try again`);
  }

  /** A real folder being replaced by its first pointer (see the top of this file), or null. */
  private async legacyFolder(name: string): Promise<string | null> {
    const versions = path.join(this.dir, SKILL_VERSIONS_DIR);
    const entries = await readdir(versions).catch((): string[] => []);
    const legacy = entries.find((e) => e.endsWith(".legacy") && VERSION_NAME.exec(e)?.[1] === name);
    if (legacy === undefined) return null;
    // Its pointer may have appeared meanwhile: then that is the answer.
    return (await lstat(this.folder(name)).catch(() => null)) ? this.realFolder(name) : path.join(versions, legacy);
  }

  private writable(op: string): void {
    if (this.options.readOnly) throw new ValidationError(`cannot ${op}: ${this.dir} is a read-only skills folder`);
  }
}

export { PROVENANCE_FILE };
