/**
 * A consumer project of the built package without some of its dependencies: node_modules holds
 * ts-code-mode's dist/, package.json (and examples/) plus a link to every package of the repo's
 * node_modules except `omit` (names, scoped ones as "@scope/name"). For "works without the
 * optional package X" tests, without an npm install.
 */
import { cp, mkdir, readdir, symlink } from "node:fs/promises";
import path from "node:path";

export async function consumerProject(project: string, repo: string, omit: ReadonlySet<string>): Promise<string> {
  const modules = path.join(project, "node_modules");
  await mkdir(path.join(modules, "ts-code-mode"), { recursive: true });
  for (const part of ["dist", "examples", "package.json"]) await cp(path.join(repo, part), path.join(modules, "ts-code-mode", part), { recursive: true });
  for (const entry of await readdir(path.join(repo, "node_modules"))) {
    if (entry.startsWith(".")) continue;
    const names = entry.startsWith("@") ? (await readdir(path.join(repo, "node_modules", entry))).map((s) => `${entry}/${s}`) : [entry];
    for (const name of names) {
      if (omit.has(name)) continue;
      await mkdir(path.dirname(path.join(modules, name)), { recursive: true });
      await symlink(path.join(repo, "node_modules", name), path.join(modules, name));
    }
  }
  return path.join(modules, "ts-code-mode");
}
