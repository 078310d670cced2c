/**
 * `ts-code-mode mcp --executor container`: agent code from an MCP client runs in a container, and
 * the server leaves no container behind when the client goes away.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { listLabelled } from "../../src/execution/container/cleanup.js";
import { ensureTestImage, testDocker } from "../helpers/container.js";
import { baseWithExampleTools, callTool, cleanup, connectStdio, ensureBuilt, isAlive, tempDir, textOf, waitUntil } from "./harness.js";

let dir: string;

beforeAll(async () => {
  await Promise.all([ensureBuilt(), ensureTestImage()]);
  dir = await tempDir();
  await baseWithExampleTools(dir);
}, 120_000);

afterAll(() => cleanup(dir));

it("run_code runs in a container with the given limits; closing the client removes the container", async () => {
  const conn = await connectStdio(["--base", "base", "--executor", "container", "--memory-mb", "128", "--network", "none"], { cwd: dir });
  let owners: number[] = [];
  try {
    const r = await callTool(conn.client, "run_code", { code: "[(await tools.shell.exec({ command: 'uname -s' })).output, (await import('node:os')).totalmem() > 0]" });
    expect(textOf(r)).toContain("Linux");
    const mine = (await listLabelled(await testDocker())).filter((c) => c.ownerPid !== process.pid && c.ownerPid !== undefined && isAlive(c.ownerPid));
    owners = mine.map((c) => c.ownerPid!);
    expect(mine.length).toBeGreaterThan(0);
    const info = await (await testDocker()).getContainer(mine[0]!.id).inspect();
    expect(info.HostConfig.Memory).toBe(128 * 1024 * 1024);
  } finally {
    await conn.close();
  }
  await waitUntil(async () => (await listLabelled(await testDocker())).every((c) => c.ownerPid === undefined || !owners.includes(c.ownerPid)), "the server's containers to be removed");
}, 60_000);
