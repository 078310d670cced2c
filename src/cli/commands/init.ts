/**
 * `ts-code-mode init`: makes a base folder ready to use — the bundled example tools copied into
 * DIR/tools, the example workflows added through the WorkflowLibrary (so description and params are
 * derived and stored as `workflows.create` would). What exists is kept unless --force.
 */
import { copyFile, mkdir, readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { FileStorage } from "../../storage/file/storage.js";
import { WorkflowLibrary } from "../../workflows/library.js";
import { readSkillFolder } from "../../skills/roots.js";
import { FileSkillStore } from "../../storage/file/skills.js";
import { examplesDir } from "../package-root.js";
import { StorageError } from "../../errors.js";
import { addJsonOption, DEFAULT_BASE, examples, printJson, userPath } from "../shared.js";

interface InitFlags {
  base: string;
  force?: boolean;
  json?: boolean;
}

type Outcome = "created" | "replaced" | "kept";

interface InitReport {
  base: string;
  tools: Array<{ file: string; outcome: Outcome }>;
  workflows: Array<{ name: string; outcome: Outcome }>;
  skills: Array<{ name: string; outcome: Outcome }>;
}

export function registerInitCommand(program: Command): void {
  const cmd = program
    .command("init")
    .description("Create a base folder with the example tools, workflows and skills")
    .option("--base <dir>", "the folder to set up", DEFAULT_BASE)
    .option("--force", "replace example tools, workflows and skills that already exist");
  addJsonOption(cmd, "print what was created and kept as JSON");
  cmd.addHelpText(
    "after",
    examples("init", "init --base ./demo", "init --base ./demo --force") +
      "\nExisting files and workflows are kept unless --force; other files in the folder are never touched.\n",
  );
  cmd.action(async (flags: InitFlags) => {
    const base = userPath(flags.base);
    await checkBase(base);
    const report = await init(base, flags.force === true);
    if (flags.json) printJson(report);
    else printReport(report, flags.base);
  });
}

async function init(base: string, force: boolean): Promise<InitReport> {
  const source = examplesDir();
  const report: InitReport = { base, tools: [], workflows: [], skills: [] };

  const toolsDir = path.join(base, "tools");
  await mkdir(toolsDir, { recursive: true });
  for (const file of await listFiles(path.join(source, "tools"), /\.ya?ml$/)) {
    const target = path.join(toolsDir, file);
    const exists = await pathExists(target);
    if (exists && !force) {
      report.tools.push({ file, outcome: "kept" });
      continue;
    }
    await copyFile(path.join(source, "tools", file), target);
    report.tools.push({ file, outcome: exists ? "replaced" : "created" });
  }

  const storage = new FileStorage({ basePath: base });
  try {
    const library = new WorkflowLibrary(storage.workflows);
    for (const file of await listFiles(path.join(source, "workflows"), /\.ts$/)) {
      const name = path.basename(file, ".ts");
      const exists = (await library.get(name)) !== null;
      if (exists && !force) {
        report.workflows.push({ name, outcome: "kept" });
        continue;
      }
      await library.create({ name, source: await readFile(path.join(source, "workflows", file), "utf8") });
      report.workflows.push({ name, outcome: exists ? "replaced" : "created" });
    }
    // Example skills are copied as folders (a person's files: no provenance, so trusted).
    const skillsSource = new FileSkillStore(path.join(source, "skills"), { readOnly: true });
    for (const name of await skillsSource.names()) {
      const exists = (await storage.skills.files(name)) !== null;
      if (exists && !force) {
        report.skills.push({ name, outcome: "kept" });
        continue;
      }
      await storage.skills.save(name, await readSkillFolder(path.join(source, "skills", name)));
      report.skills.push({ name, outcome: exists ? "replaced" : "created" });
    }
  } finally {
    await storage.close();
  }
  return report;
}

/**
 * The base must be a folder we can create or write into: a file (`--base /etc/passwd`) or a path
 * under one is said in one line, before anything is written, instead of an ENOTDIR stack trace.
 */
async function checkBase(base: string): Promise<void> {
  for (let dir = base; ; dir = path.dirname(dir)) {
    const found = await stat(dir).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" || err.code === "ENOTDIR" ? undefined : err));
    if (found instanceof Error) throw new StorageError(`cannot set up ${base}: ${found.code === "EACCES" ? "permission denied reading" : `cannot read (${found.code})`} ${dir}`);
    if (found?.isDirectory()) break;
    if (found) throw new StorageError(`cannot set up ${base}: ${dir} is a file, not a folder`);
    if (path.dirname(dir) === dir) break;
  }
  try {
    await mkdir(base, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new StorageError(`cannot set up ${base}: ${code === "EACCES" || code === "EROFS" ? "no permission to create it" : `cannot create it (${code})`}`);
  }
}

async function listFiles(dir: string, pattern: RegExp): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && pattern.test(e.name) && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
}

async function pathExists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

function printReport(report: InitReport, baseArg: string): void {
  const lines = [`Base folder ${report.base}`];
  for (const t of report.tools) lines.push(`  ${t.outcome.padEnd(8)}  tools/${t.file}`);
  for (const w of report.workflows) lines.push(`  ${w.outcome.padEnd(8)}  workflow ${w.name}`);
  for (const k of report.skills) lines.push(`  ${k.outcome.padEnd(8)}  skill ${k.name}`);
  if ([...report.tools, ...report.workflows, ...report.skills].some((x) => x.outcome === "kept")) {
    lines.push("Kept items already existed; --force replaces them with the examples.");
  }
  const base = baseArg === DEFAULT_BASE ? "" : ` --base ${quote(baseArg)}`;
  lines.push(`Next: ts-code-mode run${base} 'await tools.list()'`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** Shell-quotes a path only when it needs it. */
function quote(value: string): string {
  return /^[\w./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}
