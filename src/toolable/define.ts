/**
 * Writing a toolable tool in TypeScript: `defineTool` (input as a zod object schema), resources,
 * prompts, and the envelope rules of the reference (a returned object without `status` is wrapped
 * as success, one with `status` passes through, any other value `v` becomes `{"result": v}`;
 * `partialResult` derives success/partial/error from the counts).
 */
import { z } from "zod";
import type { ToolError } from "./errors.js";

export interface SampleOptions {
  maxTokens?: number;
  system?: string;
  temperature?: number;
  stopSequences?: string[];
}

export interface SessionIO {
  /** Write one event line (any object with a `type`). */
  emit(event: Record<string, unknown>): void;
  /** The next message the caller sent; `{ action: "quit" }` when its stdin ended. */
  next(): Promise<Record<string, unknown>>;
}

export interface ToolContext {
  /** A progress event (`--stream`: a stdout line; otherwise a notification on stderr). */
  progress(message: string, percent?: number): void;
  log(message: string, level?: "debug" | "info" | "warning" | "error"): void;
  artifact(name: string, uri: string): void;
  /** Ask the caller's LLM (needs `--sample-via`); throws when the caller gives no answer. */
  sample(prompt: string, options?: SampleOptions): Promise<string>;
  /** The reserved `verbose` field (false when the input has none). */
  verbose: boolean;
  /** Aborted at the reserved `timeout`. */
  signal: AbortSignal;
  /** Session tools only (`session: true`). */
  session: SessionIO | null;
}

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  summary: string;
  description?: string;
  input: S;
  examples?: Array<Record<string, unknown>>;
  tags?: string[];
  streaming?: boolean;
  session?: boolean;
  /** Checks that need I/O, after schema validation; throw a ToolError to refuse. */
  preValidate?: (input: z.output<S>) => void | Promise<void>;
  run(input: z.output<S>, ctx: ToolContext): unknown;
}

export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition<S> {
  if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(def.name)) throw new TypeError(`defineTool: name must be letters, digits, _ or - (not starting with - or a digit); got ${JSON.stringify(def.name)}`);
  return def;
}

export interface ResourceDefinition {
  /** e.g. `notes://{id}`: each `{name}` matches `[^/]+`, and the whole URI must match. */
  uriPattern: string;
  summary: string;
  mimeTypes?: string[];
  tags?: string[];
  read(params: Record<string, string>): unknown;
}

export interface PromptDefinition {
  name: string;
  summary: string;
  /** argument name → description */
  arguments?: Record<string, string>;
  tags?: string[];
  render(args: Record<string, unknown>): unknown;
}

export const defineResource = (def: ResourceDefinition): ResourceDefinition => def;
export const definePrompt = (def: PromptDefinition): PromptDefinition => def;

export interface PartialItem {
  ok: boolean;
  error?: ToolError;
}

/**
 * The envelope of a batch: `result` with counts derived from `errors` and `total` — no failures is
 * success, no successes is error (the first error's), otherwise partial.
 */
export function partialResult(result: Record<string, unknown>, options: { total: number; errors: ToolError[] }): Record<string, unknown> {
  const failed = options.errors.length;
  const succeeded = options.total - failed;
  if (failed === 0) return { status: "success", result };
  if (succeeded <= 0) return { status: "error", error: options.errors[0]!.toJSON() };
  return {
    status: "partial",
    result,
    summary: { total: options.total, succeeded, failed, recoverable_failures: options.errors.filter((e) => e.recoverable).length },
    errors: options.errors.map((e) => e.toJSON()),
  };
}

/** The manifest `schema`: the zod schema's JSON Schema, with extra keys forbidden (as the reference's input models). */
export function inputJsonSchema(schema: z.ZodObject): Record<string, unknown> {
  const raw = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete raw["$schema"];
  const clean = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(clean);
    if (typeof v !== "object" || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // zod bounds integers by the safe range; Python's models say nothing there.
      if ((k === "minimum" && x === Number.MIN_SAFE_INTEGER) || (k === "maximum" && x === Number.MAX_SAFE_INTEGER)) continue;
      out[k] = clean(x);
    }
    return out;
  };
  const out = clean(raw) as Record<string, unknown>;
  out["additionalProperties"] = false;
  if (!("required" in out)) out["required"] = [];
  return out;
}
