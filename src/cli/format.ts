/** Compact human output: aligned columns, one-line descriptions, parameter lists. */
import type { WorkflowParam } from "../storage/protocol.js";

/** Longest description kept in a table row; `describe`/`show` print the full text. */
const MAX_CELL = 100;

/** Collapses whitespace (JSDoc descriptions span lines) and cuts long text with an ellipsis. */
export function oneLine(text: string, max = MAX_CELL): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Columns separated by two spaces; the last column is not padded, so long text just runs on. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, col) => Math.max(...all.map((r) => (r[col] ?? "").length)));
  return all
    .map((r) =>
      r
        .map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `host: string`, `ports?: string = "1-1024"`. */
export function formatParam(p: WorkflowParam): string {
  const def = p.default !== undefined ? ` = ${JSON.stringify(p.default)}` : p.defaultExpression !== undefined ? ` = ${p.defaultExpression} (computed)` : "";
  return `${p.name}${p.required ? "" : "?"}: ${p.type}${def}`;
}

export function formatParams(params: readonly WorkflowParam[]): string {
  return params.length ? params.map(formatParam).join(", ") : "-";
}

export function formatScore(score: number): string {
  return score.toFixed(2);
}
