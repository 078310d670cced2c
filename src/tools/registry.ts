/**
 * ToolRegistry: the host-side set of tools behind the agent's `tools` namespace. It loads tool
 * YAML files through the adapter factory map, answers discovery (list, search, describe) from each
 * adapter's `ToolInfo`, and routes calls: find tool → find callable → validate arguments → adapter.
 * Name lookups fail with NotFoundError carrying "Did you mean" suggestions; argument problems and
 * run failures are ToolErrors.
 */
import { randomUUID } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { NotFoundError, ToolError, ValidationError, closestNames, didYouMean, withMessage } from "../errors.js";
import { LexicalRanker, tokenize, type Ranker, type ScoredId, type SearchDocument } from "../search/lexical.js";
import { createToolAdapter, defaultToolFactories, type ToolFactories } from "./adapters/index.js";
import { callableSignature, describeTool, describeToolSummary } from "./describe.js";
import { describeToolPython } from "./describe-python.js";
import type { CallContext, CallableInfo, ToolAdapter, ToolInfo, ToolType } from "./protocol.js";
import type { ToolableHostOptions } from "./adapters/toolable/host.js";
import type { ToolableToolAdapter } from "./adapters/toolable/adapter.js";
import type { ToolableSession } from "./adapters/toolable/session.js";
import { assertToolName, callLabel, validateArgs } from "./validate.js";
import { allKeepArgs, compose, type ToolCallContext, type ToolMiddleware } from "./middleware/types.js";
import { noteToolAttempt, noteToolType } from "../telemetry/calls.js";

export interface CallableListing {
  name: string;
  description: string;
  /** One line, e.g. `get(args: { url: string }): Promise<string>`. */
  signature: string;
}

export interface ToolListing {
  name: string;
  type: ToolType;
  description: string;
  tags: string[];
  /** Recipes (cli), tools (mcp), endpoints (http): called as `tools.<name>.<callable>(args)`. */
  callables: CallableListing[];
  /** The escape hatch `tools.<name>(args)`, e.g. `curl(args: { url: string; silent?: boolean }): Promise<string>`; null when the tool has none. */
  direct: { description: string; signature: string } | null;
}

export interface ToolRegistryOptions {
  /** Ranks `search()` results; default LexicalRanker. The seam for semantic search. */
  ranker?: Ranker;
  /** `type:` → adapter factory for YAML files; default `defaultToolFactories()`. */
  factories?: ToolFactories;
  /** Run around every call, first outermost (see tools/middleware). */
  middleware?: ToolMiddleware[];
  /** Events and sampling of `type: toolable` tools (ignored when `factories` is given). */
  toolable?: ToolableHostOptions;
  /** Where tool sources keep derived indexes (see ToolIndexOptions; ignored when `factories` is given). */
  indexDir?: string;
}

/** What a callable is called for each tool type, in messages. */
const CALLABLE_WORD: Record<ToolType, string> = { cli: "recipe", mcp: "tool", http: "endpoint", openapi: "operation", toolable: "command", code: "tool" };
const MAX_LISTED_NAMES = 20;
/** Tools with more callables than this are searched callable by callable (see search()). */
const PER_CALLABLE_SEARCH = 40;
/** Results asked of the ranker beyond `limit`, so that ties at the cut are broken by `concise`, not by name. */
const TIE_SLACK = 20;
/** Tools with more callables than this are described by summaries; describe "tool.callable" gives one in full. */
const MAX_DESCRIBED_CALLABLES = 100;
const DEFAULT_SEARCH_LIMIT = 10;

export class ToolRegistry {
  private readonly adapters = new Map<string, { adapter: ToolAdapter; source: string; type: ToolType }>();
  private readonly ranker: Ranker;
  private readonly factories: ToolFactories;
  private readonly middleware: ToolMiddleware[] = [];
  private chain: ((ctx: ToolCallContext) => Promise<unknown>) | null = null;
  /** The chain's middleware all keep the arguments (keepsArgs): what call() validated reaches the adapter as it was. */
  private chainKeepsArgs = false;
  /** Arguments call() validated, while their call goes through the chain. */
  private readonly validated = new WeakSet<Record<string, unknown>>();
  private searchCache: { infos: ToolInfo[]; docs: readonly SearchDocument[] } | null = null;
  private closed = false;
  /** Set by `deferred` until the first use starts the load; `loading` is that load until it succeeds (a failed one stays). */
  private pending: (() => Promise<void>) | null = null;
  private loading: Promise<void> | null = null;
  /** Tools that cannot run where this registry's calls run (markUnavailable), with the reason and fix. */
  private readonly unavailable = new Map<string, string>();
  /** A check that may mark tools unavailable (checkAvailability), run by the first listing, which waits for it. */
  private availabilityCheck: (() => Promise<void>) | null = null;
  private availability: Promise<void> | null = null;

  constructor(options: ToolRegistryOptions = {}) {
    this.ranker = options.ranker ?? new LexicalRanker();
    this.factories = options.factories ?? defaultToolFactories(options.toolable, options.indexDir !== undefined ? { indexDir: options.indexDir } : {});
    if (options.middleware) this.use(...options.middleware);
  }

  /** Adds middleware after what is there (so it runs inside it). */
  use(...middleware: ToolMiddleware[]): this {
    for (const mw of middleware) {
      if (typeof mw !== "function") throw new ValidationError("middleware must be functions (ctx, next) => result");
      this.middleware.push(mw);
    }
    this.chain = null;
    return this;
  }

  /**
   * Load every `*.yaml` / `*.yml` file (not hidden, not in subfolders) of `toolsPath`.
   * `undefined` or a missing directory gives an empty registry. Any invalid file fails the whole
   * load with one ValidationError that lists every problem, each naming its file.
   */
  static async load(toolsPath: string | undefined, options: ToolRegistryOptions = {}): Promise<ToolRegistry> {
    const registry = new ToolRegistry(options);
    await registry.loadFiles(toolsPath);
    return registry;
  }

  /**
   * A registry that reads `toolsPath` on its first use — list, search, describe, info, call,
   * openSession — instead of now (issue 24: parsing YAML and building the tools' schemas is ~110 ms
   * of a fresh process, and most short runs call no tool). The files are read once; a broken file
   * fails that first use, and every later one, with the ValidationError `load` would have thrown.
   * `names()` and `has()` answer from what is loaded, so they are empty until then.
   */
  static deferred(toolsPath: string | undefined, options: ToolRegistryOptions = {}): ToolRegistry {
    const registry = new ToolRegistry(options);
    if (toolsPath !== undefined) registry.pending = () => registry.loadFiles(toolsPath);
    return registry;
  }

  /** Settles when the deferred files are loaded (at once for a registry built any other way). */
  loaded(): Promise<void> {
    if (this.pending) {
      const load = this.pending;
      this.pending = null;
      // Once loaded, calls take the fast path again (no await). A failed load is read again on the
      // next use: a long-lived server recovers once the file is fixed, without a restart.
      this.loading = load().then(
        () => {
          this.loading = null;
        },
        (err: unknown) => {
          this.loading = null;
          if (!this.closed) this.pending = load;
          throw err;
        },
      );
      this.loading.catch(() => undefined);
    }
    // Every waiter gets its own copy of a failure: callers add context to errors, and one shared object would collect it all.
    return this.loading ? this.loading.catch((err: unknown) => Promise.reject(err instanceof Error ? withMessage(err, err.message) : err)) : Promise.resolve();
  }

  /** Deferred files not loaded yet (a plain field check, so a loaded registry's calls take no await). */
  private get unloaded(): boolean {
    return this.pending !== null || this.loading !== null;
  }

  private async loadFiles(toolsPath: string | undefined): Promise<void> {
    if (toolsPath === undefined) return;
    const dir = path.resolve(toolsPath);
    try {
      if (!(await stat(dir)).isDirectory()) throw new ValidationError(`toolsPath ${dir} is not a directory`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    const files = (await readdir(dir, { withFileTypes: true }))
      .filter((d) => (d.isFile() || d.isSymbolicLink()) && /\.ya?ml$/i.test(d.name) && !d.name.startsWith("."))
      .map((d) => path.join(dir, d.name))
      .sort();
    const problems: string[] = [];
    // What this load added: a failed load takes back exactly these (a retry must not find them twice).
    const added: string[] = [];
    for (const file of files) {
      try {
        const doc = await readYaml(file);
        const adapter = await createToolAdapter(doc, { file, dir }, this.factories);
        // close() came while this one was being built (a deferred load): it is nobody's to close but ours.
        if (this.closed) {
          await adapter.close();
          return;
        }
        const declared = (doc as { type?: unknown } | null)?.type;
        this.add(adapter, file, declared === "mcp" || declared === "http" || declared === "openapi" || declared === "toolable" ? declared : "cli");
        added.push(adapter.name);
      } catch (e) {
        if (e instanceof ValidationError) problems.push(e.message);
        else {
          await this.dropAdapters(added);
          throw e;
        }
      }
    }
    if (problems.length) {
      await this.dropAdapters(added);
      throw new ValidationError(problems.length === 1 ? problems[0]! : `${problems.length} tool files are invalid:\n${problems.join("\n")}`);
    }
  }

  /**
   * Add an adapter built elsewhere (code tools, an in-process tool, a test double). Same name rules
   * as YAML tools. `source` names where it came from in a duplicate-name error; `type` is what
   * discovery shows if its info() fails.
   */
  register(adapter: ToolAdapter, options: { source?: string; type?: ToolType } = {}): void {
    this.add(adapter, options.source ?? `registered adapter '${adapter.name}'`, options.type ?? "toolable");
  }

  private add(adapter: ToolAdapter, source: string, type: ToolType): void {
    this.assertOpen();
    assertToolName(adapter.name, source);
    const existing = this.adapters.get(adapter.name);
    if (existing) throw new ValidationError(`Duplicate tool name '${adapter.name}': defined in ${existing.source} and in ${source}`);
    this.adapters.set(adapter.name, { adapter, source, type });
  }

  /**
   * Host files that tools' programs need where they run (toolable executables, mounted read-only at
   * the same paths into a container session). Loads deferred files first.
   */
  async hostFiles(): Promise<string[]> {
    if (this.unloaded) await this.loaded();
    const files = new Set<string>();
    for (const { adapter } of this.adapters.values()) {
      const needs = (adapter as Partial<{ hostFiles(): string[] }>).hostFiles;
      if (typeof needs === "function") for (const f of needs.call(adapter)) files.add(f);
    }
    return [...files].sort();
  }

  /**
   * The programs each tool starts where the session's code runs (a container session's
   * container), by tool: what a container image must have. Loads deferred files first.
   */
  async commandsWhereCodeRuns(): Promise<Map<string, string[]>> {
    if (this.unloaded) await this.loaded();
    const out = new Map<string, string[]>();
    for (const [name, { adapter }] of this.adapters) {
      const needs = (adapter as Partial<{ commandsWhereCodeRuns(): string[] }>).commandsWhereCodeRuns;
      const commands = typeof needs === "function" ? needs.call(adapter) : [];
      if (commands.length) out.set(name, commands);
    }
    return out;
  }

  /**
   * Say that `name` cannot run where this registry's calls run (its command is missing from a
   * container image): tools.list, search and describe show it as unavailable with `reason` (which
   * names the fix), so an agent learns it before calling. A call still fails with the same fix.
   */
  markUnavailable(name: string, reason: string): void {
    this.unavailable.set(name, reason);
    this.searchCache = null;
  }

  /**
   * `check` (which calls markUnavailable) runs once, at the first tools.list, search or describe,
   * which wait for it: so they never show a tool as available before it is known, and a session
   * that lists nothing never pays for it. A failed check marks nothing.
   */
  checkAvailability(check: () => Promise<void>): void {
    this.availabilityCheck = check;
    this.availability = null;
  }

  /** An adapter's info, marked when the tool is unavailable where calls run. */
  private async infoOf(name: string): Promise<ToolInfo> {
    if (this.availabilityCheck) await (this.availability ??= this.availabilityCheck().catch(() => undefined));
    const info = await this.get(name).info();
    const reason = this.unavailable.get(name);
    return reason === undefined ? info : { ...info, description: `(unavailable: ${reason}) ${info.description}` };
  }

  /** Tool names, sorted. */
  names(): string[] {
    return [...this.adapters.keys()].sort();
  }

  has(name: string): boolean {
    return this.adapters.has(name);
  }

  /** The full ToolInfo of one tool. Throws NotFoundError. */
  async info(name: string): Promise<ToolInfo> {
    if (this.unloaded) await this.loaded();
    return this.infoOf(name);
  }

  async list(): Promise<ToolListing[]> {
    return (await this.allInfos()).map(listing);
  }

  /**
   * Every tool's info. A tool whose info() fails (an MCP server that cannot start) is shown as
   * unavailable, with the reason, instead of failing discovery of all the others.
   */
  private async allInfos(): Promise<ToolInfo[]> {
    if (this.unloaded) await this.loaded();
    this.assertOpen();
    const names = this.names();
    const settled = await Promise.allSettled(names.map((n) => this.infoOf(n)));
    return settled.map((r, i) => {
      if (r.status === "fulfilled") return r.value;
      const type = this.adapters.get(names[i]!)?.type ?? "toolable";
      const reason = r.reason instanceof Error ? r.reason.message : String(r.reason);
      return { name: names[i]!, type, description: `(unavailable: ${reason.split("\n")[0]!.slice(0, 300)})`, tags: [], callables: [], direct: null };
    });
  }

  /**
   * Tools ranked against `query`, best first. Fields: name ×3, tags ×2, callable names ×2, description ×1.5, callable descriptions ×1, param names ×1.
   * A tool with more than PER_CALLABLE_SEARCH callables (an OpenAPI spec's operations) is ranked
   * callable by callable instead: each of its results is the tool narrowed to one matching callable,
   * so a search finds one operation among thousands and returns a few lines, not the whole API.
   */
  async search(query: string, options: { limit?: number } = {}): Promise<Array<ToolListing & { score: number }>> {
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw new ValidationError(`limit must be a positive integer; got ${String(limit)}`);
    const infos = await this.allInfos();
    const byName = new Map(infos.map((i) => [i.name, i]));
    const docs = this.searchDocuments(infos);
    const ranked = concise(await this.ranker.rank(String(query), docs, limit + TIE_SLACK), docs).slice(0, limit);
    return ranked.flatMap(({ id, score }) => {
      const dot = id.indexOf(".");
      const info = byName.get(dot < 0 ? id : id.slice(0, dot));
      if (!info) return [];
      if (dot < 0) return [{ ...listing(info), score }];
      const callable = info.callables.find((c) => c.name === id.slice(dot + 1));
      return callable ? [{ ...listing({ ...info, callables: [callable], direct: null }), score }] : [];
    });
  }

  /** The search documents of `infos`, kept while the infos are the same objects (a frozen array the ranker recognises without comparing 2,500 documents). */
  private searchDocuments(infos: readonly ToolInfo[]): readonly SearchDocument[] {
    const cached = this.searchCache;
    if (cached && cached.infos.length === infos.length && cached.infos.every((info, i) => info === infos[i])) return cached.docs;
    const docs = Object.freeze(infos.flatMap((info) => (info.callables.length > PER_CALLABLE_SEARCH ? info.callables.map((c) => callableDocument(info, c)) : [searchDocument(info)])));
    this.searchCache = { infos: [...infos], docs };
    return docs;
  }

  /**
   * The tool's declaration in the language of the code that calls it (TypeScript, or Python stubs).
   * `name` is a tool (`"curl"`) or one callable of it (`"github.issues_create"`): the declaration
   * of that callable alone, which is how one operation of a large API is read. A tool with more
   * than MAX_DESCRIBED_CALLABLES callables is described by its callables' one-line summaries.
   */
  async describe(name: string, language: "typescript" | "python" = "typescript"): Promise<string> {
    if (this.unloaded) await this.loaded();
    const dot = name.indexOf(".");
    let info = await this.infoOf(dot < 0 ? name : name.slice(0, dot));
    if (dot >= 0) info = { ...info, callables: [findCallable(info, name.slice(dot + 1))], direct: null };
    else if (info.callables.length > MAX_DESCRIBED_CALLABLES) {
      const note = `Arguments of each callable: tools.describe("${info.name}.<callable>").`;
      if (language === "typescript") return describeToolSummary(info, note);
      info = { ...info, description: `${info.description}\n\n${note}`, callables: info.callables.map((c) => ({ name: c.name, description: c.description, params: [], returns: "Any" })) };
    }
    return language === "python" ? describeToolPython(info) : describeTool(info);
  }

  /**
   * Call a tool. `callable` null is the escape hatch `tools.<tool>(args)`. `args` must be a plain
   * object (or undefined); it is validated against the callable's params before the adapter runs.
   */
  async call(tool: string, callable: string | null, args: unknown, ctx: CallContext = {}): Promise<unknown> {
    if (this.unloaded) await this.loaded();
    const adapter = this.get(tool);
    const info = adapter.infoNow?.() ?? (await adapter.info());
    const target = findCallable(info, callable);
    const cleaned = validateArgs(tool, callable, target, args);
    const needsApproval = adapter.approvalNeeded?.(callable) ?? null;
    noteToolType(info.type);
    if (this.middleware.length === 0) {
      noteToolAttempt();
      if (needsApproval !== null && ctx.approved !== true) return awaitApproval({ tool, callable, needsApproval, ...(ctx.pause ? { pause: ctx.pause } : {}) });
      return adapter.call(callable, cleaned, ctx);
    }
    if (!this.chain) {
      this.chain = compose(this.middleware, (c) => this.callAdapter(c));
      this.chainKeepsArgs = allKeepArgs(this.middleware);
    }
    if (this.chainKeepsArgs) this.validated.add(cleaned);
    const call: ToolCallContext = { tool, callable, args: cleaned, executor: ctx.executor ?? "host", requestId: randomUUID(), runId: ctx.runId ?? "host", timeoutMs: ctx.timeoutMs, signal: ctx.signal };
    // Set, not spread in as `...(x ? { x } : {})`: a literal of conditional spreads costs V8 several times more, on every call.
    if (ctx.holdDeadline) call.holdDeadline = ctx.holdDeadline;
    if (ctx.pause) call.pause = ctx.pause;
    if (ctx.approved) call.approved = true;
    if (needsApproval !== null) call.needsApproval = needsApproval;
    if (ctx.place) call.place = ctx.place;
    // Read from the current args: a middleware may have edited them since the call began.
    if (adapter.sameCommandAs) call.sameCommandAs = () => adapter.sameCommandAs!(callable, call.args).map((name) => `${tool}.${name}`);
    return this.chain(call);
  }

  /**
   * The call that undoes `tool.callable(args)` which returned `result`, from the tool's `revert`
   * declaration; null when the tool declares none for that callable.
   */
  async revertOf(tool: string, callable: string | null, args: Record<string, unknown>, result: unknown): Promise<{ callable: string | null; args: Record<string, unknown> } | null> {
    if (this.unloaded) await this.loaded();
    const adapter = this.get(tool);
    return adapter.revertOf?.(callable, args, result) ?? null;
  }

  /**
   * Open a session with a toolable session tool. Arguments are validated like a call's, and the
   * middleware chain (policy, approval, audit, limits) sees it as a call of `tool.callable`.
   */
  async openSession(tool: string, callable: string, args: unknown, ctx: CallContext = {}): Promise<ToolableSession> {
    if (this.unloaded) await this.loaded();
    const adapter = this.get(tool);
    const target = findCallable(await adapter.info(), callable);
    const cleaned = validateArgs(tool, callable, target, args);
    if (!opensSessions(adapter)) {
      throw new ToolError({ tool, callable, code: "INVALID_INPUT", message: `${callLabel(tool, callable)}.session: only toolable session tools can be opened as sessions; call ${callLabel(tool, callable)}(args)` });
    }
    const open = (c: ToolCallContext) =>
      adapter.openSession(callable, c.args, { ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}), runId: c.runId, ...(c.signal ? { signal: c.signal } : {}), ...(c.place ? { place: c.place } : {}) });
    const first: ToolCallContext = { tool, callable, args: cleaned, executor: ctx.executor ?? "host", requestId: randomUUID(), runId: ctx.runId ?? "host", timeoutMs: ctx.timeoutMs, signal: ctx.signal, ...(ctx.place ? { place: ctx.place } : {}) };
    if (this.middleware.length === 0) return open(first);
    const chain = compose(this.middleware, (c) => open({ ...c, args: validateArgs(c.tool, callable, target, c.args) }));
    return (await chain(first)) as ToolableSession;
  }

  /**
   * The end of the middleware chain. Middleware (approval) may have edited the arguments: check
   * them again, unless every middleware keeps them and they are still those call() validated.
   */
  private async callAdapter(c: ToolCallContext): Promise<unknown> {
    const adapter = this.get(c.tool);
    const kept = this.chainKeepsArgs && this.validated.has(c.args);
    const target = kept ? null : findCallable(adapter.infoNow?.() ?? (await adapter.info()), c.callable);
    // needs_approval: no middleware approved the call (nor a decision on a paused run).
    if (c.needsApproval !== undefined && c.approved !== true) return awaitApproval({ tool: c.tool, callable: c.callable, needsApproval: c.needsApproval, ...(c.pause ? { pause: c.pause } : {}) });
    const args = target === null ? c.args : validateArgs(c.tool, c.callable, target, c.args);
    noteToolAttempt();
    const ctx: CallContext = { executor: c.executor, runId: c.runId };
    if (c.timeoutMs !== undefined) ctx.timeoutMs = c.timeoutMs;
    if (c.signal) ctx.signal = c.signal;
    // Without this a container session's tools ran on the host whenever middleware was configured.
    if (c.place) ctx.place = c.place;
    return adapter.call(c.callable, args, ctx);
  }

  /** Close every adapter (MCP connections, ...). Idempotent; later calls fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pending = null;
    // A load under way adds what it has built so far; wait for it so those adapters are closed too.
    await this.loading?.catch(() => undefined);
    await this.closeAdapters();
  }

  /** A failed load closes what it built; the registry stays closed. */
  private async dropAdapters(names: readonly string[]): Promise<void> {
    const dropped = names.map((n) => this.adapters.get(n)).filter((a) => a !== undefined);
    for (const n of names) this.adapters.delete(n);
    await Promise.allSettled(dropped.map(({ adapter }) => adapter.close()));
  }

  private async closeAdapters(): Promise<void> {
    this.closed = true;
    const all = [...this.adapters.values()];
    this.adapters.clear();
    await Promise.allSettled(all.map(({ adapter }) => adapter.close()));
  }

  private assertOpen(): void {
    if (this.closed) throw new ToolError({ tool: "tools", callable: null, code: "INTERNAL", message: "The tool registry is closed" });
  }

  private get(name: string): ToolAdapter {
    this.assertOpen();
    const entry = this.adapters.get(name);
    if (entry) return entry.adapter;
    const names = this.names();
    const close = closestNames(name, names);
    let message = `Unknown tool: ${name}.${didYouMean(name, names)}`;
    if (close.length === 0) {
      if (names.length === 0) message += " No tools are configured.";
      else {
        const shown = names.slice(0, MAX_LISTED_NAMES).join(", ");
        message += ` Available: ${shown}${names.length > MAX_LISTED_NAMES ? `, … (${names.length} in all; use tools.search)` : ""}`;
      }
    }
    throw new NotFoundError(message, close);
  }
}

/** A tool file is a few KB; a bigger one is refused before it is read or parsed. */
const MAX_TOOL_FILE_BYTES = 1_048_576;

async function readYaml(file: string): Promise<unknown> {
  let text: string;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new ValidationError(`Cannot read ${file}: not a file`);
    if (info.size > MAX_TOOL_FILE_BYTES) throw new ValidationError(`Cannot read ${file}: ${info.size} bytes; a tool file may have at most ${MAX_TOOL_FILE_BYTES}`);
    text = await readFile(file, "utf8");
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    // Unreadable (EACCES), a dangling symlink (ENOENT), ...: the file is named, with no stack.
    const code = (e as NodeJS.ErrnoException).code;
    throw new ValidationError(`Cannot read ${file}${code ? ` (${code})` : ""}: ${code === "ENOENT" ? "it is a symlink to nothing, or was removed" : e instanceof Error ? e.message : String(e)}`);
  }
  // Loaded on first use: importing ts-code-mode must not pay for the YAML parser.
  const { parse: parseYaml } = await import("yaml");
  try {
    return parseYaml(text);
  } catch (e) {
    throw new ValidationError(`Invalid YAML in ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function findCallable(info: ToolInfo, callable: string | null): CallableInfo {
  const word = CALLABLE_WORD[info.type];
  const names = info.callables.map((c) => c.name);
  if (callable === null) {
    if (info.direct) return info.direct;
    throw new NotFoundError(`Tool '${info.name}' cannot be called directly; call one of its ${word}s: ${names.map((n) => `tools.${info.name}.${n}(...)`).join(", ")}`, names);
  }
  const found = info.callables.find((c) => c.name === callable);
  if (found) return found;
  const close = closestNames(callable, names);
  throw new NotFoundError(
    `Unknown ${word} '${callable}' of tool '${info.name}'.${didYouMean(callable, names)} Available: ${names.slice(0, MAX_LISTED_NAMES).join(", ") || "(none)"}${names.length > MAX_LISTED_NAMES ? `, … (${names.length} in all; use tools.search)` : ""}`,
    close,
  );
}

function listing(info: ToolInfo): ToolListing {
  return {
    name: info.name,
    type: info.type,
    description: info.description,
    tags: [...info.tags],
    callables: info.callables.map((c) => ({ name: c.name, description: c.description, signature: callableSignature(c.name, c) })),
    direct: info.direct ? { description: info.direct.description, signature: callableSignature(info.name, info.direct) } : null,
  };
}

/**
 * Equal scores, most specific first: among callables that match every word of "delete a
 * repository", `repos_delete` ("Delete a repository") before `actions_delete_actions_cache_by_id`
 * ("Delete a GitHub Actions cache for a repository"). Specific = fewer words in the callable's name
 * and first sentence. Whole-tool documents keep the ranker's order. Stable otherwise.
 */
function concise(ranked: ScoredId[], docs: readonly SearchDocument[]): ScoredId[] {
  if (ranked.length < 2 || !ranked.some((r) => r.id.includes("."))) return ranked;
  const byId = new Map(docs.map((d) => [d.id, d]));
  const words = (id: string): number => {
    const doc = byId.get(id);
    if (!doc || !id.includes(".")) return 0;
    return tokenize(`${doc.fields[0]?.text ?? ""} ${doc.fields[1]?.text ?? ""}`).length;
  };
  return ranked
    .map((r, i) => ({ r, i, w: words(r.id) }))
    .sort((a, b) => b.r.score - a.r.score || a.w - b.w || a.i - b.i)
    .map((x) => x.r);
}

/** One callable of a large tool as a search document of its own (id `tool.callable`); its params are not read (they may be resolved lazily). */
function callableDocument(info: ToolInfo, c: CallableInfo): SearchDocument {
  const end = c.description.search(/\.(\s|$)/);
  const lead = end < 0 ? c.description : c.description.slice(0, end);
  const rest = end < 0 ? "" : c.description.slice(end + 1);
  return {
    id: `${info.name}.${c.name}`,
    fields: [
      { text: c.name, weight: 3 },
      // The first sentence says what the callable does (an operation's summary); the rest is detail.
      { text: lead, weight: 3 },
      { text: rest, weight: 1 },
      { text: `${info.name} ${info.tags.join(" ")}`, weight: 1 },
    ],
    // What it does, in words: the detail and the route would only blur the meaning of the summary.
    semantic: { primary: `${c.name.replace(/_/g, " ")}: ${lead}` },
  };
}

function searchDocument(info: ToolInfo): SearchDocument {
  const params = new Set<string>();
  for (const c of [...info.callables, ...(info.direct ? [info.direct] : [])]) for (const p of c.params) params.add(p.name);
  return {
    id: info.name,
    fields: [
      { text: info.name, weight: 3 },
      { text: info.tags.join(" "), weight: 2 },
      { text: info.description, weight: 1.5 },
      { text: info.callables.map((c) => c.name).join(" "), weight: 2 },
      { text: info.callables.map((c) => c.description).join(" "), weight: 1 },
      { text: [...params].join(" "), weight: 1 },
    ],
    // What a semantic ranker embeds: what the tool is for, then what each of its callables does.
    semantic: {
      primary: [info.description || info.name, info.tags.length ? `(${info.tags.join(", ")})` : ""].join(" ").trim(),
      secondary: info.callables.map((c) => `${c.name.replace(/_/g, " ")}: ${c.description}`).join(". "),
    },
  };
}

/** An adapter with sessions (toolable's); checked by shape, so the registry need not load the toolable module. */
function opensSessions(adapter: ToolAdapter): adapter is ToolAdapter & Pick<ToolableToolAdapter, "openSession"> {
  return typeof (adapter as Partial<Pick<ToolableToolAdapter, "openSession">>).openSession === "function";
}

/**
 * A `needs_approval` call nobody approved: a durable run pauses on it (the run ends, a human
 * decides, `session.resume` goes on); anywhere else it is refused, saying how to allow it.
 */
function awaitApproval(call: { tool: string; callable: string | null; needsApproval: string; pause?: (reason: string) => Promise<never> }): Promise<never> {
  if (call.pause) return call.pause(call.needsApproval);
  throw new ToolError({
    tool: call.tool,
    callable: call.callable,
    code: "PERMISSION",
    message: `${callLabel(call.tool, call.callable)} needs approval (${call.needsApproval}); this run cannot wait for one. Run it in a durable session (new Session({ durable })) so it pauses for a decision, or add approval middleware that approves it.`,
  });
}
