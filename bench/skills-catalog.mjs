// Size of the skills catalog a host puts in a system prompt: tokens per skill (chars / 4) for the
// example skills, in both formats. Run after a build: node bench/skills-catalog.mjs
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FileStorage } from "../dist/storage/file/storage.js";
import { SkillLibrary } from "../dist/skills/library.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const base = mkdtempSync(path.join(tmpdir(), "skills-bench-"));
try {
  cpSync(path.join(repo, "examples/skills"), path.join(base, "skills"), { recursive: true });
  const storage = new FileStorage({ basePath: base });
  const lib = new SkillLibrary(storage.skills);
  const n = (await lib.list()).length;
  for (const format of ["xml", "markdown"]) {
    const text = await lib.catalog(format);
    // The location is a path under a temp folder; count it as a typical project path instead.
    const typical = text.replaceAll(base, "/home/user/project/.code-mode");
    console.log(`${format}: ${n} skills, ${typical.length} chars, ~${Math.round(typical.length / 4 / n)} tokens per skill (chars/4)`);
  }
  await storage.close();
} finally {
  rmSync(base, { recursive: true, force: true });
}
