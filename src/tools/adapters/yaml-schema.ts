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

/** Most problems reported for one file; past this a file is more broken than a list helps with. */
export const MAX_PROBLEMS = 50;

/**
 * Problems of one file, collected across separate checks so that one bad field never hides the
 * others' problems (a tool author fixes the file in one pass).
 */
export class Problems {
  readonly list: string[] = [];

  constructor(
    readonly root: unknown,
    private readonly isSecret: (path: readonly PathPart[]) => boolean = () => false,
  ) {}

  add(problem: string): void {
    if (this.list.length < MAX_PROBLEMS) this.list.push(problem);
  }

  /** `value` (found at `at` in the file) parsed by `schema`, or undefined after recording its problems. */
  parse<T extends z.ZodType>(schema: T, value: unknown, at: readonly PathPart[]): z.output<T> | undefined {
    const r = schema.safeParse(value);
    if (r.success) return r.data;
    for (const issue of r.error.issues) this.add(issueText({ ...issue, path: [...at, ...issue.path] }, this.root, this.isSecret));
    return undefined;
  }

  /**
   * A mapping parsed field by field against `shape` (unknown keys reported as `strict` does).
   * Each field's value is undefined when it did not parse; `ok` says whether all did.
   */
  fields<T extends z.ZodRawShape>(shape: T, value: Record<string, unknown>, at: readonly PathPart[]): { data: { [K in keyof T]: z.output<T[K]> | undefined }; ok: boolean } {
    const accepted = Object.keys(shape);
    const unknown = Object.keys(value).filter((k) => !Object.hasOwn(shape, k));
    if (unknown.length) {
      this.add(`${pathText(at)}: unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `'${k}'`).join(", ")}; accepted: ${accepted.join(", ")}`);
    }
    let ok = unknown.length === 0;
    const data: Record<string, unknown> = {};
    for (const key of accepted) {
      const schema = shape[key] as z.ZodType;
      const r = schema.safeParse(value[key]);
      if (r.success) data[key] = r.data;
      else {
        ok = false;
        for (const issue of r.error.issues) this.add(issueText({ ...issue, path: [...at, key, ...issue.path] }, this.root, this.isSecret));
      }
    }
    return { data: data as { [K in keyof T]: z.output<T[K]> | undefined }, ok };
  }

  /** Throws ValidationError listing every problem, if there is any. */
  throwIfAny(source: string): void {
    if (this.list.length) fail(source, this.list);
  }
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
