/**
 * `ts-code-mode deps list|add|remove|sync`: the packages agent code may import, for a base folder
 * (list in <base>/deps.txt, packages in <base>/deps/). The same DepsService the `deps` namespace
 * uses, so the same checks apply; npm's output is shown as progress on stderr. `--language python`:
 * the Python list (<base>/deps-python.txt) and pip into <base>/deps/python/venv, as Python sessions use.
 */
import { Option, type Command } from "commander";
import { depsServiceFor, type DepsService, type InstallResult } from "../../deps/index.js";
import { parsePythonSpec, pythonDepsServiceFor } from "../../deps/python/index.js";
import { parseDepSpec } from "../../deps/spec.js";
import { table } from "../format.js";
import { addJsonOption, addStorageOptions, CliUsageError, examples, EXIT_FAILURE, printJson, resolvePaths, writeLine, type StorageFlags } from "../shared.js";

interface DepsFlags extends StorageFlags {
  json?: boolean;
  allowLocal?: boolean;
  allowScripts?: boolean;
  quiet?: boolean;
  language?: "typescript" | "python";
}

function service(flags: DepsFlags): DepsService {
  const { storagePath } = resolvePaths(flags);
  if (flags.language === "python") {
    for (const [flag, set] of [["--allow-local", flags.allowLocal], ["--allow-scripts", flags.allowScripts]] as const) {
      if (set) throw new CliUsageError(`${flag} is for npm packages; Python packages come from the configured index by name only`);
    }
    return pythonDepsServiceFor({ python: "python3" }, storagePath);
  }
  return depsServiceFor({ allowLocalPaths: flags.allowLocal ?? false, allowInstallScripts: flags.allowScripts ?? false }, storagePath);
}

/** npm's lines as progress, unless --json or --quiet (stdout stays clean for scripts either way). */
function progress(flags: DepsFlags): ((line: string) => void) | undefined {
  return flags.json || flags.quiet ? undefined : (line) => process.stderr.write(`  ${flags.language === "python" ? "pip" : "npm"}: ${line}\n`);
}

/** With progress shown, npm's error is already on screen: the summary points at it instead of repeating it. */
function summary(result: InstallResult, progressShown: boolean): string {
  const lines: string[] = [];
  if (result.installed.length) lines.push(`installed: ${result.installed.join(", ")}`);
  if (result.alreadyPresent.length) lines.push(`already present: ${result.alreadyPresent.join(", ")}`);
  for (const f of result.failed) {
    lines.push(progressShown ? `FAILED ${f.spec} (the installer's output above)` : `FAILED ${f.spec}: ${f.error.split("\n").slice(-5).join("\n    ")}`);
  }
  return lines.join("\n") || "nothing to install";
}

function finish(result: InstallResult, flags: DepsFlags): void {
  if (flags.json) printJson(result);
  else writeLine(process.stdout, summary(result, progress(flags) !== undefined));
  if (result.failed.length) process.exitCode = EXIT_FAILURE;
}

export function registerDepsCommands(program: Command): void {
  const deps = program
    .command("deps")
    .description("List, add, remove and install the packages agent code may import")
    .addHelpText("after", examples("deps list", "deps add dayjs@^1.11", "deps sync --json", "deps remove dayjs", "deps add --language python 'requests>=2'"));
  // Each subcommand takes --language: the npm list (default) or the Python one.
  const withLanguage = (cmd: Command) =>
    cmd.addOption(
      new Option("--language <lang>", "typescript (default): npm packages, <base>/deps.txt; python: pip packages in <base>/deps/python/venv, <base>/deps-python.txt").choices(["typescript", "python"]),
    );

  const installOptions = (cmd: Command) =>
    cmd
      .option("--allow-local", "accept local folders and .tgz files as specs (operators only)")
      .option("--allow-scripts", "run the packages' install scripts (off by default)")
      .option("--quiet", "no progress on stderr");
  // `remove` only edits the list: nothing is installed, so only --allow-local (to name a local spec) applies.
  const removeOptions = (cmd: Command) => cmd.option("--allow-local", "accept local folders and .tgz files as specs (operators only)");

  const list = deps.command("list").description("The configured packages and whether each is installed");
  addStorageOptions(withLanguage(list)).option("--allow-local", "also read local folders and .tgz files in the list");
  addJsonOption(list, "print [{ name, spec, configured, installed }] as JSON (configured: set by the operator's configuration rather than deps.txt; always false here)");
  list.action(async (flags: DepsFlags) => {
    const entries = await service(flags).list();
    if (flags.json) return printJson(entries);
    if (!entries.length) return writeLine(process.stdout, "No packages configured. Add one with: ts-code-mode deps add <spec>");
    writeLine(process.stdout, table(["package", "spec", "installed"], entries.map((e) => [e.name, e.spec, e.installed ? "yes" : "no"])));
  });

  const add = deps.command("add").description("Check, install and list packages").argument("<specs...>", "npm specs: name, name@range, alias@npm:name@range; with --language python: name, name[extras], name>=1,<2");
  addStorageOptions(withLanguage(installOptions(add)));
  addJsonOption(add, "print { installed, alreadyPresent, failed } as JSON");
  add.action(async (specs: string[], flags: DepsFlags) => {
    const svc = service(flags);
    // Every spec is checked before anything is installed, so a refused one prints no "installing" line.
    for (const spec of specs) {
      if (flags.language === "python") parsePythonSpec(spec);
      else parseDepSpec(spec, { allowLocalPaths: flags.allowLocal ?? false });
    }
    const total: InstallResult = { installed: [], alreadyPresent: [], failed: [] };
    for (const [i, spec] of specs.entries()) {
      if (!flags.json && !flags.quiet) process.stderr.write(`[${i + 1}/${specs.length}] installing ${spec}\n`);
      const r = await svc.add(spec, progress(flags));
      total.installed.push(...r.installed);
      total.alreadyPresent.push(...r.alreadyPresent);
      total.failed.push(...r.failed);
    }
    finish(total, flags);
  });

  const remove = deps.command("remove").description("Take a package off the list (configuration only)").argument("<spec>", "the package (a version range is ignored)");
  addStorageOptions(withLanguage(removeOptions(remove)));
  addJsonOption(remove, "print { removed, note } as JSON");
  remove.action(async (spec: string, flags: DepsFlags) => {
    const r = await service(flags).remove(spec);
    // Removing what is not there fails, as `skills remove` does: a script learns its name was wrong.
    if (!r.removed) process.exitCode = EXIT_FAILURE;
    if (flags.json) return printJson(r);
    writeLine(r.removed ? process.stdout : process.stderr, r.removed ? r.note : `error: ${r.note}`);
  });

  const sync = deps.command("sync").description("Install every listed package that is missing");
  addStorageOptions(withLanguage(installOptions(sync)));
  addJsonOption(sync, "print { installed, alreadyPresent, failed } as JSON");
  sync.action(async (flags: DepsFlags) => {
    if (!flags.json && !flags.quiet) process.stderr.write("syncing the deps list\n");
    finish(await service(flags).sync(progress(flags)), flags);
  });
}
