/**
 * `runCli`: the whole argv table of the toolable wire format (v0.1) for tools written with
 * `defineTool`, printing what the reference Python implementation prints, byte for byte (pyDumps):
 *
 *   (none) | --help            human help          --discover         name, version, tools, resources, prompts (indent 2)
 *   --tools/--resources/--prompts  listings          <tool> --manifest  the tool's manifest (indent 2)
 *   <tool> '<json>' | --flags  the envelope        <tool> --validate  {"valid": ...}
 *   <tool> --stream            event lines, then {"type": "result", ...envelope}
 *   <tool> --session           session events, reading one JSON object per stdin line
 *   --sample-via stdin|URL     ctx.sample() asks the caller     --resource URI / --prompt NAME '<json>'
 *
 * The process exits 0 in every case; success or failure is in what it prints.
 */
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { createInterface, type Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { z } from "zod";
import { inputJsonSchema, type PromptDefinition, type ResourceDefinition, type SessionIO, type ToolContext, type ToolDefinition } from "./define.js";
import { ToolError } from "./errors.js";
import { pyDumps } from "./json.js";

export interface CliOptions {
  name: string;
  version: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input schema
  tools: Array<ToolDefinition<any>>;
  resources?: ResourceDefinition[];
  prompts?: PromptDefinition[];
  /** Default: process.argv.slice(2), process.stdout/stderr/stdin. */
  argv?: string[];
  stdout?: Writable;
  stderr?: Writable;
  stdin?: Readable;
}

const CONTROL_FLAGS = new Set(["--stream", "--session", "--validate", "--manifest", "--help"]);

type Envelope = Record<string, unknown>;

function errorEnvelope(e: ToolError): Envelope {
  return { status: "error", error: e.toJSON() };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
}

/** `--foo-bar v` → foo_bar: v (JSON when it parses, else the string); a flag without a value → true. */
export function inputFromFlags(words: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith("--")) continue;
    const key = w.slice(2).replace(/-/g, "_");
    const next = words[i + 1];
    if (next === undefined || next.startsWith("--")) {
      out[key] = true;
      continue;
    }
    try {
      out[key] = JSON.parse(next) as unknown;
    } catch {
      out[key] = next;
    }
    i++;
  }
  return out;
}

function issues(error: z.ZodError): string[] {
  return error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message));
}

/** Lines of stdin, read only when a session or a sampling request needs them. */
class StdinLines {
  private rl: Interface | null = null;
  private readonly lines: string[] = [];
  private waiters: Array<(line: string | null) => void> = [];
  private ended = false;
  constructor(private readonly input: Readable) {}
  next(): Promise<string | null> {
    if (!this.rl) {
      this.rl = createInterface({ input: this.input, crlfDelay: Infinity });
      this.rl.on("line", (l) => {
        const w = this.waiters.shift();
        if (w) w(l);
        else this.lines.push(l);
      });
      this.rl.on("close", () => {
        this.ended = true;
        for (const w of this.waiters.splice(0)) w(null);
      });
    }
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  close(): void {
    this.rl?.close();
    if (this.input === process.stdin) process.stdin.pause();
  }
}

export async function runCli(options: CliOptions): Promise<void> {
  const argv = options.argv ?? process.argv.slice(2);
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const stdin = new StdinLines(options.stdin ?? process.stdin);
  const print = (v: unknown, pretty = false) => stdout.write(`${pyDumps(v, pretty ? 2 : undefined)}\n`);
  const tools = new Map(options.tools.map((t) => [t.name, t]));
  const resources = options.resources ?? [];
  const prompts = options.prompts ?? [];
  try {
    const first = argv[0];
    if (first === undefined || (argv.length === 1 && first === "--help")) return void stdout.write(helpText(options));
    if (first === "--discover") {
      return void print(
        {
          name: options.name,
          version: options.version,
          tools: options.tools.map((t) => ({ name: t.name, summary: t.summary, streaming: t.streaming === true, session_mode: t.session === true })),
          resources: resources.map(resourceListing),
          prompts: prompts.map(promptListing),
        },
        true,
      );
    }
    if (first === "--tools") return void print({ tools: options.tools.map((t) => ({ name: t.name, summary: t.summary })) });
    if (first === "--resources") return void print({ resources: resources.map(resourceListing) });
    if (first === "--prompts") return void print({ prompts: prompts.map(promptListing) });
    if (first === "--resource") return void print(await readResource(resources, argv[1] ?? ""));
    if (first === "--prompt") return void print(await renderPrompt(prompts, argv[1] ?? "", argv[2]));

    let tool = tools.get(first);
    let rest = argv.slice(1);
    if (!tool && options.tools.length === 1 && (first.startsWith("{") || first.startsWith("--"))) {
      tool = options.tools[0]!;
      rest = argv;
    }
    if (!tool) {
      return void print(errorEnvelope(new ToolError("NOT_FOUND", `Unknown tool: ${first}`, { suggestion: `Available tools: ${[...tools.keys()].join(", ")}` })));
    }
    if (rest.includes("--manifest")) return void print(manifest(tool), true);
    if (rest.includes("--help")) return void stdout.write(toolHelp(tool));
    await callTool(tool, rest, { print, stderr, stdin });
  } finally {
    stdin.close();
  }
}

function resourceListing(r: ResourceDefinition) {
  return { uri_pattern: r.uriPattern, summary: r.summary, mime_types: r.mimeTypes ?? [], tags: r.tags ?? [] };
}

function promptListing(p: PromptDefinition) {
  return { name: p.name, summary: p.summary, arguments: p.arguments ?? {}, tags: p.tags ?? [] };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function manifest(t: ToolDefinition<any>): Record<string, unknown> {
  return {
    name: t.name,
    summary: t.summary,
    description: t.description ?? "",
    streaming: t.streaming === true,
    session_mode: t.session === true,
    schema: inputJsonSchema(t.input),
    ...(t.examples ? { examples: t.examples } : {}),
    ...(t.tags ? { tags: t.tags } : {}),
  };
}

function patternRe(pattern: string): RegExp {
  const names: string[] = [];
  const body = pattern
    .split(/(\{[A-Za-z_][A-Za-z0-9_]*\})/)
    .map((part) => {
      const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(part);
      if (m) {
        names.push(m[1]!);
        return `(?<${m[1]!}>[^/]+)`;
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${body}$`);
}

async function readResource(resources: ResourceDefinition[], uri: string): Promise<unknown> {
  for (const r of resources) {
    const m = patternRe(r.uriPattern).exec(uri);
    if (!m) continue;
    try {
      return await r.read({ ...m.groups });
    } catch (e) {
      return errorEnvelope(asToolError(e));
    }
  }
  return errorEnvelope(new ToolError("NOT_FOUND", `Resource not found: ${uri}`));
}

async function renderPrompt(prompts: PromptDefinition[], name: string, argsText: string | undefined): Promise<unknown> {
  const p = prompts.find((x) => x.name === name);
  if (!p) return errorEnvelope(new ToolError("NOT_FOUND", `Prompt not found: ${name}`));
  let args: unknown = {};
  try {
    args = argsText === undefined ? {} : JSON.parse(argsText);
  } catch (e) {
    return errorEnvelope(new ToolError("INVALID_INPUT", `Invalid JSON arguments: ${(e as Error).message}`));
  }
  if (!isPlainObject(args)) return errorEnvelope(new ToolError("INVALID_INPUT", "Prompt arguments must be a JSON object"));
  try {
    return await p.render(args);
  } catch (e) {
    return errorEnvelope(asToolError(e));
  }
}

function asToolError(e: unknown): ToolError {
  return e instanceof ToolError ? e : new ToolError("INTERNAL", e instanceof Error ? e.message : String(e));
}

/** What a tool returned, as an envelope (the reference's wrapping rules). */
export function toEnvelope(value: unknown): Envelope {
  if (isPlainObject(value)) return "status" in value ? value : { status: "success", result: value };
  return { status: "success", result: { result: value === undefined ? null : value } };
}

interface Io {
  print: (v: unknown, pretty?: boolean) => void;
  stderr: Writable;
  stdin: StdinLines;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function callTool(tool: ToolDefinition<any>, words: string[], io: Io): Promise<void> {
  const stream = words.includes("--stream");
  const session = words.includes("--session");
  let sampleVia: string | null = null;
  const rest: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === "--sample-via") sampleVia = words[++i] ?? null;
    else if (!CONTROL_FLAGS.has(words[i]!)) rest.push(words[i]!);
  }
  const finish = (env: Envelope) => io.print(stream ? { type: "result", ...env } : env);
  const raw = rest.find((w) => w.startsWith("{"));
  let input: unknown;
  try {
    input = raw !== undefined ? JSON.parse(raw) : inputFromFlags(rest);
  } catch (e) {
    return finish(errorEnvelope(new ToolError("INVALID_INPUT", `Invalid JSON input: ${(e as Error).message}`)));
  }
  const parsed = tool.input.strict().safeParse(input);
  if (words.includes("--validate")) return io.print(parsed.success ? { valid: true } : { valid: false, errors: issues(parsed.error) });
  if (!parsed.success) return finish(errorEnvelope(new ToolError("INVALID_INPUT", `Invalid input: ${issues(parsed.error).join("; ")}`)));
  if (tool.streaming && !stream) return finish(errorEnvelope(new ToolError("INVALID_INPUT", `${tool.name} is a streaming tool`, { suggestion: "Add --stream to the command" })));
  if (tool.session && !session) return finish(errorEnvelope(new ToolError("INVALID_INPUT", `${tool.name} is a session tool`, { suggestion: "Add --session to the command" })));
  const data = parsed.data as Record<string, unknown>;
  const shape = tool.input.shape as Record<string, unknown>;

  // Reserved fields, when the input declares them.
  if ("working_dir" in shape && typeof data["working_dir"] === "string") {
    const dir = data["working_dir"];
    let ok = false;
    try {
      ok = statSync(dir).isDirectory();
    } catch {
      ok = false;
    }
    if (!ok) return finish(errorEnvelope(new ToolError("INVALID_PATH", `working_dir does not exist: ${dir}`)));
    process.chdir(dir);
  }
  let timeoutS: number | null = null;
  if ("timeout" in shape && data["timeout"] !== undefined && data["timeout"] !== null) {
    const t = data["timeout"];
    if (typeof t !== "number" || !(t >= 1 && t <= 600)) return finish(errorEnvelope(new ToolError("INVALID_INPUT", "timeout must be between 1 and 600 seconds")));
    timeoutS = t;
  }
  if ("dry_run" in shape && data["dry_run"] === true) return finish({ status: "success", result: { dry_run: true, would_execute: data } });

  const controller = new AbortController();
  const event = (body: Record<string, unknown>) => {
    if (stream || session) io.print(body);
    else {
      const { type, ...fields } = body;
      io.stderr.write(`${pyDumps({ type: "notification", kind: type, ...fields })}\n`);
    }
  };
  const sessionIO: SessionIO | null = session
    ? {
        emit: (e) => io.print(e),
        next: async () => {
          for (;;) {
            const line = await io.stdin.next();
            if (line === null) return { action: "quit" };
            try {
              const v: unknown = JSON.parse(line);
              if (isPlainObject(v)) return v;
            } catch {
              /* not JSON: skipped */
            }
          }
        },
      }
    : null;
  const ctx: ToolContext = {
    progress: (message, percent) => event({ type: "progress", message, ...(percent !== undefined ? { percent } : {}) }),
    log: (message, level = "info") => event({ type: "log", level, message }),
    artifact: (name, uri) => event({ type: "artifact", name, uri }),
    sample: (prompt, o = {}) => sample(sampleVia, io, { prompt, max_tokens: o.maxTokens ?? 1000, ...(o.system !== undefined ? { system: o.system } : {}), ...(o.temperature !== undefined ? { temperature: o.temperature } : {}), ...(o.stopSequences !== undefined ? { stop_sequences: o.stopSequences } : {}) }),
    verbose: data["verbose"] === true,
    signal: controller.signal,
    session: sessionIO,
  };

  let envelope: Envelope;
  let timer: NodeJS.Timeout | undefined;
  try {
    await tool.preValidate?.(data);
    if (session) io.print({ type: "session_start", message: tool.summary, prompt: "> " });
    const running = Promise.resolve(tool.run(data, ctx));
    const value = timeoutS === null
      ? await running
      : await Promise.race([
          running,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              controller.abort();
              reject(new ToolError("TIMEOUT", `Timed out after ${timeoutS} seconds`));
            }, timeoutS! * 1000);
          }),
        ]);
    envelope = session ? { status: "success" } : toEnvelope(value);
    if (session) io.print({ type: "session_end", status: "completed" });
  } catch (e) {
    envelope = errorEnvelope(asToolError(e));
  } finally {
    clearTimeout(timer);
  }
  finish(envelope);
  // A timed-out run may still hold timers: the answer is out, so end the process.
  if (controller.signal.aborted) setImmediate(() => process.exit(0));
}

async function sample(via: string | null, io: Io, body: Record<string, unknown>): Promise<string> {
  if (via === null) throw new ToolError("DEPENDENCY", "Sampling is not available: the caller gave no --sample-via");
  const request = { type: "sample_request", id: randomBytes(4).toString("hex"), ...body };
  if (via === "stdin") {
    io.print(request);
    for (;;) {
      const line = await io.stdin.next();
      if (line === null) throw new ToolError("DEPENDENCY", "stdin closed while waiting for a sample response");
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        continue;
      }
      if (isPlainObject(v) && v["type"] === "sample_response" && v["id"] === request.id) {
        if (typeof v["content"] !== "string") throw new ToolError("DEPENDENCY", `the caller answered no content${typeof v["error"] === "string" ? `: ${v["error"]}` : ""}`);
        return v["content"];
      }
    }
  }
  const res = await fetch(via, { method: "POST", headers: { "content-type": "application/json" }, body: pyDumps(request) });
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof answer["content"] !== "string") throw new ToolError("DEPENDENCY", `sampling over HTTP failed (HTTP ${res.status})${typeof answer["error"] === "string" ? `: ${answer["error"]}` : ""}`);
  return answer["content"];
}

function helpText(o: CliOptions): string {
  const lines = [`${o.name} ${o.version} — a toolable executable`, "", "Tools:"];
  for (const t of o.tools) lines.push(`  ${t.name.padEnd(20)} ${t.summary}${t.streaming ? " (--stream)" : ""}${t.session ? " (--session)" : ""}`);
  lines.push(
    "",
    "Usage:",
    `  ${o.name} --discover                 everything, as JSON`,
    `  ${o.name} <tool> --manifest          the tool's manifest and input schema`,
    `  ${o.name} <tool> '{"key": "value"}'  call it (or --key value flags)`,
    `  ${o.name} <tool> --validate '<json>' check input only`,
    `  ${o.name} --resource <uri> | --prompt <name> '<json>'`,
    "",
  );
  return lines.join("\n");
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function toolHelp(t: ToolDefinition<any>): string {
  const schema = inputJsonSchema(t.input);
  const props = (schema["properties"] ?? {}) as Record<string, { type?: string; description?: string }>;
  const lines = [`${t.name}: ${t.summary}`, ...(t.description ? ["", t.description] : []), "", "Input:"];
  for (const [k, p] of Object.entries(props)) lines.push(`  --${k.replace(/_/g, "-").padEnd(18)} ${p.type ?? ""}${p.description ? `  ${p.description}` : ""}`);
  return `${lines.join("\n")}\n`;
}
