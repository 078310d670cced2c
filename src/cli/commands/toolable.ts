/**
 * `ts-code-mode toolable new NAME`: scaffolds a toolable executable written in TypeScript
 * (NAME.ts, using ts-code-mode/toolable) and the tool YAML that calls it (NAME.yaml, `type:
 * toolable`), so `tools.NAME.<tool>(input)` works once the YAML is in a tools folder.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { toolNameProblem } from "../../tools/validate.js";
import { addJsonOption, CliUsageError, examples, printJson, userPath } from "../shared.js";

interface NewFlags {
  dir: string;
  force?: boolean;
  json?: boolean;
}

export function toolSource(name: string): string {
  return `#!/usr/bin/env -S node --import ts-code-mode/toolable/register
/** ${name}: a toolable executable. Try: node --import ts-code-mode/toolable/register ${name}.ts --discover */
import { z } from "zod";
import { defineTool, runCli, ToolError } from "ts-code-mode/toolable";

const greet = defineTool({
  name: "greet",
  summary: "Greet someone",
  description: "Returns a greeting; streams a progress event.",
  input: z.object({ who: z.string().describe("who to greet"), dry_run: z.boolean().default(false) }),
  examples: [{ who: "Ada" }],
  run: ({ who }, ctx) => {
    if (!who.trim()) throw new ToolError("INVALID_INPUT", "who is empty", { suggestion: "Give a name" });
    ctx.progress("greeting", 100);
    return { greeting: \`hello \${who}\` };
  },
});

await runCli({ name: ${JSON.stringify(name)}, version: "0.1.0", tools: [greet] });
`;
}

export function toolYaml(name: string): string {
  return `# tools.${name}.<tool>(input): the toolable executable ${name}.ts next to this file.
type: toolable
name: ${name}
command: [node, --import, ts-code-mode/toolable/register, ./${name}.ts]
timeout: 60
`;
}

export function registerToolableCommands(program: Command): void {
  const group = program.command("toolable").description("Write toolable executables (any-language CLI tools with --discover/--manifest/JSON envelopes)");
  const cmd = group
    .command("new <name>")
    .description("Scaffold NAME.ts (a toolable executable written with ts-code-mode/toolable) and NAME.yaml (type: toolable)")
    .option("--dir <dir>", "folder to write both files into (e.g. your tools folder)", ".")
    .option("--force", "replace files that exist");
  addJsonOption(cmd, "print the files written as JSON");
  cmd.addHelpText("after", examples("toolable new notes --dir ./.code-mode/tools", "toolable new notes && node --import ts-code-mode/toolable/register notes.ts --discover"));
  cmd.action(async (name: string, flags: NewFlags) => {
    const problem = toolNameProblem(name);
    if (problem) throw new CliUsageError(`toolable new: ${problem}`);
    const dir = userPath(flags.dir, "--dir");
    await mkdir(dir, { recursive: true });
    const files = [
      { file: path.join(dir, `${name}.ts`), text: toolSource(name), mode: 0o755 },
      { file: path.join(dir, `${name}.yaml`), text: toolYaml(name), mode: 0o644 },
    ];
    for (const f of files) {
      try {
        await writeFile(f.file, f.text, { flag: flags.force ? "w" : "wx", mode: f.mode });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EEXIST") throw new CliUsageError(`toolable new: ${f.file} exists; add --force to replace it`);
        throw e;
      }
    }
    if (flags.json) printJson({ files: files.map((f) => f.file) });
    else process.stdout.write(`wrote ${files.map((f) => f.file).join(" and ")}\nIt needs ts-code-mode and zod installed where it runs.\n`);
  });
}
