// Python guests: the agent writes Python against the same tools, artifacts and storage.
// Run from the repository after `npm run build`:  node examples/python-guest.mjs  (needs python3)
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FileStorage, PythonExecutor, Session } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-python-"));

const session = new Session({
  storage: new FileStorage({ basePath: base }),
  executor: new PythonExecutor({ toolsPath: path.join(here, "tools"), defaultTimeoutMs: 10_000 }),
});
await session.start();
try {
  // Calls are synchronous, py-code-mode style; keyword arguments become the tool's arguments.
  let r = await session.run(`
greeting = tools.echo.say(text=["hello", "from", "python"]).strip()
artifacts.save("greeting.json", {"text": greeting})
artifacts.save("greeting.bin", greeting.encode())
greeting.upper()
`);
  console.log("tool:", r.value);

  // Globals persist; call_async + asyncio.gather run tool calls in parallel.
  r = await session.run(`
import asyncio
words = await asyncio.gather(*[tools.echo.say.call_async(text=[w]) for w in greeting.split()])
[w.strip() for w in words]
`);
  console.log("parallel:", JSON.stringify(r.value));

  // Bytes come back as bytes.
  r = await session.run(`artifacts.load("greeting.bin")`);
  console.log("bytes:", Buffer.from(r.value).toString());

  // A Python workflow saved from the host (as a TypeScript session or MCP would): python3's ast reads
  // its params and docstring, FileStorage keeps it as workflows/triple.py, and Python code calls it.
  const wf = await session.addWorkflow({ name: "triple", language: "python", source: 'def run(n: int) -> int:\n    """Triple a number."""\n    return n * 3\n' });
  console.log("workflow:", wf.description, JSON.stringify(wf.params.map((p) => p.name)), existsSync(path.join(base, "workflows", "triple.py")));
  r = await session.run("workflows.triple(n=4)");
  console.log("workflow run:", r.value);

  // Exceptions come back with the Python exception's name.
  r = await session.run(`{"a": 1}["b"]`);
  console.log("error:", r.error?.name);
} finally {
  await session.close();
  rmSync(base, { recursive: true, force: true });
}
