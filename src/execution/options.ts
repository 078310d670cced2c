/**
 * Options every executor shares, validated once at the boundary. Executors extend these with
 * their own (memory limits, images, ...) and validate those the same way.
 */
import { z } from "zod";
import { ValidationError } from "../errors.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
/** Upper bound on a run's timeout: one day. Anything larger is almost certainly a unit mistake. */
export const MAX_TIMEOUT_MS = 86_400_000;

export interface ExecutorOptions {
  /** Folder of tool YAML files (`tools.*`). Missing folder means no tools. */
  toolsPath?: string;
  /** Timeout of a `run()` that gives none; default 30 s. */
  defaultTimeoutMs?: number;
}

export const timeoutSchema = z
  .number({ error: "must be a number of milliseconds" })
  .int("must be a whole number of milliseconds")
  .min(1, "must be at least 1 ms")
  .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} ms (one day)`);

const baseSchema = z.object({
  toolsPath: z.string({ error: "must be a folder path" }).min(1, "must not be empty").optional(),
  defaultTimeoutMs: timeoutSchema.optional(),
});

/** Validates the shared options; unknown keys are reported (a typo must not be silently ignored). */
export function parseExecutorOptions(options: unknown, executor: string): Required<Pick<ExecutorOptions, "defaultTimeoutMs">> & ExecutorOptions {
  const parsed = baseSchema.strict().safeParse(options ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
    throw new ValidationError(`Invalid ${executor} options: ${problems}. Accepted: toolsPath, defaultTimeoutMs.`);
  }
  const out: ExecutorOptions & { defaultTimeoutMs: number } = { defaultTimeoutMs: parsed.data.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS };
  if (parsed.data.toolsPath !== undefined) out.toolsPath = parsed.data.toolsPath;
  return out;
}
