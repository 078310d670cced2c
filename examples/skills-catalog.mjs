// The skills catalog for a system prompt, then an agent's run that follows a skill: load its
// instructions and run its script on a CSV.  node examples/skills-catalog.mjs
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FileStorage, Session, SubprocessExecutor } from "ts-code-mode";

const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-skills-"));
try {
  // What `ts-code-mode init` installs: examples/skills/* into <base>/skills/.
  cpSync(fileURLToPath(new URL("./skills/", import.meta.url)), path.join(base, "skills"), { recursive: true });
  const csv = path.join(base, "sales.csv");
  writeFileSync(csv, "region,units\nnorth,10\nsouth,30\n");

  const session = new Session({ storage: new FileStorage({ basePath: base }), executor: new SubprocessExecutor() });
  const catalog = await session.skillsCatalog({ format: "xml" });
  console.log(catalog.split("\n").filter((l) => !l.startsWith("<") && !l.includes(base)).join(" | "));
  const r = await session.run(`
    const skill = await skills.load("csv-summary");
    const summary = JSON.parse(await skills.run("csv-summary", "scripts/summary.py", [${JSON.stringify(csv)}]));
    ({ resources: skill.resources, rows: summary.rows, units: summary.numeric.units })
  `);
  console.log("result:", JSON.stringify(r.value ?? r.error));
  await session.close();
} finally {
  rmSync(base, { recursive: true, force: true });
}
