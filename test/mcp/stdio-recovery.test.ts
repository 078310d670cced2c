/**
 * The MCP server never dies after the handshake (issue 33 item 5): a real MCP client (the SDK's
 * stdio client spawning the built CLI) meets a broken tool file, a missing container image and a
 * remote server that refuses the token. Each call that needs what failed answers with an error
 * naming the fix, the server stays up, and once the cause is fixed the next call works.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureTestImage, testDocker } from "../helpers/container.js";
import { freePort } from "../helpers/redis.js";
import { startServe, type ServeProcess } from "../server/harness.js";
import { baseWithExampleTools, callTool, cleanup, connectStdio, ensureBuilt, isAlive, tempDir, textOf, type StdioConnection } from "./harness.js";

let dir: string;
const connections: StdioConnection[] = [];
const servers: ServeProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  await baseWithExampleTools(dir);
}, 120_000);

afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.stop()));
  await cleanup(dir);
});

async function connect(args: string[]): Promise<StdioConnection> {
  const conn = await connectStdio(args, { cwd: dir });
  connections.push(conn);
  return conn;
}

it("a broken tool file: the calls that use tools answer with the file's problem; fixing the file is enough", async () => {
  const bad = path.join(dir, "base", "tools", "zz-bad.yaml");
  await writeFile(bad, "name: bad\nschema: { options: { x: { type: nope } } }\n");
  const conn = await connect(["--base", "base"]);
  const broken = await callTool(conn.client, "run_code", { code: "(await tools.echo.say({ text: ['hi'] })).trim()" });
  expect(broken.isError).toBe(true);
  expect(textOf(broken)).toContain("zz-bad.yaml");
  // Still serving: code that needs no tool runs.
  expect(textOf(await callTool(conn.client, "run_code", { code: "1 + 1" }))).toContain("2");
  await writeFile(bad, "name: bad\ndescription: fixed now\n");
  const fixed = await callTool(conn.client, "run_code", { code: "(await tools.echo.say({ text: ['hi'] })).trim()" });
  expect(fixed.isError).toBeFalsy();
  expect(textOf(fixed)).toContain("hi");
  expect(isAlive(conn.pid!)).toBe(true);
}, 90_000);

it("a missing container image: run_code answers how to build it; once the image exists the next call runs", async () => {
  const image = await ensureTestImage();
  const repo = `localhost/tcm-missing-${randomBytes(4).toString("hex")}`;
  const conn = await connect(["--base", "base", "--executor", "container", "--image", `${repo}:1`]);
  const missing = await callTool(conn.client, "run_code", { code: "1 + 1" });
  expect(missing.isError).toBe(true);
  expect(textOf(missing)).toMatch(/image .*tcm-missing-.* is missing; build it with/);
  const docker = await testDocker();
  await docker.getImage(image).tag({ repo, tag: "1" });
  try {
    const ran = await callTool(conn.client, "run_code", { code: "1 + 1" });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(textOf(ran)).toContain("2");
  } finally {
    await conn.close();
    await docker.getImage(`${repo}:1`).remove().catch(() => undefined);
  }
}, 180_000);

it("a remote server that refuses the token: run_code names --remote-token; once the server takes it the next call runs", async () => {
  const token = "the-right-token-0123456789";
  const port = await freePort();
  const serveArgs = (t: string) => ["--port", String(port), "--token", t, "--base", path.join(dir, "base")];
  const first = await startServe(serveArgs("another-token-0123456789"));
  servers.push(first);
  const conn = await connect(["--remote", first.url, "--remote-token", token, "--base", "base"]);
  const refused = await callTool(conn.client, "run_code", { code: "1 + 1" });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toMatch(/refused the token/);
  expect(textOf(refused)).toMatch(/--remote-token/);
  // The fix on the server's side: it now runs with the token the MCP server sends.
  await first.stop();
  servers.push(await startServe(serveArgs(token)));
  const ran = await callTool(conn.client, "run_code", { code: "1 + 1" });
  expect(ran.isError, textOf(ran)).toBeFalsy();
  expect(textOf(ran)).toContain("2");
}, 90_000);
