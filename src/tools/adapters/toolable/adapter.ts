/**
 * A toolable executable (or a folder of them) defined in YAML (`type: toolable`): every tool its
 * `--discover` lists becomes `tools.<yaml name>.<tool>(input)`; when it has resources or prompts,
 * `tools.<yaml name>.resource({ uri })` and `.prompt({ name, args })` read them.
 *
 *   - discovery: `--discover`, then `<tool> --manifest` per tool; cached, and done again when an
 *     executable's (or the folder's) mtime or size changes;
 *   - a call: `<exe> <tool> [--stream] --sample-via stdin '<json input>'` — the tool name comes
 *     from discovery and must be an identifier, the input is one JSON word starting with `{`, so
 *     nothing the agent passes can become an option or a shell word;
 *   - the answer: the last JSON line (a tool may print before it), or the `result` event of a
 *     stream; envelopes map as envelope.ts says; a non-zero exit, a crash, no envelope → INTERNAL;
 *   - events (stream lines, stderr notifications) go to `host.onEvent`; sampling requests to
 *     `host.sampler` (none: stdin is closed, so the tool fails instead of waiting);
 *   - sessions (`openSession`): a live process fed JSON lines, killed by `close()` or the deadline.
 */
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../../../errors.js";
import type { CallContext, CallableInfo, CommandPlace, ParamSpec, ToolAdapter, ToolInfo } from "../../protocol.js";
import { callLabel, recipeNameProblem } from "../../validate.js";
import type { ToolSource } from "../index.js";
import { serverEnv } from "../mcp/connection.js";
import { withRealPython } from "../../../real-python.js";
import { paramsFromInputSchema } from "../mcp/json-schema.js";
import { cut, eventBody, isObject, parseAnswer, settleEnvelope } from "./envelope.js";
import type { SampleRequest, ToolableHostOptions } from "./host.js";
import { ToolableProcess, type ProcessOptions } from "./process.js";
import { startSampleListener } from "./sample-http.js";
import { ToolableSession } from "./session.js";
import { parseToolableTool, type ToolableSpec } from "./schema.js";

/** Tools taken from one executable; past this a listing is hostile or broken. */
const MAX_TOOLS = 200;
/** Executables looked at in a `dir:` folder. */
const MAX_EXECUTABLES = 100;
/** `--manifest` runs at once during discovery. */
const MANIFEST_CONCURRENCY = 4;
/** Discovery answers are small; this bounds what one may take. */
const MAX_DISCOVERY_BYTES = 4 * 1024 * 1024;
/** Sampling requests answered per call; a tool looping on them is stopped by this and the timeout. */
export const MAX_SAMPLES_PER_CALL = 50;
/** Events forwarded per call; more are dropped (the result still arrives). */
const MAX_EVENTS_PER_CALL = 10_000;
const TOOL_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Unit {
  /** argv prefix: the executable (and fixed words). */
  command: string[];
  /** Files whose mtime/size say the tools may have changed. */
  stamps: string[];
}

interface ToolEntry {
  unit: Unit;
  name: string;
  streaming: boolean;
  session: boolean;
  info: CallableInfo;
}

interface Discovered {
  key: string;
  info: ToolInfo;
  tools: Map<string, ToolEntry>;
  /** Which executable answers --resource / --prompt (the first that declares any). */
  resources: Unit | null;
  prompts: Unit | null;
}

function schemaText(v: unknown, max = 300): string {
  return typeof v === "string" ? cut(v, max) : "";
}

export class ToolableToolAdapter implements ToolAdapter {
  readonly name: string;
  private cache: Discovered | null = null;
  private discovering: Promise<Discovered> | null = null;
  private readonly sessions = new Set<ToolableSession>();
  private closed = false;

  constructor(
    readonly spec: ToolableSpec,
    private readonly host: ToolableHostOptions = {},
  ) {
    this.name = spec.name;
  }

  static fromDocument(doc: unknown, source: ToolSource, host?: ToolableHostOptions): ToolableToolAdapter {
    return new ToolableToolAdapter(parseToolableTool(doc, source), host);
  }

  async info(): Promise<ToolInfo> {
    return (await this.discovered()).info;
  }

  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    this.assertOpen(callable);
    const d = await this.discovered();
    const label = callLabel(this.name, callable);
    const at = { tool: this.name, callable, label };
    if (callable === "resource" && !d.tools.has("resource") && d.resources) {
      const uri = String(args["uri"]);
      return this.readOnce(d.resources, ["--resource", this.word(uri, "uri", at)], ctx, at);
    }
    if (callable === "prompt" && !d.tools.has("prompt") && d.prompts) {
      const name = String(args["name"]);
      return this.readOnce(d.prompts, ["--prompt", this.word(name, "name", at), JSON.stringify(args["args"] ?? {})], ctx, at);
    }
    const entry = callable === null ? undefined : d.tools.get(callable);
    if (!entry) throw new ToolError({ tool: this.name, callable, code: "NOT_FOUND", message: `${label}: no such tool in the executable's --discover` });
    if (entry.session) {
      throw new ToolError({
        tool: this.name,
        callable,
        code: "INVALID_INPUT",
        message: `${label} is a session tool: open it with ${label}.session(input) (or adapter.openSession) and send it messages`,
        suggestion: `const s = await ${label}.session(input); await s.send({...}); await s.next(); await s.close()`,
      });
    }
    return this.runTool(entry, args, ctx, at);
  }

  /** Open a session with a session tool: the process stays up until close(), EOF or the deadline. */
  async openSession(callable: string, args: Record<string, unknown>, options: { timeoutMs?: number; runId?: string; signal?: AbortSignal; place?: CommandPlace } = {}): Promise<ToolableSession> {
    this.assertOpen(callable);
    const d = await this.discovered();
    const label = callLabel(this.name, callable);
    const entry = d.tools.get(callable);
    if (!entry) throw new ToolError({ tool: this.name, callable, code: "NOT_FOUND", message: `${label}: no such tool in the executable's --discover` });
    if (!entry.session) throw new ToolError({ tool: this.name, callable, code: "INVALID_INPUT", message: `${label} is not a session tool; call it as ${label}(input)` });
    const timeoutMs = Math.max(1, Math.min(this.spec.timeoutMs, options.timeoutMs ?? this.spec.timeoutMs));
    const place = this.placeOf(options.place);
    const session = new ToolableSession([...(await this.argvPrefix(entry.unit, place)), callable, "--session", JSON.stringify(args)], {
      tool: this.name,
      callable,
      label,
      timeoutMs,
      ...this.where(place, entry.unit),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    this.sessions.add(session);
    // `.finally` would hand on a killed session's rejection to a promise nobody awaits (an unhandled
    // rejection: a host under Node's default exits 1); forget the session either way instead.
    const forget = () => void this.sessions.delete(session);
    session.done.then(forget, forget);
    return session;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.sessions) s.close();
    this.sessions.clear();
  }

  private assertOpen(callable: string | null): void {
    if (this.closed) throw new ToolError({ tool: this.name, callable, code: "INTERNAL", message: `toolable tool '${this.name}' is closed` });
  }

  /** A word the agent chose that goes into argv after a flag: never one that could read as an option. */
  private word(value: string, what: string, at: { callable: string | null; label: string }): string {
    if (value.startsWith("-") || value.includes("\0") || value.length > 4_096) {
      throw new ToolError({ tool: this.name, callable: at.callable, code: "INVALID_INPUT", message: `${at.label}: '${what}' must not start with '-', contain NUL or exceed 4096 characters; got ${JSON.stringify(cut(value, 60))}` });
    }
    return value;
  }

  private budget(ctx: CallContext): number {
    return Math.max(1, Math.min(this.spec.timeoutMs, ctx.timeoutMs ?? this.spec.timeoutMs));
  }

  /** --resource / --prompt: the whole answer is JSON; an error envelope is thrown. */
  private async readOnce(unit: Unit, words: string[], ctx: CallContext, at: { tool: string; callable: string | null; label: string }): Promise<unknown> {
    const place = this.placeOf(ctx.place);
    const outcome = await this.runProcess([...(await this.argvPrefix(unit, place)), ...words], at, this.budget(ctx), ctx.signal, true, {}, place, unit);
    const answer = parseAnswer(outcome.stdout, outcome.lastJson);
    if (!answer) throw this.noEnvelope(at, outcome);
    if (answer["status"] === "error" || answer["status"] === "success" || answer["status"] === "partial") return settleEnvelope(answer, at);
    return answer;
  }

  private async runTool(entry: ToolEntry, args: Record<string, unknown>, ctx: CallContext, at: { tool: string; callable: string | null; label: string }): Promise<unknown> {
    const runId = ctx.runId ?? "host";
    const sampling = new AbortController();
    let events = 0;
    let samples = 0;
    let refused = "";
    let final: Record<string, unknown> | undefined;
    const emit = (raw: Record<string, unknown>) => {
      const event = eventBody(raw);
      if (!event || !this.host.onEvent || events >= MAX_EVENTS_PER_CALL) return;
      events++;
      this.host.onEvent({ tool: this.name, callable: entry.name, runId, event });
    };
    const request = (raw: Record<string, unknown>): SampleRequest | null => {
      if (typeof raw["prompt"] !== "string") return null;
      const maxTokens = raw["max_tokens"];
      const stops = raw["stop_sequences"];
      return {
        tool: this.name,
        callable: entry.name,
        runId,
        prompt: raw["prompt"],
        max_tokens: typeof maxTokens === "number" && Number.isFinite(maxTokens) ? maxTokens : 1000,
        ...(typeof raw["system"] === "string" ? { system: raw["system"] } : {}),
        ...(typeof raw["temperature"] === "number" ? { temperature: raw["temperature"] } : {}),
        ...(Array.isArray(stops) ? { stop_sequences: stops.filter((s): s is string => typeof s === "string") } : {}),
        signal: sampling.signal,
      };
    };
    /** The answer to a sampling request, or why there is none. */
    const answer = async (raw: Record<string, unknown>): Promise<{ content: string } | { refused: string }> => {
      const sampler = this.host.sampler;
      if (!sampler) return { refused: "the tool asked for an LLM completion (sampling) and no sampler is configured" };
      if (++samples > MAX_SAMPLES_PER_CALL) return { refused: `the tool asked for more than ${MAX_SAMPLES_PER_CALL} completions in one call` };
      const req = request(raw);
      if (!req) return { refused: "the tool sent a sampling request without a prompt" };
      try {
        const content = await sampler(req);
        return { content: typeof content === "string" ? content : String(content) };
      } catch (e) {
        return { refused: `the sampler failed: ${cut(e instanceof Error ? e.message : String(e), 500)}` };
      }
    };

    const place = this.placeOf(ctx.place);
    // A container has no network to reach a host listener: sampling goes over stdin there.
    const listener = this.host.sampleVia === "http" && !place ? await startSampleListener(async (raw) => answer(raw)) : null;
    const flags = [...(entry.streaming ? ["--stream"] : []), "--sample-via", listener ? listener.url : "stdin"];
    // Sampling over stdin is answered in order; one answer at a time.
    let queue = Promise.resolve();
    let proc: ToolableProcess | null = null;
    try {
      const outcome = await this.runProcess([...(await this.argvPrefix(entry.unit, place)), entry.name, ...flags, JSON.stringify(args)], at, this.budget(ctx), ctx.signal, false, {
        onStdoutLine: (value) => {
          if (!isObject(value)) return;
          const type = value["type"];
          if (type === "result") final = value;
          else if (type === "sample_request") {
            const id = value["id"];
            queue = queue.then(async () => {
              const a = await answer(value);
              if ("content" in a) proc?.write({ type: "sample_response", id, content: a.content });
              else {
                refused = a.refused;
                // EOF: the reference tool fails its sample() at once instead of waiting for us.
                proc?.endInput();
              }
            });
          } else emit(value);
        },
        onStderrJson: (value) => {
          if (value["type"] === "notification") emit(value);
        },
        onStart: (p) => {
          proc = p;
        },
      }, place, entry.unit);
      const note = refused ? ` (${refused})` : "";
      if (outcome.exitCode !== 0) {
        throw new ToolError({
          tool: this.name,
          callable: at.callable,
          code: "INTERNAL",
          message: `${at.label}: the executable exited with code ${outcome.exitCode}${note}: ${outcome.stderr || outcome.noise || "(no output)"}`,
          exitCode: outcome.exitCode,
          ...(outcome.stderr ? { stderr: outcome.stderr } : {}),
        });
      }
      const envelope = final ? Object.fromEntries(Object.entries(final).filter(([k]) => k !== "type")) : outcome.lastJson;
      if (!envelope || !("status" in envelope)) throw this.noEnvelope(at, outcome);
      return settleEnvelope(envelope, at, note);
    } finally {
      sampling.abort();
      await listener?.close();
    }
  }

  private noEnvelope(at: { callable: string | null; label: string }, outcome: { noise: string; stderr: string }): ToolError {
    const seen = outcome.noise ? `; it printed: ${cut(outcome.noise, 500)}` : " (no output)";
    return new ToolError({
      tool: this.name,
      callable: at.callable,
      code: "INTERNAL",
      message: `${at.label}: the tool printed no JSON envelope${seen}`,
      ...(outcome.stderr ? { stderr: outcome.stderr } : {}),
    });
  }

  private runProcess(
    argv: string[],
    at: { callable: string | null; label: string },
    timeoutMs: number,
    signal: AbortSignal | undefined,
    collect: boolean,
    hooks: { onStdoutLine?: (v: unknown, line: string) => void; onStderrJson?: (v: Record<string, unknown>) => void; onStart?: (p: ToolableProcess) => void } = {},
    place?: CommandPlace,
    unit?: Unit,
  ) {
    const p = new ToolableProcess(
      argv,
      {
        tool: this.name,
        callable: at.callable,
        label: at.label,
        timeoutMs,
        ...this.where(place, unit),
        ...(signal ? { signal } : {}),
        ...(collect ? { maxStdoutBytes: MAX_DISCOVERY_BYTES } : {}),
        ...(hooks.onStdoutLine ? { onStdoutLine: hooks.onStdoutLine } : {}),
        ...(hooks.onStderrJson ? { onStderrJson: hooks.onStderrJson } : {}),
      },
      collect,
    );
    hooks.onStart?.(p);
    return p.done;
  }

  /** Where calls run: the session's place (a container), unless the YAML says runs_on: host. */
  private placeOf(place: CommandPlace | undefined): CommandPlace | undefined {
    return this.spec.runsOn === "host" ? undefined : place;
  }

  /**
   * The executable's argv prefix for `place`: inside a container, command words that name files
   * relative to the tool's cwd become absolute, since those files are mounted at the same paths
   * (hostFiles) while the working folder is the container's. On the host, a Python started through
   * a pyenv/asdf shim (`python3 tool.py`, a `#!/usr/bin/env python3` file) starts the real
   * interpreter instead (real-python.ts): discovery alone starts the executable once per tool.
   */
  private async argvPrefix(unit: Unit, place: CommandPlace | undefined): Promise<string[]> {
    if (!place) return withRealPython(unit.command, { cwd: this.spec.cwd, env: serverEnv(this.spec.env) });
    return unit.command.map((w, i) => (i > 0 && w.includes("/") && !path.isAbsolute(w) && existsSync(path.resolve(this.spec.cwd, w)) ? path.resolve(this.spec.cwd, w) : w));
  }

  /** Spawner, cwd and environment of a run: the host's (cwd, a minimal safe environment) or the place's (its workdir; only the YAML's env). */
  private where(place: CommandPlace | undefined, unit: Unit | undefined): Pick<ProcessOptions, "cwd" | "env" | "spawn" | "fixMissing"> {
    if (!place) return { cwd: this.spec.cwd, env: serverEnv(this.spec.env) };
    const executable = unit?.command[0] ?? "";
    return { env: { ...this.spec.env }, spawn: place.spawn, fixMissing: `${place.fixFor(path.basename(executable))} (or give the tool's YAML runs_on: host)` };
  }

  /**
   * Host files a place must have at the same paths to run this tool (mounted read-only into a
   * container session): the folder of a `dir:` tool, or the command's words that name files.
   * None for `runs_on: host`.
   */
  hostFiles(): string[] {
    if (this.spec.runsOn === "host") return [];
    if (this.spec.dir) return [this.spec.dir];
    const words = this.spec.command ?? [];
    return words
      .filter((w, i) => (i === 0 ? path.isAbsolute(w) : w.includes("/")))
      .map((w) => path.resolve(this.spec.cwd, w))
      .filter((f) => existsSync(f));
  }

  // ---- discovery ----

  private async units(): Promise<Unit[]> {
    if (this.spec.command) {
      const stamps = [this.spec.command[0]!, ...this.spec.command.slice(1).map((w) => path.resolve(this.spec.cwd, w))].filter((f) => path.isAbsolute(f));
      return [{ command: this.spec.command, stamps }];
    }
    const dir = this.spec.dir!;
    let entries: string[];
    try {
      entries = (await readdir(dir)).filter((n) => !n.startsWith(".")).sort().slice(0, MAX_EXECUTABLES);
    } catch (e) {
      throw new ToolError({ tool: this.name, callable: null, code: "DEPENDENCY", message: `tools.${this.name}: cannot read the folder ${dir}: ${(e as Error).message}` });
    }
    const units: Unit[] = [];
    for (const n of entries) {
      const file = path.join(dir, n);
      const s = await stat(file).catch(() => null);
      if (!s?.isFile()) continue;
      // The reference registry runs .py files with the Python interpreter.
      if (n.endsWith(".py")) units.push({ command: ["python3", file], stamps: [file] });
      else if (s.mode & 0o111) units.push({ command: [file], stamps: [file] });
    }
    return units;
  }

  private async stampKey(units: Unit[]): Promise<string> {
    const files = [...(this.spec.dir ? [this.spec.dir] : []), ...units.flatMap((u) => u.stamps)];
    const parts = await Promise.all(
      files.map(async (f) => {
        const s = await stat(f).catch(() => null);
        return s ? `${f}:${s.mtimeMs}:${s.size}` : `${f}:-`;
      }),
    );
    return parts.join("|");
  }

  private async discovered(): Promise<Discovered> {
    const units = await this.units();
    const key = await this.stampKey(units);
    if (this.cache && this.cache.key === key) return this.cache;
    if (!this.discovering) {
      const p = this.discover(units, key).finally(() => {
        if (this.discovering === p) this.discovering = null;
      });
      this.discovering = p;
    }
    const d = await this.discovering;
    this.cache = d;
    return d;
  }

  private async discover(units: Unit[], key: string): Promise<Discovered> {
    const tools = new Map<string, ToolEntry>();
    const skipped: string[] = [];
    let resources: Unit | null = null;
    let prompts: Unit | null = null;
    let description = this.spec.description;
    const resourceDocs: string[] = [];
    const promptDocs: string[] = [];
    for (const unit of units) {
      const at = { callable: null, label: `tools.${this.name} (${path.basename(unit.command[unit.command.length - 1]!)} --discover)` };
      const out = await this.runProcess([...(await this.argvPrefix(unit, undefined)), "--discover"], at, this.spec.discoverTimeoutMs, undefined, true);
      const doc = parseAnswer(out.stdout, out.lastJson);
      if (!doc || !Array.isArray(doc["tools"])) {
        throw new ToolError({ tool: this.name, callable: null, code: "DEPENDENCY", message: `${at.label}: the answer is not a toolable discovery document${out.noise ? `: ${cut(out.noise, 300)}` : ""}` });
      }
      if (!description && units.length === 1) description = `${schemaText(doc["name"], 80)} ${schemaText(doc["version"], 40)}`.trim();
      const listed = (doc["tools"] as unknown[]).filter(isObject).slice(0, MAX_TOOLS);
      const names = listed.map((t) => t["name"]).filter((n): n is string => typeof n === "string");
      const valid = names.filter((n) => {
        const ok = TOOL_NAME_RE.test(n) && recipeNameProblem(n) === null && !tools.has(n);
        if (!ok) skipped.push(n.slice(0, 60));
        return ok;
      });
      const manifests = await mapLimit(valid, MANIFEST_CONCURRENCY, async (n) => {
        const m = await this.runProcess([...(await this.argvPrefix(unit, undefined)), n, "--manifest"], { callable: n, label: `tools.${this.name}.${n} --manifest` }, this.spec.discoverTimeoutMs, undefined, true);
        return parseAnswer(m.stdout, m.lastJson) ?? {};
      });
      valid.forEach((n, i) => {
        const m = manifests[i]!;
        const listedEntry = listed.find((t) => t["name"] === n) ?? {};
        tools.set(n, {
          unit,
          name: n,
          streaming: m["streaming"] === true || listedEntry["streaming"] === true,
          session: m["session_mode"] === true || listedEntry["session_mode"] === true,
          info: callableInfo(this.name, n, m, listedEntry),
        });
      });
      const res = Array.isArray(doc["resources"]) ? doc["resources"].filter(isObject) : [];
      const pro = Array.isArray(doc["prompts"]) ? doc["prompts"].filter(isObject) : [];
      if (res.length && !resources) {
        resources = unit;
        for (const r of res.slice(0, 50)) resourceDocs.push(`${schemaText(r["uri_pattern"], 200)} — ${schemaText(r["summary"])}`);
      }
      if (pro.length && !prompts) {
        prompts = unit;
        for (const p of pro.slice(0, 50)) {
          const args = isObject(p["arguments"]) ? Object.keys(p["arguments"]).slice(0, 20).join(", ") : "";
          promptDocs.push(`${schemaText(p["name"], 100)}(${args}) — ${schemaText(p["summary"])}`);
        }
      }
    }
    const callables = [...tools.values()].map((t) => (t.session ? { ...t.info, description: `${t.info.description}\n(session tool: open it with .session(input))`.trim() } : t.info));
    if (resources && !tools.has("resource")) {
      callables.push({ name: "resource", description: ["Read a resource by URI. Resources:", ...resourceDocs].join("\n"), params: [{ name: "uri", type: "string", required: true, description: "e.g. one matching a pattern above" }], returns: "unknown" });
    }
    if (prompts && !tools.has("prompt")) {
      const params: ParamSpec[] = [
        { name: "name", type: "string", required: true },
        { name: "args", type: "object", required: false, description: "the prompt's arguments" },
      ];
      callables.push({ name: "prompt", description: ["Render a prompt. Prompts:", ...promptDocs].join("\n"), params, returns: "unknown" });
    }
    if (skipped.length) description = `${description}${description ? " " : ""}(tools not reachable by name, skipped: ${skipped.slice(0, 10).join(", ")})`;
    if (this.spec.runsOn === "host") description = `${description || `toolable executable ${this.name}`} [runs_on: host — runs on the host, outside a container session's container]`;
    const info: ToolInfo = {
      name: this.name,
      type: "toolable",
      description: description || `toolable executable ${this.name}`,
      tags: [...this.spec.tags],
      callables,
      direct: null,
    };
    return { key, info, tools, resources, prompts };
  }
}

/** The discovery view of one manifest: JSDoc from summary/description/examples, params from its JSON Schema. */
function callableInfo(tool: string, name: string, m: Record<string, unknown>, listed: Record<string, unknown>): CallableInfo {
  const lines = [schemaText(m["summary"]) || schemaText(listed["summary"])];
  const description = schemaText(m["description"], 2_000);
  if (description && description !== lines[0]) lines.push("", description);
  if (Array.isArray(m["examples"]) && m["examples"].length) {
    lines.push("", "@example");
    for (const ex of m["examples"].slice(0, 3)) lines.push(`tools.${tool}.${name}(${cut(JSON.stringify(ex), 300)})`);
  }
  if (m["streaming"] === true) lines.push("", "(streams progress events)");
  return { name, description: lines.join("\n").trim(), params: paramsFromInputSchema(m["schema"]), returns: "unknown" };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
