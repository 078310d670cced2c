/**
 * Name and path rules for stored skills, shared by every skill store (and by src/skills, which
 * adds the rest of the SKILL.md rules). A skill name follows the Agent Skills spec with the
 * reference validator's wording; a file path inside a skill follows the artifact-name rules, so it
 * can never leave the skill's folder or collide with the store's own files.
 */
import { InvalidNameError, StorageError, ValidationError } from "../errors.js";
import { artifactNameProblem } from "./names.js";
import type { SkillFile } from "./protocol.js";

export const MAX_SKILL_NAME_LENGTH = 64;
/** Files larger than this are skipped by loaders (the deep-agents convention) and refused by stores. */
export const MAX_SKILL_FILE_BYTES = 10 * 1024 * 1024;
/** Most files, and bytes in total, one skill may hold: a store refuses more (quota). */
export const MAX_SKILL_FILES = 1_000;
export const MAX_SKILL_BYTES = 64 * 1024 * 1024;
export const SKILL_FILE = "SKILL.md";
/** The skills layer's record of who saved a skill; hidden from listings of the folder. */
export const PROVENANCE_FILE = ".provenance.json";

/** Problems of a skill name (and its equality with the folder's name), reference wording. */
export function nameProblems(raw: string, folderName?: string): string[] {
  if (!raw.trim()) return ["Field 'name' must be a non-empty string"];
  const errors: string[] = [];
  const name = raw.trim().normalize("NFKC");
  if (name.length > MAX_SKILL_NAME_LENGTH) errors.push(`Skill name '${name}' exceeds ${MAX_SKILL_NAME_LENGTH} character limit (${name.length} chars)`);
  if (name !== name.toLowerCase()) errors.push(`Skill name '${name}' must be lowercase`);
  if (name.startsWith("-") || name.endsWith("-")) errors.push("Skill name cannot start or end with a hyphen");
  if (name.includes("--")) errors.push("Skill name cannot contain consecutive hyphens");
  if (Array.from(name).some((c) => !(isLetter(c) || c === "-"))) {
    errors.push(`Skill name '${name}' contains invalid characters. Only letters, digits, and hyphens are allowed.`);
  }
  if (folderName !== undefined && folderName.normalize("NFKC") !== name) errors.push(`Directory name '${folderName}' must match skill name '${name}'`);
  return errors;
}

/** Why `name` cannot name a stored skill, or null. Stores use it before touching disk or keys. */
export function skillNameProblem(name: unknown): string | null {
  if (typeof name !== "string") return "a skill name must be a string";
  const problems = nameProblems(name);
  if (problems.length) return problems.join("; ");
  if (name !== name.trim().normalize("NFKC")) return `Skill name '${name}' must be written in its normal form, without surrounding spaces`;
  return null;
}

/** The reference's letter classes: ASCII letters and digits, Latin-1/Extended, Cyrillic, CJK, combining marks. */
function isLetter(c: string): boolean {
  const code = c.codePointAt(0) ?? -1;
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    (code >= 48 && code <= 57) ||
    (code >= 0x0400 && code <= 0x04ff) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x0300 && code <= 0x036f) ||
    (code >= 0x00c0 && code <= 0x024f)
  );
}


/** Checks a skill name for a store; throws InvalidNameError saying what is accepted. */
export function validateSkillName(name: unknown): string {
  const problem = skillNameProblem(name);
  if (problem) {
    throw new InvalidNameError(
      `Invalid skill name ${JSON.stringify(String(name)).slice(0, 120)}: ${problem}. Accepted: 1-${MAX_SKILL_NAME_LENGTH} lowercase letters, digits and hyphens, no leading, trailing or doubled hyphen (e.g. "csv-summary").`,
    );
  }
  return name as string;
}

/** Checks a file path inside a skill; throws InvalidNameError. The provenance sidecar is allowed. */
export function validateSkillPath(filePath: unknown): string {
  if (filePath === PROVENANCE_FILE) return filePath;
  const problem = artifactNameProblem(filePath);
  if (problem) {
    throw new InvalidNameError(
      `Invalid path in a skill ${JSON.stringify(String(filePath)).slice(0, 120)}: ${problem}. Accepted: a relative path inside the skill folder, e.g. "scripts/summary.py" or "references/columns.md".`,
    );
  }
  return filePath as string;
}

function quotaError(message: string): StorageError {
  return new StorageError(message, { code: "QUOTA_EXCEEDED" });
}

/** Checks one save's files against the per-skill limits (the quota rules of skill stores). */
export function checkSkillFiles(name: string, files: readonly SkillFile[]): void {
  if (!files.some((f) => f.path === SKILL_FILE)) throw new ValidationError(`skill "${name}" has no ${SKILL_FILE}; every skill folder needs one`);
  if (files.length > MAX_SKILL_FILES) throw quotaError(`skill "${name}" has ${files.length} files; at most ${MAX_SKILL_FILES} are accepted`);
  const seen = new Set<string>();
  let total = 0;
  for (const f of files) {
    validateSkillPath(f.path);
    if (!(f.bytes instanceof Uint8Array)) throw new ValidationError(`file "${f.path}" of skill "${name}" must be bytes (Uint8Array)`);
    if (seen.has(f.path)) throw new ValidationError(`skill "${name}" lists "${f.path}" twice`);
    seen.add(f.path);
    if (f.bytes.byteLength > MAX_SKILL_FILE_BYTES) throw quotaError(`file "${f.path}" of skill "${name}" is ${f.bytes.byteLength} bytes; at most ${MAX_SKILL_FILE_BYTES} (10 MB) per file`);
    total += f.bytes.byteLength;
  }
  if (total > MAX_SKILL_BYTES) throw quotaError(`skill "${name}" holds ${total} bytes; at most ${MAX_SKILL_BYTES} (64 MiB) per skill`);
  // A file and a folder of the same name cannot both exist on disk.
  for (const p of seen) {
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (seen.has(dir)) throw new ValidationError(`skill "${name}" has both a file and a folder named "${dir}"`);
    }
  }
}

/** Total bytes of a save (what the store-wide skills quota counts). */
export function skillBytes(files: readonly SkillFile[]): number {
  return files.reduce((n, f) => n + f.bytes.byteLength, 0);
}

/** The store's skills would exceed `maxStoreBytes` (skills have their own budget of that size, apart from artifacts). */
export function skillsFull(name: string, size: number, usedByOthers: number, limit: number): StorageError {
  return new StorageError(
    `Cannot save skill "${name}": the skills of this store would hold ${usedByOthers + size} bytes, over the quota of ${limit} bytes ` +
      `(maxStoreBytes; ${usedByOthers} used by other skills). Delete skills or raise the quota. Nothing was written.`,
    { code: "QUOTA_EXCEEDED", limit, size: usedByOthers + size },
  );
}
