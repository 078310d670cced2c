/**
 * `ts-code-mode store ... --type skills`: skill folders between a local folder (`DIR/skills/<name>/`
 * or DIR itself) and Redis. Each skill is saved whole (one commit point per skill); an invalid folder
 * is skipped with a warning, as `store bootstrap` does with a workflow that cannot run.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { readSkillMd } from "../../skills/parsed-cache.js";
import { readSkillFolder } from "../../skills/roots.js";
import { validateSkillDir } from "../../skills/validate.js";
import { FileSkillStore } from "../../storage/file/skills.js";
import { compareNames } from "../../storage/names.js";
import type { SkillStore } from "../../storage/protocol.js";
import type { RedisStorage } from "../../storage/redis/storage.js";
import { SKILL_FILE } from "../../storage/skill-names.js";
import type { BootstrapReport, DiffEntry, PullReport } from "./store-ops.js";

export interface ListedSkill {
  name: string;
  description: string;
  files: number;
  bytes: number;
}

export async function bootstrapSkills(storage: RedisStorage, sourceDir: string, options: { clear: boolean }): Promise<BootstrapReport> {
  const source = new FileSkillStore(sourceDir, { readOnly: true });
  const warnings: string[] = [];
  const written: string[] = [];
  for (const name of await source.names()) {
    const problems = await validateSkillDir(path.join(sourceDir, name));
    if (problems.length) {
      warnings.push(`${name}: skipped: ${problems.join("; ")}`);
      continue;
    }
    await storage.skills.save(name, await readSkillFolder(path.join(sourceDir, name)));
    written.push(name);
  }
  const removed: string[] = [];
  if (options.clear) {
    const keep = new Set(written);
    for (const name of await storage.skills.names()) if (!keep.has(name) && (await storage.skills.delete(name))) removed.push(name);
  }
  return { type: "skills", source: sourceDir, written, removed, warnings };
}

export async function listSkills(storage: RedisStorage): Promise<ListedSkill[]> {
  const out: ListedSkill[] = [];
  for (const name of await storage.skills.names()) {
    const files = (await storage.skills.files(name)) ?? [];
    const md = await storage.skills.read(name, SKILL_FILE);
    const parsed = md ? readSkillMd(md, name) : null;
    out.push({ name, description: parsed?.ok ? parsed.description : "", files: files.length, bytes: files.reduce((a, f) => a + f.size, 0) });
  }
  return out;
}

export async function pullSkills(storage: RedisStorage, dest: string): Promise<PullReport> {
  const dir = path.join(path.resolve(dest), "skills");
  const local = new FileSkillStore(dir);
  const written: PullReport["written"] = [];
  for (const name of await storage.skills.names()) {
    const remote = await fingerprint(storage.skills, name);
    if (!remote) continue;
    const here = await fingerprint(local, name);
    const outcome = here === null ? "created" : here.hash === remote.hash ? "unchanged" : "replaced";
    if (outcome !== "unchanged") await local.save(name, remote.files);
    written.push({ name, file: path.join(dir, name), outcome });
  }
  return { type: "skills", dest: dir, written };
}

export async function diffSkills(storage: RedisStorage, sourceDir: string): Promise<DiffEntry[]> {
  const local = new FileSkillStore(sourceDir, { readOnly: true });
  const names = [...new Set([...(await local.names()), ...(await storage.skills.names())])].sort(compareNames);
  const out: DiffEntry[] = [];
  for (const name of names) {
    const [s, t] = await Promise.all([fingerprint(local, name), fingerprint(storage.skills, name)]);
    if (!s && !t) continue;
    out.push({ name, status: !t ? "+" : !s ? "-" : s.hash === t.hash ? "=" : "~" });
  }
  return out;
}

/** A skill's files and a hash over their paths and bytes; null when there is no such skill. */
async function fingerprint(store: SkillStore, name: string): Promise<{ hash: string; files: Array<{ path: string; bytes: Uint8Array }> } | null> {
  const list = await store.files(name);
  if (!list) return null;
  const hash = createHash("sha256");
  const files: Array<{ path: string; bytes: Uint8Array }> = [];
  for (const f of list) {
    const bytes = await store.read(name, f.path);
    if (!bytes) continue;
    files.push({ path: f.path, bytes });
    hash.update(`${f.path}\0${bytes.byteLength}\0`).update(bytes);
  }
  return { hash: hash.digest("hex"), files };
}
