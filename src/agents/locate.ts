/**
 * Line numbers for errors in agent files and project.json. Both are read through the `yaml`
 * parser (JSON is YAML), so a zod issue's path can be mapped back to the line of the value (or of
 * the unknown key) that caused it.
 */
import { createRequire } from "node:module";
import type * as Yaml from "yaml";
import type { Document } from "yaml";

/** Loaded on first use (synchronous callers; yaml ships CommonJS): importing ts-code-mode must not pay for it. */
let yamlModule: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)("yaml") as typeof Yaml);
import type { z } from "zod";
import { ValidationError } from "../errors.js";

/** A mistake in a project file: `file:line: message`. `name` stays ValidationError's for callers that branch on it. */
export class AgentFileError extends ValidationError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly problem: string,
  ) {
    super(`${file}:${line}: ${problem}`);
  }
}

export interface Located {
  doc: Document;
  /** 1-based line of a node's start, `firstLine` added (for frontmatter inside a Markdown file). */
  lineOf(path: ReadonlyArray<PropertyKey>, key?: string): number;
}

export function locate(text: string, firstLine = 1): Located {
  const { isMap, LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const lineAt = (offset: number) => lineCounter.linePos(offset).line + firstLine - 1;
  return {
    doc,
    lineOf(path, key) {
      // The deepest node on the path that exists: a missing key is reported where its parent is.
      for (let n = path.length; n >= 0; n--) {
        const node = doc.getIn(path.slice(0, n) as unknown[], true) as { range?: [number, number, number] } | undefined;
        if (n === path.length && key !== undefined && isMap(node)) {
          const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
          const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
          if (range) return lineAt(range[0]);
        }
        if (node?.range) return lineAt(node.range[0]);
      }
      return firstLine;
    },
  };
}

/** The first zod issue as an AgentFileError at the line it points to. */
export function zodFileError(file: string, where: Located, error: z.ZodError): AgentFileError {
  return issueErrors(file, where, error.issues[0]!)[0]!;
}

/** Every zod issue, each at its line. */
export function zodFileErrors(file: string, where: Located, error: z.ZodError): AgentFileError[] {
  return error.issues.flatMap((issue) => issueErrors(file, where, issue));
}

function issueErrors(file: string, where: Located, issue: z.core.$ZodIssue): AgentFileError[] {
  const path = issue.path as PropertyKey[];
  const at = path.length ? `${path.join(".")}: ` : "";
  // One problem per unknown key, each on its own line.
  if (issue.code === "unrecognized_keys") return issue.keys.map((key) => new AgentFileError(file, where.lineOf(path, key), `${at}unknown key ${JSON.stringify(key)}`));
  return [new AgentFileError(file, where.lineOf(path), `${at}${issue.message}`)];
}
