/**
 * A real command-line tool with side effects for the durable-run tests: `journal` appends lines to
 * a file (every call is one more line, so repeated calls show), `journal.pay` needs approval and
 * declares a revert (`journal.unpay` removes its line).
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export const SECRET = "test-secret-0123456789abcdef0123456789abcdef";

export interface JournalFixture {
  dir: string;
  tools: string;
  storage: string;
  file: string;
  lines(): Promise<string[]>;
}

export async function journalFixture(): Promise<JournalFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-runs-"));
  const tools = path.join(dir, "tools");
  const storage = path.join(dir, "storage");
  const file = path.join(dir, "journal.txt");
  await mkdir(tools, { recursive: true });
  await writeFile(file, "");
  // $0 = action, $1 = line. "add" and "pay" append, "del" removes the line; each prints the line count.
  // pay has its own action word: a rule on a recipe covers every call that runs the same argv.
  const script = `f=${JSON.stringify(file)}; case "$0" in add|pay) printf '%s\\n' "$1" >> "$f";; del) grep -vxF -- "$1" "$f" > "$f.tmp"; mv "$f.tmp" "$f";; esac; wc -l < "$f" | tr -d ' '`;
  await writeFile(
    path.join(tools, "journal.yaml"),
    [
      "name: journal",
      "description: Appends lines to a journal file",
      `command: [sh, -c, ${JSON.stringify(script)}]`,
      "schema:",
      "  positional:",
      "    - { name: action, type: string, required: true }",
      "    - { name: line, type: string, required: true }",
      "recipes:",
      "  add:",
      "    description: Append a line; returns the line count",
      "    preset: { action: add }",
      "    params: { line: {} }",
      "  pay:",
      "    description: Append a payment line (needs approval)",
      "    needs_approval: payments need a human's approval",
      "    preset: { action: pay }",
      "    params: { line: {} }",
      "    revert: { recipe: unpay, args: { line: '{{args.line}}' } }",
      "  unpay:",
      "    description: Remove a payment line",
      "    preset: { action: del }",
      "    params: { line: {} }",
      "",
    ].join("\n"),
  );
  return { dir, tools, storage, file, lines: async () => (await readFile(file, "utf8")).split("\n").filter(Boolean) };
}
