/**
 * The workflow library: validated CRUD and search over a WorkflowStore. This is what both the
 * host facade (Session) and the guest `workflows` namespace call; it never runs workflow code.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { lazy } from "../lazy.js";
import { NotFoundError, ValidationError, closestNames, didYouMean } from "../errors.js";
import { LexicalRanker, type Ranker, type SearchDocument } from "../search/lexical.js";
import type { WorkflowParam, WorkflowRecord, WorkflowStore } from "../storage/protocol.js";
import { isReservedWorkflowName, validateWorkflowName } from "./names.js";
import {
  UntrustedWorkflowError,
  WorkflowProtectedError,
  protectedMessage,
  trustOf,
  untrustedMessage,
  type UntrustedWorkflowPolicy,
  type WorkflowPrincipal,
  type WorkflowProvenance,
} from "./provenance.js";
import { paramSchema } from "../storage/workflow-record.js";
import { extractSignature, type WorkflowSignature } from "./signature.js";

export interface WorkflowSummary {
  name: string;
  description: string;
  params: WorkflowParam[];
  /** Who saved it (trust level, executor, when). Absent for hand-written files, which count as trusted. */
  provenance?: WorkflowProvenance;
  /** "python" for a Python workflow (run only by Python sessions); absent for TypeScript/JavaScript. */
  language?: "python";
  /**
   * Set when the file cannot be invoked: a syntax error, or no exported `run`. Such a file (edited
   * by hand, or written by another tool) is listed with its problem instead of failing only when called.
   */
  problem?: string;
}

export interface WorkflowDetails extends WorkflowSummary {
  source: string;
  createdAt: string;
  updatedAt: string;
  author?: string;
}

export interface CreateWorkflowInput {
  name: string;
  source: string;
  /** Wins over the module's JSDoc and is stored, so it survives reloads. */
  description?: string;
  author?: string;
  /** "python": `source` is a Python module defining `run` (Python guests check it and derive `params`). Default "typescript". */
  language?: "typescript" | "python";
  /** Parameters of a Python workflow (a Python guest derives them from `run`'s signature); refused for TypeScript, whose are derived here. */
  params?: WorkflowParam[];
}

export interface WorkflowLibraryOptions {
  /** Ranks search results; defaults to the lexical ranker. Plug the semantic ranker in here. */
  ranker?: Ranker;
  /**
   * Who acts through this library: the session's executor and its trust level. Saves record it as
   * the workflow's provenance, and the trust rules (see provenance.ts) apply to it. Absent: the host
   * itself (e.g. `ts-code-mode init`), trusted, and its saves record no provenance, like a file a
   * person wrote.
   */
  principal?: WorkflowPrincipal;
  /** What `requireRunnable` does with an untrusted workflow in a trusted library. Default "refuse". */
  untrustedWorkflows?: UntrustedWorkflowPolicy;
  /** The interpreter that reads Python workflows saved without params (see python-signature.ts). Default `python3`. */
  python?: string;
}

export const MAX_WORKFLOW_SOURCE_BYTES = 1024 * 1024;
export const MAX_WORKFLOW_DESCRIPTION_LENGTH = 4000;
export const DEFAULT_SEARCH_LIMIT = 10;

/** Search field weights: a hit in the name counts most, a hit somewhere in the code least. */
const WEIGHTS = { name: 3, description: 2, params: 1.5, source: 0.5 } as const;

/**
 * Derived signatures kept in memory, shared by every library (session) of the process: a library of
 * 10,000 workflows in a store that hands out fresh records each time (a custom store) is parsed once,
 * not once per listing. Bounded against churn (a signature is a few hundred bytes).
 */
const SIGNATURE_CACHE_SIZE = 20_000;
const signatures = new Map<string, WorkflowSignature>();

/**
 * Details and search documents of records a store hands out frozen (FileStorage's catalogue, Redis's
 * cached listing): the same object means the same record, so every library of the process (one per
 * session) derives them once per record version instead of hashing and parsing 10,000 sources per listing.
 */
const detailsOf = new WeakMap<WorkflowRecord, WorkflowDetails>();
const documentOf = new WeakMap<WorkflowDetails, SearchDocument>();

interface SearchListing {
  records: readonly WorkflowRecord[];
  byName: ReadonlyMap<string, WorkflowDetails>;
  docs: readonly SearchDocument[];
}
/** The last search listing per store (see WorkflowLibrary.searchListing); only of frozen records, which cannot change under it. */
const listings = new WeakMap<WorkflowStore, SearchListing>();

const createSchema = lazy(() => z.strictObject({
  name: z.string({ error: "expected a string" }),
  source: z
    .string({ error: "expected a string of TypeScript or JavaScript" })
    .min(1, "is empty")
    .refine((s) => Buffer.byteLength(s, "utf8") <= MAX_WORKFLOW_SOURCE_BYTES, {
      message: `is larger than ${MAX_WORKFLOW_SOURCE_BYTES} bytes (1 MB)`,
    }),
  description: z
    .string({ error: "expected a string" })
    .max(MAX_WORKFLOW_DESCRIPTION_LENGTH, `is longer than ${MAX_WORKFLOW_DESCRIPTION_LENGTH} characters`)
    .optional(),
  author: z.string({ error: "expected a string" }).max(200, "is longer than 200 characters").optional(),
  language: z.enum(["typescript", "python"], { error: 'expected "typescript" or "python"' }).optional(),
  params: z.array(paramSchema).max(200, "has more than 200 parameters").optional(),
}));

const searchSchema = lazy(() => z.object({
  query: z.string({ error: "expected a string" }),
  limit: z
    .number({ error: "expected a number" })
    .int("expected an integer")
    .min(1, "must be at least 1")
    .max(1000, "must be at most 1000")
    .optional(),
}));

const PYTHON_RUN_EXAMPLE = 'def run(n: int) -> int:\n    """Triple a number."""\n    return n * 3';

const RUN_EXAMPLE = [
  "export async function run({ n }: { n: number }) {",
  "  return n * 3;",
  "}",
].join("\n");

export class WorkflowLibrary {
  private readonly ranker: Ranker;
  private readonly principal: WorkflowPrincipal | undefined;
  private untrustedPolicy: UntrustedWorkflowPolicy;
  private readonly python: string | undefined;
  /** Approval questions in flight, by name and source: ten parallel invocations ask the host once. */
  private readonly asking = new Map<string, Promise<boolean>>();

  constructor(
    private readonly store: WorkflowStore,
    options: WorkflowLibraryOptions = {},
  ) {
    this.ranker = options.ranker ?? new LexicalRanker();
    this.principal = options.principal;
    this.untrustedPolicy = options.untrustedWorkflows ?? "refuse";
    this.python = options.python;
  }

  /** The trust level of whoever acts through this library. */
  get trust(): WorkflowPrincipal["trust"] {
    return this.principal?.trust ?? "trusted";
  }

  /** Sets what a trusted library does with an untrusted workflow asked to run (Session's `untrustedWorkflows`). */
  setUntrustedWorkflowPolicy(policy: UntrustedWorkflowPolicy): void {
    if (policy !== "refuse" && typeof policy !== "function") {
      throw new TypeError('untrustedWorkflows must be "refuse" or a function (workflow) => boolean | Promise<boolean>');
    }
    this.untrustedPolicy = policy;
  }

  /** Every workflow, sorted by name. */
  async list(): Promise<WorkflowSummary[]> {
    const details = await this.allDetails(await this.store.list());
    return details.map(summaryOf).sort((a, b) => compareNames(a.name, b.name));
  }

  /** Best matches first, each with its score in 0..1. An empty query matches nothing. */
  async search(query: string, options: { limit?: number } = {}): Promise<Array<WorkflowSummary & { score: number; indexing?: true }>> {
    const parsed = parseOrThrow(searchSchema, { query, limit: options.limit }, "Invalid workflow search");
    const limit = parsed.limit ?? DEFAULT_SEARCH_LIMIT;
    // The query is embedded (in the model's worker) while the store is listed.
    this.ranker.prepare?.(parsed.query);
    const { byName, docs } = await this.searchListing();
    const ranked = await this.ranker.rank(parsed.query, docs, limit);
    return ranked.flatMap(({ id, score, indexing }) => {
      const d = byName.get(id);
      return d
        ? [
            {
              name: d.name,
              description: d.description,
              params: d.params,
              ...(d.provenance ? { provenance: d.provenance } : {}),
              ...(d.problem !== undefined ? { problem: d.problem } : {}),
              score,
              ...(indexing ? { indexing: true as const } : {}),
            },
          ]
        : [];
    });
  }

  /**
   * Builds the search index of every workflow now, with no deadline (the semantic ranker embeds what
   * is not cached yet, in batches, in its worker thread). Null when the ranker keeps no index
   * (lexical search needs none).
   */
  async index(onProgress?: (indexed: number, total: number) => void): Promise<{ indexed: number; total: number } | null> {
    if (!this.ranker.index) return null;
    const details = await this.allDetails(await this.store.list());
    return this.ranker.index(details.map(searchDocument), onProgress);
  }

  /**
   * What a search ranks: every workflow's search document, and its details by name. Kept per store
   * while the store hands out the very same (frozen) records, so a search of an unchanged library
   * of 10,000 rebuilds neither (one identity check per record).
   */
  private async searchListing(): Promise<SearchListing> {
    const records = await this.store.list();
    const held = listings.get(this.store);
    if (held && held.records.length === records.length && records.every((r, i) => r === held.records[i])) return held;
    const details = await this.allDetails(records);
    const listing: SearchListing = { records, byName: new Map(details.map((d) => [d.name, d])), docs: Object.freeze(details.map(searchDocument)) };
    if (records.every((r) => Object.isFrozen(r))) listings.set(this.store, listing);
    return listing;
  }

  /** The workflow, or null when there is none by that name. Throws InvalidNameError for a malformed name. */
  async get(name: string): Promise<WorkflowDetails | null> {
    if (!this.isLookupName(name)) return null;
    const record = await this.store.get(name);
    return record ? this.details(record) : null;
  }

  /**
   * What invoking a workflow needs: its details, and whether `params` is every name its `run`
   * accepts (then a call with another name is refused, as tools refuse unknown arguments).
   */
  async forInvocation(name: string): Promise<{ details: WorkflowDetails; closedParams: boolean }> {
    const details = await this.requireRunnable(name);
    // A Python run() may take **kwargs; the interpreter itself refuses an unknown keyword.
    if (details.language === "python") return { details, closedParams: false };
    return { details, closedParams: (await this.signatureOf(details.source, details.name)).closedParams };
  }

  /** Like get, but throws NotFoundError naming the closest existing workflows. */
  async require(name: string): Promise<WorkflowDetails> {
    const found = await this.get(name);
    if (found) return found;
    const names = (await this.store.list()).map((r) => r.name);
    if (names.length === 0) {
      throw new NotFoundError(`Unknown workflow: ${name}. No workflows exist yet; create one with workflows.create({ name, source }).`);
    }
    throw new NotFoundError(`Unknown workflow: ${name}.${didYouMean(name, names)}`, closestNames(name, names));
  }

  /**
   * The workflow, for running it here. A trusted library refuses one saved by an untrusted session
   * (UntrustedWorkflowError) unless the policy approves it, which re-records it as trusted. The
   * returned details are exactly what was checked (and approved), so nothing swapped in meanwhile runs.
   */
  async requireRunnable(name: string): Promise<WorkflowDetails> {
    const details = await this.require(name);
    const provenance = details.provenance;
    if (this.trust === "untrusted" || provenance === undefined || provenance.trust === "trusted") return details;
    const policy = this.untrustedPolicy;
    if (policy !== "refuse") {
      const key = `${details.name}\u0000${createHash("sha256").update(details.source).digest("hex")}`;
      let answer = this.asking.get(key);
      if (!answer) {
        const info = { name: details.name, source: details.source, provenance: { ...provenance } };
        answer = Promise.resolve()
          .then(() => policy(info))
          .then((v) => v === true)
          .finally(() => this.asking.delete(key));
        this.asking.set(key, answer);
      }
      if (await answer) return this.approve(name, { source: details.source });
    }
    throw new UntrustedWorkflowError(untrustedMessage(name, provenance, this.principal?.executor ?? "host"));
  }

  /**
   * The host approves a workflow saved by an untrusted session: it is re-recorded as trusted (its
   * source, description, timestamps and who saved it stay as they were). With `source`, only that
   * exact source is approved; a workflow changed since fails with a ValidationError. Guests cannot
   * reach this (it is no namespace operation). Already trusted: returned unchanged.
   */
  async approve(name: string, options: { source?: string } = {}): Promise<WorkflowDetails> {
    if (!this.isLookupName(name)) return this.require(name);
    const record = await this.store.get(name);
    if (!record) return this.require(name);
    if (options.source !== undefined && record.source !== options.source) {
      throw new ValidationError(`Workflow "${name}" changed since it was reviewed; review it again before approving.`);
    }
    if (trustOf(record) === "trusted") return this.details(record);
    const approved: WorkflowRecord = { ...record, provenance: { ...record.provenance!, trust: "trusted" } };
    await this.store.save(approved);
    return this.details(approved);
  }

  /**
   * Creates or replaces a workflow. The source must parse and export a `run` function; parameters
   * and description are derived from it and stored. Replacing keeps the original createdAt.
   */
  async create(input: CreateWorkflowInput): Promise<WorkflowDetails> {
    const parsed = parseOrThrow(createSchema, input, "Invalid workflow");
    validateWorkflowName(parsed.name);
    const { name, source } = parsed;
    const python = parsed.language === "python";
    if (parsed.params !== undefined && !python) {
      throw new ValidationError(`Invalid workflow: params: only a Python workflow takes them; a TypeScript workflow's parameters are derived from its run function.`);
    }
    // A Python guest passes what its own ast read; anyone else's source is read the same way by python3 here.
    const sig = python ? (parsed.params !== undefined ? pythonSignature(parsed.params) : await this.pythonSignatureOf(source)) : await this.signatureOf(source, name);
    if (sig.syntaxError) {
      const { line, column, message } = sig.syntaxError;
      throw new ValidationError(`Syntax error in workflow "${name}" at line ${line}:${column}: ${message}`);
    }
    if (!sig.hasRun && python) {
      throw new ValidationError(`Python workflow "${name}" must define a function named run at the top level, e.g.\n${PYTHON_RUN_EXAMPLE}`);
    }
    if (!sig.hasRun) {
      throw new ValidationError(
        `Workflow "${name}" must export a function named run; its first argument is an object of named ` +
          `parameters and its return value is the result. For example:\n${RUN_EXAMPLE}`,
      );
    }
    const existing = await this.store.get(name);
    if (existing) this.assertMayChange(existing, "replace");
    const now = new Date().toISOString();
    const given = parsed.description?.trim();
    const record: WorkflowRecord = {
      name,
      source,
      description: given || sig.description || "",
      // Lets a store drop a derived description once the file is edited by hand, but keep a given one.
      descriptionExplicit: Boolean(given),
      params: sig.params,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    if (parsed.author !== undefined) record.author = parsed.author;
    if (python) record.language = "python";
    if (this.principal) record.provenance = { trust: this.principal.trust, executor: this.principal.executor, savedAt: now };
    await this.store.save(record);
    return this.details(record);
  }

  /** True when a workflow was deleted. */
  async delete(name: string): Promise<boolean> {
    if (!this.isLookupName(name)) return false;
    if (this.trust === "untrusted") {
      const existing = await this.store.get(name);
      if (!existing) return false;
      this.assertMayChange(existing, "delete");
    }
    return this.store.delete(name);
  }

  /**
   * An untrusted session may not replace or delete what a trusted one (or a person) saved. The check
   * and the write are not one transaction: a trusted save landing in between can be replaced, but
   * the replacement is recorded as untrusted, so a trusted session still refuses to run it.
   */
  private assertMayChange(existing: WorkflowRecord, action: "replace" | "delete"): void {
    if (this.trust === "trusted" || trustOf(existing) === "untrusted") return;
    throw new WorkflowProtectedError(protectedMessage(existing.name, existing.provenance, action, this.principal?.executor ?? "unknown"));
  }

  /** Malformed names throw (they could reach a file path); reserved ones simply cannot exist. */
  private isLookupName(name: string): boolean {
    validateWorkflowNameShape(name);
    return !isReservedWorkflowName(name);
  }

  /** Details of every record: the memoised ones without a promise each (10,000 of them add up), the rest derived. */
  private async allDetails(records: readonly WorkflowRecord[]): Promise<WorkflowDetails[]> {
    const out: Array<WorkflowDetails | undefined> = records.map((r) => detailsOf.get(r));
    const missing: number[] = [];
    out.forEach((d, i) => d === undefined && missing.push(i));
    if (missing.length) {
      const derived = await Promise.all(missing.map((i) => this.details(records[i]!)));
      missing.forEach((i, k) => (out[i] = derived[k]));
    }
    return out as WorkflowDetails[];
  }

  /** Fills in what a hand-written record lacks (params, description) from its source, and checks that it can run. */
  private async details(record: WorkflowRecord): Promise<WorkflowDetails> {
    if (!Object.isFrozen(record)) return this.derive(record);
    let d = detailsOf.get(record);
    if (!d) {
      d = Object.freeze(await this.derive(record));
      detailsOf.set(record, d);
    }
    return d;
  }

  private async derive(record: WorkflowRecord): Promise<WorkflowDetails> {
    let description = (record.description ?? "").trim();
    // Derived from the source as it is now (cached by source hash): a hand-edited file may have broken since it was saved.
    // The store may have kept it from an earlier process (FileStorage's catalogue, dropped when the file changes).
    // A Python record saved with its params needs no reading; one edited by hand (params dropped) is read by python3, once per source.
    let sig: WorkflowSignature | undefined = record.language === "python" && record.params !== undefined ? pythonSignature(record.params) : this.store.derivedOf?.(record);
    if (!sig) {
      if (record.language === "python") {
        try {
          sig = await this.pythonSignatureOf(record.source);
          if (Object.isFrozen(record)) this.store.rememberDerived?.(record, sig);
        } catch (err) {
          // Listed with the reason. A source that timed out (or was refused) is not read again while it is
          // unchanged: every listing would pay the timeout. A missing python3 is tried again: the operator can fix it.
          sig = { description: null, params: [], hasRun: false, closedParams: false, syntaxError: { message: err instanceof Error ? err.message : String(err), line: 0, column: 0 } };
          if ((err as { sourceFault?: unknown }).sourceFault === true) rememberSignature(pythonKey(record.source), sig);
        }
      } else {
        sig = await this.signatureOf(record.source, record.name);
        if (Object.isFrozen(record)) this.store.rememberDerived?.(record, sig);
      }
    }
    const params = record.params ?? sig.params;
    description ||= sig.description ?? "";
    const out: WorkflowDetails = {
      name: record.name,
      description,
      params,
      source: record.source,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
    if (record.author !== undefined) out.author = record.author;
    if (record.language !== undefined) out.language = record.language;
    if (record.provenance !== undefined) out.provenance = { ...record.provenance };
    const problem = sig.syntaxError
      ? sig.syntaxError.line > 0
        ? `syntax error at line ${sig.syntaxError.line}:${sig.syntaxError.column}: ${sig.syntaxError.message}`
        : sig.syntaxError.message
      : sig.hasRun
        ? undefined
        : record.language === "python"
          ? "does not define a function named run"
          : "does not export a function named run";
    if (problem !== undefined) out.problem = problem;
    return out;
  }

  private signatureOf(source: string, name: string): Promise<WorkflowSignature> {
    return cachedSignature(createHash("sha256").update(source).digest("hex"), () => extractSignature(source, `${name}.ts`));
  }

  /** A Python workflow's signature read by python3 (python-signature.ts, loaded on first use); throws ValidationError when it cannot be read. */
  private pythonSignatureOf(source: string): Promise<WorkflowSignature> {
    return cachedSignature(pythonKey(source), async () => {
      const { pythonWorkflowSignature } = await import("./python-signature.js");
      return pythonWorkflowSignature(source, this.python !== undefined ? { python: this.python } : {});
    });
  }
}

/** The signature derived from a source, by content hash: shared by every library of the process, least recently used dropped first. */
async function cachedSignature(key: string, derive: () => Promise<WorkflowSignature>): Promise<WorkflowSignature> {
  const cached = signatures.get(key);
  if (cached) {
    // Re-insert to keep the map in least-recently-used order.
    signatures.delete(key);
    signatures.set(key, cached);
    return cached;
  }
  const sig = await derive();
  rememberSignature(key, sig);
  return sig;
}

function rememberSignature(key: string, sig: WorkflowSignature): void {
  signatures.set(key, sig);
  if (signatures.size > SIGNATURE_CACHE_SIZE) {
    const oldest = signatures.keys().next().value;
    if (oldest !== undefined) signatures.delete(oldest);
  }
}

function pythonKey(source: string): string {
  return `python:${createHash("sha256").update(source).digest("hex")}`;
}

function summaryOf({ name, description, params, provenance, language, problem }: WorkflowDetails): WorkflowSummary {
  return { name, description, params, ...(provenance ? { provenance } : {}), ...(language ? { language } : {}), ...(problem !== undefined ? { problem } : {}) };
}

/**
 * A Python workflow is not parsed on the host: the Python guest that saves it checks that it parses
 * and defines run, and passes the parameters of run's signature. It is run only by Python guests.
 */
function pythonSignature(params: WorkflowParam[] | undefined): WorkflowSignature {
  return { description: null, params: params ?? [], hasRun: true, closedParams: false, syntaxError: null };
}

/** What rankers see of a workflow; one object per details object, so a ranker recognises it unchanged. */
function searchDocument(d: WorkflowDetails): SearchDocument {
  let doc = documentOf.get(d);
  if (!doc) {
    doc = {
      id: d.name,
      fields: [
        { text: d.name, weight: WEIGHTS.name },
        { text: d.description, weight: WEIGHTS.description },
        // Parameter descriptions ride with the names: "target host" should find `{ host }` /** target host */.
        { text: d.params.map((p) => `${p.name} ${p.description ?? ""}`).join(" "), weight: WEIGHTS.params },
        { text: d.source, weight: WEIGHTS.source },
      ],
      // What a semantic ranker embeds: what the workflow is for, then (the words of) how it does it.
      semantic: { primary: d.description || d.name.replace(/_/g, " "), secondary: d.source, secondaryIsCode: true },
    };
    if (Object.isFrozen(d)) documentOf.set(d, doc);
  }
  return doc;
}

/** Shape check for names used to look a workflow up: reserved names pass, `../x` does not. */
function validateWorkflowNameShape(name: unknown): void {
  if (typeof name === "string" && isReservedWorkflowName(name)) return;
  validateWorkflowName(name);
}

/** Code-unit order, so the listing is the same on every machine and locale. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const accepted = schema instanceof z.ZodObject ? ` (accepted: ${Object.keys(schema.shape).join(", ")})` : "";
  const problems = result.error.issues.map((i) => {
    const message = i.code === "unrecognized_keys" ? `${i.message}${accepted}` : i.message;
    return i.path.length ? `${i.path.join(".")}: ${message}` : message;
  });
  throw new ValidationError(`${what}: ${problems.join("; ")}.`);
}
