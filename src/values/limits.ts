/**
 * The bounds on host work for guest values, in one place (docs/limits.md lists them).
 * Each is a budget for walk.ts: values visited (a shared object once per path to it), nesting
 * depth, and characters of text.
 */
import type { WalkLimits } from "./walk.js";

/** Per stream (stdout, stderr) per run, and the JSON of a run's value in `run --json`. */
export const MAX_OUTPUT_CHARS = 1_000_000;

/** A run's value as JSON in `run --json` (beyond it `value` is left out and `valueOmitted` says why). */
export const OUTPUT_JSON_LIMITS: WalkLimits = { maxNodes: 1_000_000, maxDepth: 1_000, maxBytes: MAX_OUTPUT_CHARS };

/** An artifact's JSON data and its metadata: beyond it artifacts.save fails with a ValidationError. */
export const ARTIFACT_JSON_LIMITS: WalkLimits = { maxNodes: 2_000_000, maxDepth: 1_000, maxBytes: 256 * 1_048_576 };

/**
 * A run's value as an out-of-process guest (subprocess, container) sends it to the host, measured in
 * the guest before it is sent: beyond it the value stays behind (its display still crosses). The
 * same 64 MB as the sandbox's boundary; a 1 GiB value would otherwise cost the host 2 GiB to receive.
 */
export const RUN_VALUE_LIMITS: WalkLimits = { maxNodes: 2_000_000, maxDepth: 1_000, maxBytes: 64 * 1_048_576 };

/** Arguments of one namespace call (tools.call, artifacts.save, ...), sized for the in-flight byte limit. */
export const CALL_ARGS_LIMITS: WalkLimits = { maxNodes: 2_000_000, maxDepth: 1_000, maxBytes: Number.POSITIVE_INFINITY };
