/**
 * Options every executor shares, validated once at the boundary. Executors extend the shared shape
 * with their own (memory limits, permissions, ...) and validate through the same function, so an
 * unknown or mistyped option fails the same clear way everywhere.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { hasOnly, isArrayOf, isBool, isFn, isIntIn, isNonEmptyString, isPlain, quickParse, type Check } from "../values/quick-checks.js";
import { ValidationError } from "../errors.js";
import type { DepsConfig } from "../deps/index.js";
import { searchOptionsSchema, type SearchOptions } from "../search/config.js";
import type { ToolMiddleware } from "../tools/middleware/types.js";
import type { ToolableHostOptions } from "../tools/adapters/toolable/host.js";
import type { AgentsHost } from "./host.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
/** Upper bound on a run's timeout: one day. Anything larger is almost certainly a unit mistake. */
export const MAX_TIMEOUT_MS = 86_400_000;

export interface ExecutorOptions {
  /** Folder of tool YAML files (`tools.*`). Missing folder means no tools. */
  toolsPath?: string;
  /** Timeout of a `run()` that gives none; default 30 s. */
  defaultTimeoutMs?: number;
  /** Tool middleware applied on the host to every tool call (audit, policy, approval, retry, limits). */
  middleware?: ToolMiddleware[];
  /** How tools.search / workflows.search rank: { embedder: "use-lite" (default) | "lexical" | { url, model, apiKey? } | Embedder }. */
  search?: SearchOptions;
  /**
   * Bytes the session's namespace calls may hold in the host at once, arguments and replies
   * together; past it a call fails at once with a ValidationError (default 256 MiB).
   */
  maxInFlightBytes?: number;
  /** `type: toolable` tools: `sampler` answers their sampling requests, `onEvent` gets their progress/log/artifact events. */
  toolable?: ToolableHostOptions;
  /** Read-only folders of Agent Skills (e.g. `discoverSkillRoots()`), merged after the storage's skills; a later one wins a name clash. */
  skillRoots?: string[];
  /** The agents the code may call as `agents.<name>(...)` (an agent runtime serves them); without it agents.* is refused. */
  agents?: AgentsHost;
}

export const timeoutSchema = lazy(() => z
  .number({ error: "must be a number of milliseconds" })
  .int("must be a whole number of milliseconds")
  .min(1, "must be at least 1 ms")
  .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} ms (one day)`));

export const baseOptionsShape = lazy(() => ({
  toolsPath: z.string({ error: "must be a folder path" }).min(1, "must not be empty").optional(),
  defaultTimeoutMs: timeoutSchema.optional(),
  middleware: z
    .array(z.custom<ToolMiddleware>((v) => typeof v === "function", "each middleware must be a function (ctx, next) => result"), {
      error: "must be an array of middleware functions",
    })
    .optional(),
  search: searchOptionsSchema.optional(),
  toolable: z
    .strictObject(
      {
        sampler: z.custom<NonNullable<ToolableHostOptions["sampler"]>>((v) => typeof v === "function", "must be a function (request) => Promise<string>").optional(),
        onEvent: z.custom<NonNullable<ToolableHostOptions["onEvent"]>>((v) => typeof v === "function", "must be a function (event) => void").optional(),
        sampleVia: z.enum(["stdin", "http"]).optional(),
      },
      { error: "must be { sampler?, onEvent?, sampleVia? }" },
    )
    .optional(),
  skillRoots: z.array(z.string().min(1), { error: "must be an array of folder paths" }).optional(),
  agents: z.custom<AgentsHost>((v) => isAgentsHost(v), "must be { list(), call(name, args, ctx) }").optional(),
  maxInFlightBytes: z.number({ error: "must be a number of bytes" }).int("must be a whole number of bytes").min(1_024, "must be at least 1024 bytes").max(Number.MAX_SAFE_INTEGER).optional(),
}));

/** The HostServices part of parsed options (what every executor passes on as it is). */
export function hostLimitsOf(options: {
  maxInFlightBytes?: number | undefined;
  toolable?: ToolableHostOptions | undefined;
  skillRoots?: string[] | undefined;
  agents?: AgentsHost | undefined;
}): { maxInFlightBytes?: number; toolable?: ToolableHostOptions; skillRoots?: string[]; agents?: AgentsHost } {
  return {
    ...(options.agents !== undefined ? { agents: options.agents } : {}),
    ...(options.maxInFlightBytes !== undefined ? { maxInFlightBytes: options.maxInFlightBytes } : {}),
    ...(options.toolable !== undefined ? { toolable: options.toolable } : {}),
    ...(options.skillRoots !== undefined ? { skillRoots: options.skillRoots } : {}),
  };
}

export const depsOptionsShape = lazy(() => ({
  deps: z.array(z.string({ error: "each dep must be a package spec string" }), { error: "must be an array of package specs" }).optional(),
  depsFile: z.string().min(1).optional(),
  depsDir: z.string().min(1).optional(),
  allowRuntimeDeps: z.boolean().optional(),
  allowInstallScripts: z.boolean().optional(),
  allowLocalPaths: z.boolean().optional(),
  onDepsOutput: z.custom<(line: string) => void>((v) => typeof v === "function", "must be a function (line: string) => void").optional(),
}));

/** Hand-written twins of baseOptionsShape (all but `search`) and depsOptionsShape (see src/values/quick-checks.ts). */
export const FAST_BASE_CHECKS: Readonly<Record<string, Check>> = {
  toolsPath: isNonEmptyString,
  defaultTimeoutMs: isIntIn(1, MAX_TIMEOUT_MS),
  middleware: isArrayOf(isFn),
  toolable: (v) => isPlain(v) && hasOnly(v, { sampler: isFn, onEvent: isFn, sampleVia: (x) => x === "stdin" || x === "http" }),
  skillRoots: isArrayOf(isNonEmptyString),
  agents: isAgentsHost,
  maxInFlightBytes: isIntIn(1_024, Number.MAX_SAFE_INTEGER),
};

function isAgentsHost(v: unknown): boolean {
  return typeof v === "object" && v !== null && typeof (v as AgentsHost).list === "function" && typeof (v as AgentsHost).call === "function";
}
export const FAST_DEPS_CHECKS: Readonly<Record<string, Check>> = {
  deps: isArrayOf((v) => typeof v === "string"),
  depsFile: isNonEmptyString,
  depsDir: isNonEmptyString,
  allowRuntimeDeps: isBool,
  allowInstallScripts: isBool,
  allowLocalPaths: isBool,
  onDepsOutput: isFn,
};

/**
 * Validates `options` against `shape`; unknown keys are reported (a typo must not be silently ignored).
 * `fast`: hand-written checks for keys of `shape` (FAST_BASE_CHECKS, ...) tried first, see above.
 */
export function parseOptions<S extends z.ZodRawShape>(shape: S, options: unknown, executor: string, fast?: Readonly<Record<string, Check>>): z.infer<z.ZodObject<S>> {
  const quick = fast && quickParse(options, fast);
  if (quick) return quick as z.infer<z.ZodObject<S>>;
  const parsed = z.strictObject(shape).safeParse(options ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
    throw new ValidationError(`Invalid ${executor} options: ${problems}. Accepted: ${Object.keys(shape).join(", ")}.`);
  }
  return parsed.data;
}

const executorOptionsShape = lazy(() => ({ ...baseOptionsShape, ...depsOptionsShape }));
/** FAST_BASE_CHECKS and FAST_DEPS_CHECKS: an executor whose shape has both passes this to parseOptions. */
export const FAST_EXECUTOR_CHECKS: Readonly<Record<string, Check>> = { ...FAST_BASE_CHECKS, ...FAST_DEPS_CHECKS };

/** The shared options (and deps options) with defaults applied. */
export function parseExecutorOptions(options: unknown, executor: string): ExecutorOptions & DepsConfig & { defaultTimeoutMs: number } {
  const data = parseOptions(executorOptionsShape, options, executor, FAST_EXECUTOR_CHECKS);
  const out: ExecutorOptions & DepsConfig & { defaultTimeoutMs: number } = { defaultTimeoutMs: data.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS };
  for (const [k, v] of Object.entries(data)) if (v !== undefined && k !== "defaultTimeoutMs") (out as unknown as Record<string, unknown>)[k] = v;
  return out;
}

/** The deps part of parsed options. */
export function depsConfigOf(options: DepsConfig): DepsConfig {
  const out: DepsConfig = {};
  for (const k of Object.keys(FAST_DEPS_CHECKS) as Array<keyof DepsConfig>) if (options[k] !== undefined) (out as Record<string, unknown>)[k] = options[k];
  return out;
}
