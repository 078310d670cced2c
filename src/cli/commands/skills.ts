/** `ts-code-mode skills list|show|validate|catalog|add|remove`: the Agent Skills of a base folder. */
import path from "node:path";
import { Option, type Command } from "commander";
import { NotFoundError, ValidationError } from "../../errors.js";
import { SkillLibrary } from "../../skills/library.js";
import { discoverSkillRoots, readSkillFolder } from "../../skills/roots.js";
import { skillFoldersIn, validateSkillDir } from "../../skills/validate.js";
import { FileStorage } from "../../storage/file/storage.js";
import { compareNames } from "../../storage/names.js";
import { oneLine, table } from "../format.js";
import { addJsonOption, addStorageOptions, EXIT_FAILURE, examples, printJson, resolvePaths, userPath, watchMissingFolders, writeLine, type StorageFlags } from "../shared.js";
import { count } from "../../values/count.js";

interface SkillFlags extends StorageFlags {
  json?: boolean;
  root?: string[];
  discover?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function addRootOptions(cmd: Command): Command {
  addStorageOptions(cmd);
  return cmd
    .option("--root <dir>", "also read skills from this read-only folder (repeatable; a later folder wins a name clash)", collect)
    .option("--discover", "also read ./.agents/skills and ./.claude/skills when they exist");
}

/** Runs `fn` with the library of the resolved folders; read-only commands leave no new folder behind. */
async function withLibrary<T>(flags: SkillFlags, fn: (lib: SkillLibrary, storage: FileStorage) => Promise<T>, readOnly = true): Promise<T> {
  const paths = resolvePaths(flags);
  const undo = readOnly ? await watchMissingFolders(paths, { toolsFolder: false }) : async () => undefined;
  const roots = [...(flags.discover ? await discoverSkillRoots() : []), ...(flags.root ?? []).map((r) => userPath(r, "--root"))];
  const storage = new FileStorage({ basePath: paths.storagePath });
  try {
    return await fn(new SkillLibrary(storage.skills, { roots }), storage);
  } finally {
    await storage.close();
    await undo();
  }
}

export function registerSkillsCommands(program: Command): void {
  const skills = program
    .command("skills")
    .description("List, show, validate and manage Agent Skills (SKILL.md folders) of a base folder")
    .addHelpText(
      "after",
      examples("skills list", "skills show csv-summary", "skills validate ./my-skill", "skills catalog --format markdown", "skills add ./my-skill", "skills remove my-skill") +
        "\nSkills live in <base>/skills/<name>/. Agents use them through the `skills` namespace (skills.list(), skills.load(name), skills.run(...)).\n",
    );

  const list = addRootOptions(skills.command("list").description("List every skill (name, description, where it comes from); problems go to stderr"));
  addJsonOption(list, "print the skills (name, description, location) as JSON");
  list.action(async (flags: SkillFlags) => {
    const { found, warnings } = await withLibrary(flags, async (lib) => {
      const scan = await lib.scan();
      const found = [...scan.skills.values()].map((e) => ({ name: e.name, description: e.description, location: e.store.location(e.name), source: e.source }));
      return { found: found.sort((a, b) => compareNames(a.name, b.name)), warnings: scan.warnings };
    });
    for (const w of warnings) writeLine(process.stderr, `warning: ${w}`);
    if (flags.json) return printJson(found);
    if (found.length === 0) return writeLine(process.stdout, `No skills. Add one with: ts-code-mode skills add DIR (or ts-code-mode init for the examples)`);
    writeLine(process.stdout, table(["SKILL", "DESCRIPTION", "SOURCE"], found.map((s) => [s.name, oneLine(s.description), s.source])));
  });

  const show = addRootOptions(skills.command("show").description("Show a skill: description, instructions and resources").argument("<name>", "skill name"));
  addJsonOption(show, "print the skill (frontmatter, body, resources, trust) as JSON");
  show.action(async (name: string, flags: SkillFlags) => {
    const d = await withLibrary(flags, (lib) => lib.load(name));
    if (flags.json) return printJson(d);
    const lines = [d.name, `  ${d.description}`, "", `Location: ${d.location}`, `Trust: ${d.trust}`, `Resources: ${d.resources.join(", ") || "(none)"}`, "", d.body];
    writeLine(process.stdout, lines.join("\n"));
  });

  const validate = skills
    .command("validate")
    .description("Check skill folders against the Agent Skills spec; lists every problem, exit 1 when there is any")
    .argument("[dir]", "a skill folder, or a folder of skill folders (default: <base>/skills)");
  addStorageOptions(validate);
  addJsonOption(validate, "print [{ folder, problems }] as JSON");
  validate.addHelpText("after", examples("skills validate ./my-skill", "skills validate --base ./demo --json"));
  validate.action(async (dir: string | undefined, flags: SkillFlags) => {
    const target = dir !== undefined ? userPath(dir, "DIR") : path.join(resolvePaths(flags).storagePath, "skills");
    const folders = await skillFoldersIn(target);
    const results = folders.length ? await Promise.all(folders.map(async (folder) => ({ folder, problems: await validateSkillDir(folder) }))) : [{ folder: target, problems: await validateSkillDir(target) }];
    const bad = results.filter((r) => r.problems.length > 0);
    if (flags.json) printJson(results);
    else {
      for (const r of results) {
        if (r.problems.length === 0) writeLine(process.stdout, `ok: ${r.folder}`);
        else writeLine(process.stdout, `${r.folder}:\n${r.problems.map((p) => `  - ${p}`).join("\n")}`);
      }
    }
    if (bad.length) process.exitCode = EXIT_FAILURE;
  });

  const catalog = addRootOptions(skills.command("catalog").description("Print the skills catalog for a system prompt (empty when there are no skills)"));
  catalog.addOption(new Option("--format <format>", "xml (the spec's <available_skills> block) or markdown").choices(["xml", "markdown"]).default("xml"));
  catalog.action(async (flags: SkillFlags & { format: "xml" | "markdown" }) => {
    const text = await withLibrary(flags, (lib) => lib.catalog(flags.format));
    if (text) writeLine(process.stdout, text);
  });

  const add = skills.command("add").description("Validate a skill folder and copy it into the storage (replaces a skill of the same name; marks it trusted)").argument("<dir>", "the skill folder");
  addStorageOptions(add);
  addJsonOption(add, "print the added skill as JSON");
  add.action(async (dir: string, flags: SkillFlags) => {
    const folder = userPath(dir, "DIR");
    const problems = await validateSkillDir(folder);
    if (problems.length) throw new ValidationError(`${folder} is not a valid skill:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    const name = path.basename(folder);
    const files = await readSkillFolder(folder);
    const summary = await withLibrary(
      flags,
      async (lib, storage) => {
        await storage.skills.save(name, files);
        return (await lib.list()).find((s) => s.name === name);
      },
      false,
    );
    if (flags.json) return printJson(summary);
    writeLine(process.stdout, `Added skill ${name} (${count(files.length, "file")}) to ${summary?.location ?? name}`);
  });

  const remove = skills.command("remove").description("Delete a skill from the storage").argument("<name>", "skill name");
  addStorageOptions(remove);
  addJsonOption(remove, "print { removed } as JSON");
  remove.action(async (name: string, flags: SkillFlags) => {
    const removed = await withLibrary(flags, (lib) => lib.delete(name), false);
    if (flags.json) {
      if (!removed) process.exitCode = EXIT_FAILURE;
      return printJson({ removed });
    }
    if (!removed) throw new NotFoundError(`No skill named ${JSON.stringify(name)} in the storage`);
    writeLine(process.stdout, `Removed skill ${name}`);
  });
}
