/**
 * The skill library: what the guest `skills` namespace, the Session facade, the CLI and the MCP
 * server all read. It merges sources in order — the storage's skills first, then each read-only
 * root a user configured — and a later source wins on a name clash (reported as a warning). Every
 * read is lenient: a broken skill is skipped with a warning and never hides the others.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { InvalidNameError, NotFoundError, ValidationError, closestNames, didYouMean } from "../errors.js";
import { LexicalRanker, type Ranker, type SearchDocument } from "../search/lexical.js";
import { FileSkillStore } from "../storage/file/skills.js";
import { compareNames } from "../storage/names.js";
import type { SkillFile, SkillStore } from "../storage/protocol.js";
import { PROVENANCE_FILE, validateSkillPath } from "../storage/skill-names.js";
import { readSkillMd } from "./parsed-cache.js";
import { describeProvenance, trustOf, type TrustLevel, type WorkflowPrincipal, type WorkflowProvenance } from "../workflows/provenance.js";
import { MAX_SKILL_FILE_BYTES, renderSkillMd, SKILL_FILE, validateFrontmatter, type SkillFrontmatter } from "./spec.js";

export interface SkillSummary {
  name: string;
  description: string;
  /** Where SKILL.md is: a file path, or `skill://<name>/SKILL.md` for a store without files on disk. */
  location: string;
}

export interface SkillDetails extends SkillSummary {
  /** The instructions: SKILL.md after its frontmatter. */
  body: string;
  /** Paths of the other files, relative to the skill folder ("scripts/summary.py"). */
  resources: string[];
  frontmatter: SkillFrontmatter;
  /** "trusted" unless an untrusted (sandbox) session saved it. */
  trust: TrustLevel;
  /** Where it came from: "storage" or the read-only root's folder. */
  source: string;
}

export interface CreateSkillInput {
  name: string;
  description: string;
  body: string;
  /** Extra files by relative path: text, or bytes. */
  files?: Record<string, string | Uint8Array>;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
}

/** A trusted session was asked to run a script of a skill that an untrusted session saved. */
export class UntrustedSkillError extends Error {
  override readonly name = "UntrustedSkillError";
}
/** An untrusted session tried to replace or delete a skill it may not touch. */
export class SkillProtectedError extends Error {
  override readonly name = "SkillProtectedError";
}

interface Entry {
  name: string;
  description: string;
  /** The first BODY_EXCERPT_CHARS of the body, for search: a scan of many skills holds no more. */
  body: string;
  frontmatter: SkillFrontmatter;
  store: SkillStore;
  source: string;
  provenance?: WorkflowProvenance;
}

export interface SkillLibraryOptions {
  /** Read-only folders of skills (`<project>/.agents/skills`, ...), merged after the storage's; later wins. */
  roots?: readonly string[];
  ranker?: Ranker;
  /** Who acts: saves record it as provenance. Absent: the host itself (trusted, no provenance recorded). */
  principal?: WorkflowPrincipal;
  /**
   * Where the code of the session sees a skill's SKILL.md, from the store's location (a container
   * session shows `/skills/<name>/SKILL.md`, the path its code can open). Default: as stored.
   */
  location?: (name: string, location: string) => string;
}

const WEIGHTS = { name: 3, description: 2, body: 0.5 } as const;
const BODY_EXCERPT_CHARS = 20_000;
const provenanceSchema = lazy(() => z.object({ trust: z.enum(["trusted", "untrusted"]), executor: z.string().max(200), savedAt: z.string().max(100) }));
const createSchema = lazy(() => z.strictObject({
  name: z.string({ error: "name must be a string" }),
  description: z.string({ error: "description must be a string" }),
  body: z.string({ error: "body must be a string (the Markdown instructions)" }).max(MAX_SKILL_FILE_BYTES),
  files: z.record(z.string(), z.union([z.string(), z.instanceof(Uint8Array)]), { error: "files must map relative paths to text or bytes" }).optional(),
  license: z.string().max(1_000).optional(),
  compatibility: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
}));

export class SkillLibrary {
  private readonly sources: Array<{ store: SkillStore; label: string }>;
  private readonly ranker: Ranker;

  constructor(
    private readonly store: SkillStore | undefined,
    private readonly options: SkillLibraryOptions = {},
  ) {
    this.sources = [
      ...(store ? [{ store, label: "storage" }] : []),
      ...(options.roots ?? []).map((dir) => ({ store: new FileSkillStore(dir, { readOnly: true }) as SkillStore, label: dir })),
    ];
    this.ranker = options.ranker ?? new LexicalRanker();
  }

  /** Every usable skill, by name (later sources win), and the warnings of the reading. */
  async scan(): Promise<{ skills: Map<string, Entry>; warnings: string[] }> {
    const skills = new Map<string, Entry>();
    const warnings: string[] = [];
    for (const { store, label } of this.sources) {
      let names: string[];
      try {
        names = await store.names();
      } catch (err) {
        warnings.push(`${label}: could not list skills: ${(err as Error).message}`);
        continue;
      }
      for (const name of names) {
        const entry = await this.readEntry(store, label, name, warnings);
        if (!entry) continue;
        const before = skills.get(name);
        if (before) warnings.push(`skill "${name}" of ${label} hides the one of ${before.source} (a later source wins)`);
        skills.set(name, entry);
      }
    }
    return { skills, warnings };
  }

  async list(): Promise<SkillSummary[]> {
    const { skills } = await this.scan();
    return [...skills.values()].map((e) => this.summary(e)).sort((a, b) => compareNames(a.name, b.name));
  }

  async search(query: string, options: { limit?: number } = {}): Promise<Array<SkillSummary & { score: number }>> {
    const limit = options.limit ?? 10;
    const { skills } = await this.scan();
    const docs: SearchDocument[] = [...skills.values()].map((e) => ({
      id: e.name,
      fields: [
        { text: e.name.replace(/-/g, " "), weight: WEIGHTS.name },
        { text: e.description, weight: WEIGHTS.description },
        { text: e.body, weight: WEIGHTS.body },
      ],
      semantic: { primary: e.description, secondary: e.body.slice(0, 4_000) },
    }));
    const ranked = await this.ranker.rank(query, docs, limit);
    return ranked.flatMap(({ id, score }) => {
      const e = skills.get(id);
      return e ? [{ ...this.summary(e), score }] : [];
    });
  }

  async load(name: string): Promise<SkillDetails> {
    const e = await this.entry(name, true);
    const files = (await e.store.files(name)) ?? [];
    return {
      ...this.summary(e),
      body: e.body,
      resources: files.map((f) => f.path).filter((p) => p !== SKILL_FILE),
      frontmatter: e.frontmatter,
      trust: e.provenance ? trustOf({ provenance: e.provenance }) : "trusted",
      source: e.source,
    };
  }

  /** A file of the skill: text when it is valid UTF-8 (and `as` is not "bytes"), else bytes. */
  async read(name: string, filePath: string, options: { as?: "text" | "bytes" } = {}): Promise<string | Uint8Array> {
    resourcePath(filePath);
    const e = await this.entry(name);
    const bytes = await e.store.read(name, filePath);
    if (bytes === null) {
      const files = ((await e.store.files(name)) ?? []).map((f) => f.path);
      throw new NotFoundError(`skill "${name}" has no file ${JSON.stringify(filePath)}.${didYouMean(filePath, files)} Files: ${files.join(", ")}`, closestNames(filePath, files));
    }
    if (options.as === "bytes") return bytes;
    try {
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      if (options.as === "text" || !text.includes("\u0000")) return text;
    } catch {
      if (options.as === "text") throw new ValidationError(`${filePath} of skill "${name}" is not UTF-8 text; read it with { as: "bytes" }`);
    }
    return bytes;
  }

  /** Validates strictly (the spec's rules), then saves SKILL.md and the files in one commit. */
  async create(input: CreateSkillInput): Promise<SkillSummary> {
    const parsed = createSchema.safeParse(input);
    if (!parsed.success) throw new ValidationError(`${parsed.error.issues.map((i) => i.message).join("; ")}. Usage: skills.create({ name, description, body, files? })`);
    const { name, description, body, files = {}, ...rest } = parsed.data;
    const frontmatter: SkillFrontmatter = { name, description, ...rest };
    const problems = validateFrontmatter(frontmatter as unknown as Record<string, unknown>, name);
    if (problems.length) throw new ValidationError(`invalid skill: ${problems.join("; ")}`);
    const store = this.writableStore();
    const { skills } = await this.scan();
    const existing = skills.get(name);
    if (existing && existing.store !== store) throw new SkillProtectedError(`skill "${name}" comes from the read-only folder ${existing.source}; choose another name`);
    if (existing) this.checkMayChange(existing, "replace");
    const out: SkillFile[] = [{ path: SKILL_FILE, bytes: new TextEncoder().encode(renderSkillMd(frontmatter, body)) }];
    for (const [p, data] of Object.entries(files)) {
      resourcePath(p);
      if (p === SKILL_FILE) throw new ValidationError(`give SKILL.md's content as { description, body }, not in files`);
      out.push({ path: p, bytes: typeof data === "string" ? new TextEncoder().encode(data) : data });
    }
    const principal = this.options.principal;
    if (principal) {
      const provenance: WorkflowProvenance = { trust: principal.trust, executor: principal.executor, savedAt: new Date().toISOString() };
      out.push({ path: PROVENANCE_FILE, bytes: new TextEncoder().encode(JSON.stringify(provenance)) });
    }
    await store.save(name, out);
    return { name, description, location: this.locate(name, store.location(name)) };
  }

  async delete(name: string): Promise<boolean> {
    const store = this.writableStore();
    const { skills } = await this.scan();
    const existing = skills.get(name);
    if (existing && existing.store !== store) throw new SkillProtectedError(`skill "${name}" comes from the read-only folder ${existing.source}; remove it there`);
    if (existing) this.checkMayChange(existing, "delete");
    return store.delete(name);
  }

  /**
   * The skill to run a script of, refusing what a trusted session must not run: a script saved by
   * an untrusted session would otherwise get the host's authority.
   */
  async forRun(name: string): Promise<{ store: SkillStore; details: SkillDetails }> {
    const e = await this.entry(name);
    const details = await this.load(name);
    if (this.options.principal?.trust === "trusted" && details.trust === "untrusted") {
      throw new UntrustedSkillError(
        `skill "${name}" was saved by ${describeProvenance(e.provenance)}, so this trusted session will not run its scripts. Review it (ts-code-mode skills show ${name}) and re-add it with \`ts-code-mode skills add\` to approve it.`,
      );
    }
    return { store: e.store, details };
  }

  /** The `<available_skills>` block of the spec's reference prompt (or Markdown); "" when there are no skills. */
  async catalog(format: "xml" | "markdown" = "xml"): Promise<string> {
    return formatSkillsCatalog(await this.list(), format);
  }

  /**
   * One skill, read from the last source that has a usable one (what a scan would pick) without
   * reading every other skill; `fullBody`: keep the whole body instead of the search excerpt.
   */
  private async entry(name: string, fullBody = false): Promise<Entry> {
    if (typeof name !== "string") throw new ValidationError("name must be a string");
    for (const { store, label } of [...this.sources].reverse()) {
      const names = await store.names().catch((): string[] => []);
      if (!names.includes(name)) continue;
      const e = await this.readEntry(store, label, name, [], fullBody);
      if (e) return e;
    }
    const names = [...(await this.scan()).skills.keys()];
    throw new NotFoundError(`No skill named ${JSON.stringify(name)}.${didYouMean(name, names)} Available: ${names.join(", ") || "(none)"}`, closestNames(name, names));
  }

  private async readEntry(store: SkillStore, label: string, name: string, warnings: string[], fullBody = false): Promise<Entry | null> {
    try {
      const bytes = await store.read(name, SKILL_FILE);
      if (bytes === null) {
        warnings.push(`${label}: skipped skill "${name}": no ${SKILL_FILE}`);
        return null;
      }
      const skill = readSkillMd(bytes, name);
      if (!skill.ok) {
        warnings.push(`${label}: skipped skill "${name}": ${skill.problem}`);
        return null;
      }
      for (const w of skill.warnings) warnings.push(`${label}: skill "${name}": ${w}`);
      const entry: Entry = { name, description: skill.description, body: fullBody ? skill.body : skill.body.slice(0, BODY_EXCERPT_CHARS), frontmatter: skill.frontmatter, store, source: label };
      const prov = await store.read(name, PROVENANCE_FILE).catch(() => null);
      if (prov) {
        const parsed = provenanceSchema.safeParse(safeJson(new TextDecoder().decode(prov)));
        // A provenance file that cannot be read counts as untrusted: fail closed.
        entry.provenance = parsed.success ? parsed.data : { trust: "untrusted", executor: "unknown", savedAt: "unknown" };
      }
      return entry;
    } catch (err) {
      warnings.push(`${label}: skipped skill "${name}": ${(err as Error).message}`);
      return null;
    }
  }

  private summary(e: Entry): SkillSummary {
    return { name: e.name, description: e.description, location: this.locate(e.name, e.store.location(e.name)) };
  }

  private locate(name: string, location: string): string {
    return this.options.location ? this.options.location(name, location) : location;
  }

  private writableStore(): SkillStore {
    if (!this.store) throw new ValidationError("this storage keeps no skills; use FileStorage or RedisStorage");
    return this.store;
  }

  private checkMayChange(e: Entry, action: "replace" | "delete"): void {
    const p = this.options.principal;
    if (p?.trust === "untrusted" && (e.provenance ? trustOf({ provenance: e.provenance }) : "trusted") === "trusted") {
      throw new SkillProtectedError(`skill "${e.name}" is ${describeProvenance(e.provenance)}; an untrusted ${p.executor} session cannot ${action} it.${action === "replace" ? " Save yours under another name." : ""}`);
    }
  }
}

/** The catalog text of a skill list (what SkillLibrary.catalog returns); "" for no skills. */
export function formatSkillsCatalog(list: readonly SkillSummary[], format: "xml" | "markdown" = "xml"): string {
  if (list.length === 0) return "";
  if (format === "markdown") {
    // One line per skill: a newline in a description must not start a Markdown block of its own.
    const line = (t: string) => t.replace(/\s+/g, " ").trim();
    return ["## Available skills", "", ...list.map((s) => `- **${line(s.name)}**: ${line(s.description)} (${s.location})`)].join("\n");
  }
  const lines = ["<available_skills>"];
  for (const s of list) lines.push("<skill>", "<name>", escapeHtml(s.name), "</name>", "<description>", escapeHtml(s.description), "</description>", "<location>", s.location, "</location>", "</skill>");
  lines.push("</available_skills>");
  return lines.join("\n");
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A path a caller may read or write inside a skill: the store's rules, minus the provenance sidecar. */
export function resourcePath(p: unknown): string {
  if (p === PROVENANCE_FILE) throw new InvalidNameError(`"${PROVENANCE_FILE}" is reserved for the skill's provenance record`);
  return validateSkillPath(p);
}
