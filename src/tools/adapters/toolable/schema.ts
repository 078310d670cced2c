/**
 * The YAML of a `type: toolable` tool:
 *
 *   type: toolable
 *   name: notes                 # tools.notes.<tool>(input)
 *   command: ./bin/notes        # one executable (string, or [exe, ...words]); relative to the YAML's folder when it has a '/'
 *   args: [--profile, dev]      # words put after the command, before the tool name
 *   dir: ./bin                  # OR: a folder; every executable file in it is discovered (.py runs with python3)
 *   env: { API_KEY: abc }       # merged over a minimal safe environment (PATH, HOME, ...)
 *   cwd: ./work                 # working directory of every run (default: the YAML's folder)
 *   timeout: 60                 # seconds per call (default 60)
 *   discover_timeout: 5         # seconds for --discover / --manifest (default 5, as the reference registry)
 *   runs_on: host               # run on the host even in a container session (default: where the code runs)
 *   description: ...            # default: from the executable's --discover
 *   tags: [notes]
 */
import path from "node:path";
import { z } from "zod";
import { lazy } from "../../../lazy.js";
import { Problems, fail, isMapping } from "../yaml-schema.js";

export const DEFAULT_TOOLABLE_TIMEOUT_SECONDS = 60;
export const DEFAULT_DISCOVER_TIMEOUT_SECONDS = 5;

export interface ToolableSpec {
  name: string;
  description: string;
  tags: string[];
  /** One executable: its argv prefix (command words, then args). Null in the folder form. */
  command: string[] | null;
  /** The folder form: absolute path of the folder of executables. */
  dir: string | null;
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  discoverTimeoutMs: number;
  /**
   * `session` (default): calls run where the session's code runs — inside a container session's
   * container, with the executable's files mounted read-only at the same paths. `host`: on the
   * host, always (the tool sees the host's files; its description says so).
   */
  runsOn: "session" | "host";
}

const seconds = lazy(() => z.number().positive("expected a positive number of seconds").max(86_400, "expected at most 86400 seconds (one day)"));
const word = lazy(() => z.string().min(1, "expected a non-empty string").refine((s) => !s.includes("\0"), "must not contain a NUL byte"));

const shape = lazy(() => ({
  type: z.literal("toolable"),
  name: z.string(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
  command: z.union([word, z.array(word).min(1, "expected at least the executable")]).optional(),
  args: z.array(word).optional(),
  dir: word.optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names are letters, digits and _"), z.union([z.string(), z.number(), z.boolean()]).transform(String)).optional(),
  cwd: word.optional(),
  timeout: seconds.optional(),
  discover_timeout: seconds.optional(),
  runs_on: z.enum(["session", "host"], { error: 'expected "session" (where the code runs: inside a container session\'s container) or "host"' }).optional(),
}));

/** A command word with a '/' is a path relative to the YAML's folder; a bare name is looked up on PATH. */
function resolveWord(w: string, dir: string): string {
  return w.includes("/") ? path.resolve(dir, w) : w;
}

export function parseToolableTool(doc: unknown, source: { file: string; dir: string }): ToolableSpec {
  if (!isMapping(doc)) fail(source.file, ["expected a mapping at the top level"]);
  const problems = new Problems(doc);
  const { data, ok } = problems.fields(shape, doc, []);
  if (ok && data.command === undefined && data.dir === undefined) problems.add("command: expected a command (the executable) or dir (a folder of executables)");
  if (ok && data.command !== undefined && data.dir !== undefined) problems.add("command and dir: give one of them, not both");
  if (ok && data.dir !== undefined && data.args !== undefined) problems.add("args: only with command (each executable of dir is run as it is)");
  problems.throwIfAny(source.file);
  const d = data as { [K in keyof typeof shape]: z.output<(typeof shape)[K]> | undefined };
  const command = d.command === undefined ? null : [...(typeof d.command === "string" ? [d.command] : d.command), ...(d.args ?? [])];
  if (command) command[0] = resolveWord(command[0]!, source.dir);
  return {
    name: d.name!,
    description: d.description ?? "",
    tags: d.tags ?? [],
    command,
    dir: d.dir === undefined ? null : path.resolve(source.dir, d.dir),
    env: d.env ?? {},
    cwd: d.cwd === undefined ? source.dir : path.resolve(source.dir, d.cwd),
    timeoutMs: Math.round((d.timeout ?? DEFAULT_TOOLABLE_TIMEOUT_SECONDS) * 1000),
    discoverTimeoutMs: Math.round((d.discover_timeout ?? DEFAULT_DISCOVER_TIMEOUT_SECONDS) * 1000),
    runsOn: d.runs_on ?? "session",
  };
}
