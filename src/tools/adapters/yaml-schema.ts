/**
 * zod helpers shared by every tool YAML schema (cli, http, mcp), so a tool author gets the same
 * wording from each: unknown keys list what is accepted, `key:` with nothing after it counts as
 * empty, and each problem names its field path and what was found there.
 */
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import { describeValue } from "../validate.js";

export type PathPart = PropertyKey;

/** A strict object whose unknown-key error lists the accepted keys. */
export function strict<T extends z.ZodRawShape>(shape: T) {
  const accepted = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? `unknown key${iss.keys.length > 1 ? "s" : ""} ${iss.keys.map((k) => `'${k}'`).join(", ")}; accepted: ${accepted}`
        : undefined,
  });
}

/** YAML `key:` with nothing after it is null; treat it as the empty value. */
export function orEmpty<T extends z.ZodType>(schema: T, empty: () => unknown) {
  return z.preprocess((v) => (v === null || v === undefined ? empty() : v), schema);
}

/** `endpoints.get_user.params[0]`, or "(top level)". */
export function pathText(path: readonly PathPart[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out || "(top level)";
}

export function valueAt(root: unknown, path: readonly PathPart[]): unknown {
  let cur = root;
  for (const p of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<PathPart, unknown>)[p];
  }
  return cur;
}

/**
 * One readable line per zod issue: `<field path>: <what was expected>; got <what was there>`.
 * `isSecret(path)` hides the value found at a path (headers, env) behind its type.
 */
export function issueText(issue: z.core.$ZodIssue, raw: unknown, isSecret: (path: readonly PathPart[]) => boolean = () => false): string {
  const where = pathText(issue.path);
  if (issue.code === "invalid_type" || issue.code === "invalid_value" || issue.code === "invalid_union") {
    const got = valueAt(raw, issue.path);
    const base = issue.message
      .replace(/^Invalid input: /, "")
      .replace(/expected record\b/, "expected a mapping (key: value)")
      .replace(/expected array\b/, "expected a list");
    const gotText = got === undefined ? "nothing" : isSecret(issue.path) ? (Array.isArray(got) ? "a list" : typeof got) : describeValue(got);
    return `${where}: ${base.replace(/, received \w+$/, "")}; got ${gotText}`;
  }
  return `${where}: ${issue.message}`;
}

/** Every problem of one tool file at once, each on its own line, naming the file. */
export function fail(source: string, problems: string[]): never {
  throw new ValidationError(`Invalid tool definition in ${source}:\n  ${problems.join("\n  ")}`);
}
