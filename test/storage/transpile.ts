/**
 * Turns a TypeScript entry module and everything it imports relatively into plain ESM `.js` files
 * under `outDir`, mirroring the repository layout, so a real `node` child process can run the very
 * code under test without a build step. `node_modules` is linked in so bare imports (zod) resolve.
 */
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

const RELATIVE_IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)"(\.{1,2}\/[^"]+)\.js"/g;

/** Transpiles `entry` (relative to the repo) and its relative imports; returns the entry's output path. */
export async function transpileTree(entry: string, outDir: string): Promise<string> {
  const seen = new Set<string>();
  const queue = [path.resolve(REPO_ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = await readFile(file, "utf8");
    for (const m of source.matchAll(RELATIVE_IMPORT)) queue.push(path.resolve(path.dirname(file), `${m[1]}.ts`));
    const { outputText } = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    const out = path.join(outDir, path.relative(REPO_ROOT, file)).replace(/\.ts$/, ".js");
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, outputText);
  }
  await symlink(path.join(REPO_ROOT, "node_modules"), path.join(outDir, "node_modules"), "dir");
  return path.join(outDir, entry).replace(/\.ts$/, ".js");
}
