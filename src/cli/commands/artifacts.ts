/** `ts-code-mode artifacts list`: the stored artifacts of a base folder. */
import type { Command } from "commander";
import { oneLine, table } from "../format.js";
import { addJsonOption, addStorageOptions, examples, printJson, resolvePaths, withSession, writeLine, type StorageFlags } from "../shared.js";

interface JsonFlags extends StorageFlags {
  json?: boolean;
}

export function registerArtifactsCommands(program: Command): void {
  const artifacts = program.command("artifacts").description("List the saved artifacts of a base folder").addHelpText("after", examples("artifacts list"));

  const list = artifacts.command("list").description("List every artifact (name, kind, size, description); one that cannot be read is named on stderr");
  addStorageOptions(list);
  addJsonOption(list, "print the artifacts (name, kind, size, description, metadata, times) as JSON");
  list.addHelpText("after", examples("artifacts list", "artifacts list --base ./demo --json"));
  list.action(async (flags: JsonFlags) => {
    const [all, problems] = await withSession(flags, async (s) => [await s.listArtifacts(), (await s.storage.artifacts.problems?.()) ?? []] as const);
    // An artifact that cannot be read is left out of the listing and named here, so one bad file
    // never hides the others (and a script reading stdout still gets valid output).
    for (const p of problems) writeLine(process.stderr, `warning: artifact ${p.name} is not listed: ${p.problem}`);
    if (flags.json) return printJson(all);
    if (all.length === 0) return writeLine(process.stdout, `No artifacts in ${resolvePaths(flags).storagePath}.`);
    writeLine(process.stdout, table(["ARTIFACT", "KIND", "BYTES", "DESCRIPTION"], all.map((a) => [a.name, a.kind, String(a.size), oneLine(a.description)])));
  });
}
