// Warm starts in a long-lived host: an ExecutorPool keeps a child process started, so a new
// session's first result does not wait for `node` to spawn. Each spare serves one session only.
//   node examples/executor-pool.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ExecutorPool, FileStorage, Session, SubprocessExecutor } from "ts-code-mode";

const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-pool-"));
const storage = new FileStorage({ basePath: base });
const pool = new ExecutorPool(() => new SubprocessExecutor(), { spares: 1, likelyStorage: storage });
try {
  for (const name of ["first", "second"]) {
    while (pool.ready < 1) await new Promise((r) => setTimeout(r, 10)); // a host would not wait; it shows the spare is used
    const session = new Session({ storage, executor: pool.take() });
    await session.start();
    const r = await session.run(`const seen = typeof mine; var mine = ${JSON.stringify(name)}; seen`);
    console.log(`${name} session saw earlier variables: ${r.value !== "undefined"}`);
    await session.close(); // its child ends with it; the pool has already started a replacement
  }
} finally {
  await pool.close(); // kills the spare's child
  rmSync(base, { recursive: true, force: true });
}
