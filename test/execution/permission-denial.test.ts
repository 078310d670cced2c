/**
 * A refusal by Node's permission model (SubprocessExecutor `permissions`) says WHAT was refused:
 * the permission, the path, and the option that would grant it — not only Node's bare
 * "Access to this API has been restricted".
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage, Session, SubprocessExecutor } from "../../src/index.js";

let dir: string;
let session: Session;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-perm-"));
  session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SubprocessExecutor({ permissions: { fsRead: [dir] } }) });
});
afterAll(async () => {
  await session.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("permission denials under SubprocessExecutor permissions", () => {
  it("a read outside fsRead names the path, the permission and permissions.fsRead", async () => {
    const r = await session.run("require('node:fs').readFileSync('/etc/hostname', 'utf8')");
    expect(r.ok).toBe(false);
    expect(r.error?.message).toBe('Access to this API has been restricted: FileSystemRead denied for "/etc/hostname" (not granted by the executor\'s permissions.fsRead)');
    expect(r.error?.stack?.split("\n")[0]).toBe(`Error: ${r.error?.message}`);
  });

  it("a write names the path and permissions.fsWrite", async () => {
    const target = path.join(dir, "out.txt");
    const r = await session.run(`await require('node:fs/promises').writeFile(${JSON.stringify(target)}, 'x')`);
    expect(r.error?.message).toContain(`FileSystemWrite denied for ${JSON.stringify(target)}`);
    expect(r.error?.message).toContain("permissions.fsWrite");
  });

  it("a child process names permissions.childProcess", async () => {
    const r = await session.run("require('node:child_process').execSync('true')");
    expect(r.error?.message).toBe("Access to this API has been restricted: ChildProcess denied (not granted by the executor's permissions.childProcess)");
  });
});
