/**
 * Parsed SKILL.md files, remembered by content: `skills list`, the catalog and every `skills.*`
 * call read each skill's SKILL.md again (a file may change between calls), but parsing its YAML is
 * the costly part, so an unchanged file (same bytes, same folder name) is never parsed twice. Keyed
 * by a SHA-256 of the bytes, which works the same for files on disk and skills kept in Redis.
 */
import { createHash } from "node:crypto";
import { BoundedCache } from "../execution/bounded-cache.js";
import { lenientSkill, type LenientSkill } from "./spec.js";

/** Skills remembered at most, and characters of their bodies (a body is up to 10 MB). */
const MAX_ENTRIES = 1_000;
const MAX_CHARS = 32 * 1_048_576;

const parsed = new BoundedCache<string, LenientSkill>(MAX_ENTRIES, MAX_CHARS, (key, skill) => key.length + (skill.ok ? skill.body.length + skill.description.length : skill.problem.length));

/** `lenientSkill` of these bytes, parsed once per content; each caller gets its own copy to keep. */
export function readSkillMd(bytes: Uint8Array, folderName: string): LenientSkill {
  const key = `${folderName}\0${createHash("sha256").update(bytes).digest("hex")}`;
  let skill = parsed.get(key);
  if (!skill) {
    skill = lenientSkill(new TextDecoder().decode(bytes), folderName);
    parsed.set(key, skill);
  }
  return skill.ok ? { ...skill, frontmatter: structuredClone(skill.frontmatter), warnings: [...skill.warnings] } : { ...skill };
}
