// A locked-down ContainerExecutor: agent code in a container with no network, a read-only root,
// a memory cap, a workspace folder shared at the same path, and a policy on what the shell may do.
// Run from the repository after `npm run build` with a container engine (podman or Docker):
//   node examples/container-locked-down.mjs
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildImage, ContainerExecutor, FileStorage, policy, Session } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-container-"));
const workspace = path.join(base, "workspace");
mkdirSync(workspace);
writeFileSync(path.join(workspace, "notes.txt"), "three\nlines\nhere\n");
// The guest runs as nobody (65534): give it the workspace (as root; otherwise make it writable).
chmodSync(base, 0o755);
if (process.getuid?.() === 0) chownSync(workspace, 65534, 65534);

await buildImage(); // once; the same as `ts-code-mode image build` (reused while the runtime is unchanged)

const executor = new ContainerExecutor({
  toolsPath: path.join(here, "tools"),
  network: "none", // the default: only loopback inside
  memoryMb: 256,
  pidsLimit: 128,
  workspace, // mounted read-write at the same path, and the working directory
  middleware: [policy({ deny: ["shell.exec"] })], // agent code may not run shell commands here
  defaultTimeoutMs: 20_000,
});
const session = new Session({ storage: new FileStorage({ basePath: path.join(base, "storage") }), executor });
try {
  await session.start();
  let r = await session.run(`(await import("node:fs")).readFileSync("notes.txt", "utf8").split("\\n").length - 1`);
  console.log("lines:", r.value);
  r = await session.run(`await tools.shell.exec({ command: "wc -l notes.txt" })`);
  console.log("agent shell:", r.error?.name, "-", r.error?.message);
  r = await session.run(`
    const net = await import("node:net");
    await new Promise((resolve) => net.connect(443, "1.1.1.1").on("error", (e) => resolve(e.code)).on("connect", () => resolve("connected")))`);
  console.log("network:", r.value);
  console.log("capabilities:", session.capabilities().capabilities.sort().join(", "));
} finally {
  await session.close(); // removes the container
  rmSync(base, { recursive: true, force: true });
}
