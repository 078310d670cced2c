// Quickstart: run agent code against the example tools, save a workflow and an artifact.
// Run from the repository after `npm run build`:  node examples/quickstart.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FileStorage, Session, SubprocessExecutor } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-quickstart-"));

const session = new Session({
  storage: new FileStorage({ basePath: base }),
  executor: new SubprocessExecutor({ toolsPath: path.join(here, "tools"), defaultTimeoutMs: 10_000 }),
});
await session.start();
try {
  // 1. Discover and call a tool. Variables persist between runs, like a REPL.
  let r = await session.run(`
    const found = await tools.search("print text", { limit: 1 });
    const greeting: string = await tools.echo.say({ text: ["hello", "from", found[0].name] });
    greeting.trim()
  `);
  console.log("tool:", r.value);

  // 2. Save a reusable workflow and call it like a function.
  r = await session.run(`
    await workflows.create({
      name: "shout",
      source: "/** Upper-case some words with the echo tool. */\\n" +
        "export async function run({ words }: { words: string[] }) {\\n" +
        "  return (await tools.echo.say({ text: words })).trim().toUpperCase();\\n" +
        "}",
    });
    await workflows.shout({ words: [greeting.trim(), "again"] })
  `);
  console.log("workflow:", r.value);

  // 3. Keep data between sessions as artifacts; the same kind of value comes back.
  r = await session.run(`
    await artifacts.save("notes/today.json", { shouted: await workflows.shout({ words: ["ok"] }) }, { description: "demo" });
    await artifacts.load("notes/today.json")
  `);
  console.log("artifact:", JSON.stringify(r.value));

  // 4. Problems in agent code come back as data, never as exceptions.
  r = await session.run("await tools.ech.say({ text: ['x'] })");
  console.log("error:", r.error?.name, "-", r.error?.message);
} finally {
  await session.close();
  rmSync(base, { recursive: true, force: true });
}
