/**
 * The Agent Skills format: SKILL.md = YAML frontmatter between `---` lines, then a Markdown body.
 *
 * `validateFrontmatter` applies the specification's rules with the wording of the reference
 * validator (`skills-ref`), so `ts-code-mode skills validate` and `skills-ref validate` list the same
 * problems for the same folder (test/skills/spec.test.ts checks each rule against it). Two checks go
 * further than the reference, as the spec's table asks: `metadata` must be a mapping and
 * `allowed-tools` a string (the reference silently coerces both).
 *
 * `lenientSkill` is what loaders use: it keeps a skill whose meaning is clear (too-long description
 * cut, unknown keys ignored, name/folder mismatch → the folder's name) with warnings, and refuses
 * only a skill it cannot describe (no frontmatter, broken YAML, no description).
 */
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

/** Loaded on first use (synchronous callers; yaml ships CommonJS): importing ts-code-mode must not pay for it. */
let yamlModule: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)("yaml") as typeof Yaml);

import { nameProblems } from "../storage/skill-names.js";

export { MAX_SKILL_FILE_BYTES, SKILL_FILE, nameProblems, skillNameProblem } from "../storage/skill-names.js";

export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_COMPATIBILITY_LENGTH = 500;

const ALLOWED_FIELDS = ["allowed-tools", "compatibility", "description", "license", "metadata", "name"] as const;

export interface SkillFrontmatter {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  "allowed-tools"?: string;
}

/** A SKILL.md split in two; throws SkillParseError with the reference validator's wording. */
export class SkillParseError extends Error {
  override readonly name = "SkillParseError";
}

export function parseSkillMd(content: string): { frontmatter: Record<string, unknown>; body: string } {
  if (!content.startsWith("---")) throw new SkillParseError("SKILL.md must start with YAML frontmatter (---)");
  // The frontmatter ends at the next `---` line; the body is everything after it (a `---` rule in
  // the body is Markdown, not the end of the body).
  const close = /\r?\n---[ \t]*(?:\r?\n|$)/.exec(content.slice(3));
  if (!close) throw new SkillParseError("SKILL.md frontmatter not properly closed with ---");
  const yamlText = content.slice(3, 3 + close.index);
  const body = content.slice(3 + close.index + close[0].length).trim();
  checkFrontmatterSize(yamlText);
  let parsed: unknown;
  try {
    parsed = yaml().parse(yamlText, { maxAliasCount: 100 });
  } catch (err) {
    throw new SkillParseError(`Invalid YAML in frontmatter: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
  }
  if (parsed === null || parsed === undefined) parsed = {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) throw new SkillParseError("SKILL.md frontmatter must be a YAML mapping");
  const depth = depthOf(parsed, MAX_FRONTMATTER_DEPTH + 1);
  if (depth > MAX_FRONTMATTER_DEPTH) throw new SkillParseError(`SKILL.md frontmatter is nested more than ${MAX_FRONTMATTER_DEPTH} levels deep; a skill's frontmatter is a flat mapping (metadata one level below)`);
  return { frontmatter: parsed as Record<string, unknown>, body };
}

/** Characters of frontmatter read at most (the spec's fields fit in a few KB). */
export const MAX_FRONTMATTER_CHARS = 64 * 1024;
/**
 * Entries (mapping keys and list items) of a frontmatter at most. The YAML library checks each new
 * key of a mapping against all before it, so 100,000 keys took 65 s to parse; counted before parsing.
 */
export const MAX_FRONTMATTER_ENTRIES = 1_000;
/** Levels of nesting at most (the spec's frontmatter has two: the fields and `metadata`'s). */
export const MAX_FRONTMATTER_DEPTH = 10;

/**
 * Refuses a frontmatter too large to parse in bounded time, before the YAML library sees it. Each
 * entry of a mapping or list needs a line of its own or a `,` (flow style), so lines plus commas
 * bound the entries from above.
 */
function checkFrontmatterSize(text: string): void {
  if (text.length > MAX_FRONTMATTER_CHARS) {
    throw new SkillParseError(`SKILL.md frontmatter is ${text.length.toLocaleString("en-US")} characters; at most ${MAX_FRONTMATTER_CHARS.toLocaleString("en-US")} are read (put long text in the body)`);
  }
  let marks = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 44) marks++;
  }
  if (marks > MAX_FRONTMATTER_ENTRIES) {
    throw new SkillParseError(`SKILL.md frontmatter has ${marks.toLocaleString("en-US")} lines and commas; at most ${MAX_FRONTMATTER_ENTRIES.toLocaleString("en-US")} entries are read (the spec's fields are name, description, license, compatibility, metadata, allowed-tools)`);
  }
}

/** Nesting depth of a parsed value, counted up to `stop`. */
function depthOf(value: unknown, stop: number): number {
  if (typeof value !== "object" || value === null || value instanceof Date || stop <= 0) return 0;
  let deepest = 0;
  for (const child of Object.values(value as object)) {
    deepest = Math.max(deepest, depthOf(child, stop - 1));
    if (deepest >= stop - 1) break;
  }
  return 1 + deepest;
}

/**
 * Every problem of a frontmatter, in the reference validator's order and wording; empty when valid.
 * `folderName`: the skill folder's name, which must equal the skill's name.
 */
export function validateFrontmatter(meta: Record<string, unknown>, folderName?: string): string[] {
  const errors: string[] = [];
  const extra = Object.keys(meta).filter((k) => !(ALLOWED_FIELDS as readonly string[]).includes(k));
  if (extra.length) errors.push(`Unexpected fields in frontmatter: ${extra.sort().join(", ")}. Only ${ALLOWED_FIELDS.join(", ")} are allowed.`);
  if (!("name" in meta)) errors.push("Missing required field in frontmatter: name");
  else errors.push(...nameProblems(text(meta["name"]), folderName));
  if (!("description" in meta)) errors.push("Missing required field in frontmatter: description");
  else {
    const d = text(meta["description"]);
    if (!d.trim()) errors.push("Field 'description' must be a non-empty string");
    else if (d.length > MAX_DESCRIPTION_LENGTH) errors.push(`Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${d.length} chars)`);
  }
  if ("compatibility" in meta) {
    const c = meta["compatibility"];
    if (typeof c !== "string") errors.push("Field 'compatibility' must be a string");
    else if (c.length > MAX_COMPATIBILITY_LENGTH) errors.push(`Compatibility exceeds ${MAX_COMPATIBILITY_LENGTH} character limit (${c.length} chars)`);
  }
  // Beyond the reference validator (see the file comment).
  if ("metadata" in meta && !isPlainMap(meta["metadata"])) errors.push("Field 'metadata' must be a mapping of string keys to string values");
  if ("allowed-tools" in meta && typeof meta["allowed-tools"] !== "string") errors.push("Field 'allowed-tools' must be a string of space-separated tool names");
  return errors;
}

function isPlainMap(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** A scalar as the reference sees it (`String(value)`), bounded. */
function text(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v instanceof Date) return v.toISOString();
  return Array.isArray(v) ? "" : "[object Object]";
}

/** Result of the lenient reading of one skill. */
export type LenientSkill =
  | { ok: true; name: string; description: string; body: string; frontmatter: SkillFrontmatter; warnings: string[] }
  | { ok: false; problem: string };

/** Reads a SKILL.md the way a loader should: warnings where the meaning is clear, a refusal otherwise. */
export function lenientSkill(content: string, folderName: string): LenientSkill {
  let parsed: ReturnType<typeof parseSkillMd>;
  try {
    parsed = parseSkillMd(content);
  } catch (err) {
    return { ok: false, problem: (err as Error).message };
  }
  const { frontmatter: meta, body } = parsed;
  const folderProblems = nameProblems(folderName);
  if (folderProblems.length) return { ok: false, problem: `the folder's name is not a valid skill name: ${folderProblems.join("; ")}` };
  const warnings = validateFrontmatter(meta, folderName).filter((w) => !w.startsWith("Description exceeds"));
  const rawDescription = typeof meta["description"] === "string" ? meta["description"].trim() : "";
  if (!rawDescription) return { ok: false, problem: "Field 'description' must be a non-empty string (the catalog needs it)" };
  let description = rawDescription;
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    warnings.push(`Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${description.length} chars); cut to ${MAX_DESCRIPTION_LENGTH}`);
    description = description.slice(0, MAX_DESCRIPTION_LENGTH);
  }
  const frontmatter: SkillFrontmatter = { name: folderName, description };
  if (typeof meta["license"] === "string") frontmatter.license = meta["license"];
  if (typeof meta["compatibility"] === "string") frontmatter.compatibility = meta["compatibility"].slice(0, MAX_COMPATIBILITY_LENGTH);
  if (typeof meta["allowed-tools"] === "string") frontmatter["allowed-tools"] = meta["allowed-tools"];
  const m = meta["metadata"];
  if (isPlainMap(m)) frontmatter.metadata = Object.fromEntries(Object.entries(m as object).map(([k, v]) => [k, text(v)]));
  return { ok: true, name: folderName, description, body, frontmatter, warnings };
}

/** SKILL.md text for a skill created through the API (values quoted by the YAML writer, never spliced). */
export function renderSkillMd(frontmatter: SkillFrontmatter, body: string): string {
  return `---\n${yaml().stringify(frontmatter, { lineWidth: 0 })}---\n\n${body.trim()}\n`;
}
