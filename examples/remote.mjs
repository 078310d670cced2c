// Run agent code on a `ts-code-mode serve` server: start one on loopback, connect a Session to it
// with RemoteExecutor, run code, and see a typed SessionLostError once the server is gone.
// From the repository: npm run build && node examples/remote.mjs
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FileStorage, RemoteExecutor, Session } from "ts-code-mode";

const base = await mkdtemp(path.join(os.tmpdir(), "remote-example-"));
const token = "example-token-0123456789abcdef";
const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const tools = fileURLToPath(new URL("./tools/", import.meta.url));
const server = spawn(process.execPath, [cli, "serve", "--port", "0", "--base", base, "--tools", tools], {
  env: { ...process.env, TS_CODE_MODE_TOKEN: token },
  stdio: ["ignore", "ignore", "pipe"],
});
const url = await new Promise((resolve) => {
  let log = "";
  server.stderr.on("data", (d) => {
    log += d;
    const m = /listening on (\S+)/.exec(log);
    if (m) resolve(m[1]);
  });
});

// The Session's storage is the server's (here the same folder; in a fleet, the same Redis prefix).
const session = new Session({ storage: new FileStorage({ basePath: base }), executor: new RemoteExecutor({ url, token }) });
const r = await session.run('const greeting = await tools.echo.say({ text: ["hello from the server"] }); greeting.trim()');
console.log(`remote: ${r.value}`);
console.log(`variables persist: ${(await session.run("greeting.length")).value}`);

server.kill("SIGKILL");
await new Promise((resolve) => server.once("exit", resolve));
const lost = await session.run("1 + 1");
console.log(`after the server died: ${lost.error?.name}`);
await session.close();
await rm(base, { recursive: true, force: true });
