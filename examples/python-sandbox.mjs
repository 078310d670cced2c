// Sandboxed Python: the agent's Python runs in Pyodide inside a deno process that may read only
// Pyodide's own files. Run from the repository after `npm run build`:  node examples/python-sandbox.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FileStorage, SandboxExecutor, Session } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-pyodide-"));

const session = new Session({
  storage: new FileStorage({ basePath: base }),
  executor: new SandboxExecutor({ language: "python", toolsPath: path.join(here, "tools"), defaultTimeoutMs: 10_000 }),
});
// start() returns at once; Pyodide loads in the background (seconds) and the first run waits for it.
await session.start();
try {
  // The same snippet as under PythonExecutor: synchronous calls, kwargs, artifacts.
  let r = await session.run(`
greeting = tools.echo.say(text=["hello", "from", "pyodide"]).strip()
artifacts.save("greeting.json", {"text": greeting})
greeting.upper()
`);
  console.log("tool:", r.value);

  // call_async + asyncio.gather run tool calls in parallel.
  r = await session.run(`
import asyncio
[w.strip() for w in await asyncio.gather(*[tools.echo.say.call_async(text=[w]) for w in greeting.split()])]
`);
  console.log("parallel:", JSON.stringify(r.value));

  // Python reaches JavaScript through \`js\`, but the deno around it denies the machine.
  r = await session.run(`
import js
try:
    js.Deno.readTextFileSync("/etc/passwd")
    outcome = "read it"
except Exception as e:
    outcome = e.name
outcome
`);
  console.log("host file:", r.value);
} finally {
  await session.close();
  rmSync(base, { recursive: true, force: true });
}
