/**
 * Toolable executables run where the code runs (issue 32.1): in a container session their calls,
 * streams, sampling over stdin and sessions run inside the session's container, with the
 * executable mounted read-only at its own path; `runs_on: host` opts out, visibly. A middleware
 * chain does not move them back to the host. An agent's shell_readonly in a container session runs
 * inside the container too (issue 32.3). One session (one container) for the whole file.
 */
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCommandPlace, shellReadonlyToolset } from "../../../src/agents/toolsets/shell.js";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { Session } from "../../../src/session.js";
import type { ToolMiddleware } from "../../../src/tools/middleware/types.js";
import { EXAMPLE_TOOLS_PATH } from "../../conformance/executor.js";
import { ensureTestImage, openContainerSession, type ContainerSessionFixture } from "../../helpers/container.js";

const JSTOOL = fileURLToPath(new URL("../../fixtures/toolable/jstool.cjs", import.meta.url));

let fx: ContainerSessionFixture;
let tmp: string;
let s: Session;
let ex: ContainerExecutor;
const passed: string[] = [];

const value = (code: string): Promise<unknown> => fx.value(code);

beforeAll(async () => {
  // A pass-through middleware: calls through a chain must still run inside (they ran on the host).
  const seen: ToolMiddleware = async (c, next) => {
    passed.push(`${c.tool}.${c.callable ?? ""}`);
    return next();
  };
  fx = await openContainerSession(
    "tcm-toolable-inside-",
    await ensureTestImage(),
    async (tools) => {
      await mkdir(path.join(tools, "bin"), { recursive: true });
      await copyFile(JSTOOL, path.join(tools, "bin", "jstool.cjs"));
      await copyFile(path.join(EXAMPLE_TOOLS_PATH, "grep.yaml"), path.join(tools, "grep.yaml"));
      await writeFile(path.join(tools, "js.yaml"), "type: toolable\nname: js\ncommand: [node, ./bin/jstool.cjs]\ndiscover_timeout: 60\n");
      await writeFile(path.join(tools, "jshost.yaml"), "type: toolable\nname: jshost\ncommand: [node, ./bin/jstool.cjs]\nruns_on: host\ndiscover_timeout: 60\n");
    },
    { middleware: [seen], defaultTimeoutMs: 60_000, toolable: { sampler: async (req) => `answer to ${req.prompt}` } },
  );
  ({ tmp, session: s, executor: ex } = fx);
}, 240_000);

afterAll(async () => {
  await fx?.close();
});

describe("toolable executables in a container session run inside its container", { timeout: 120_000 }, () => {
  it("a call sees the container's files, user and workdir, not the host's", async () => {
    const inside = (await ex.exec(["cat", "/etc/hostname"])).output;
    const host = await readFile("/etc/hostname", "utf8").catch(() => os.hostname());
    expect(inside).not.toBe(host);
    const got = (await value('await tools.js.where({ path: "/etc/hostname" })')) as { text: string; cwd: string; uid: number };
    expect(got).toEqual({ text: inside, cwd: "/workspace", uid: 65534 });
    expect(passed).toContain("js.where");
  });

  it("a file the code writes is the file the tool reads; a host file is not there", async () => {
    const hostOnly = path.join(tmp, "host-only.txt");
    await writeFile(hostOnly, "host bytes");
    const got = (await value(`const fs = await import("node:fs"); fs.writeFileSync("/workspace/b.txt", "guest bytes"); [await tools.js.where({ path: "/workspace/b.txt" }), await tools.js.where({ path: ${JSON.stringify(hostOnly)} })].map((r) => r.text)`)) as string[];
    expect(got).toEqual(["guest bytes", "error: ENOENT"]);
  });

  it("sampling over stdin and a session tool work through the container's exec streams", async () => {
    expect(await value('(await tools.js.ask({ question: "2+2?" })).answer')).toBe("answer to 2+2?");
    const events = (await value('const r = await tools.js.repl.session({}); const first = await r.next(); await r.send({ n: 1 }); await r.send({ action: "quit" }); const rest = []; for await (const e of r) rest.push(e.type); [first.type, ...rest]')) as string[];
    expect(events).toEqual(["session_start", "echo", "session_end"]);
  });

  it("runs_on: host opts out, visibly", async () => {
    const hostOnly = path.join(tmp, "host-only.txt");
    const got = (await value(`await tools.jshost.where({ path: ${JSON.stringify(hostOnly)} })`)) as { text: string };
    expect(got.text).toBe("host bytes");
    expect(String(await value('await tools.describe("jshost")'))).toContain("runs_on: host");
  });

  it("a CLI tool called through the middleware chain runs inside too", async () => {
    const inside = (await ex.exec(["cat", "/etc/hostname"])).output.trim();
    expect(String(await value('await tools.grep({ pattern: ".", paths: ["/etc/hostname"] })')).trim()).toBe(inside);
    expect(passed).toContain("grep.");
  });
});

describe("shell_readonly in a container session", { timeout: 120_000 }, () => {
  it("runs inside the container's workdir, seeing the guest's files, not the host's project", async () => {
    const project = await mkdtemp(path.join(tmp, "project-"));
    await writeFile(path.join(project, "c.txt"), "host project file\n");
    await value('(await import("node:fs")).writeFileSync("/workspace/c.txt", "guest file\\n")');
    const [sh] = shellReadonlyToolset(project, { place: async () => sessionCommandPlace(s) });
    expect(sh!.description).toMatch(/inside the session's container/);
    expect(await sh!.execute({ command: "cat c.txt" }, new AbortController().signal)).toBe("guest file\n");
    expect(String(await sh!.execute({ command: "grep -c guest c.txt" }, new AbortController().signal)).trim()).toBe("1");
    // The allow-list still holds as a second layer.
    await expect(sh!.execute({ command: "sort -o x c.txt" }, new AbortController().signal)).rejects.toThrow(/refused/);
  });

  it("a session whose executor has no container is refused, never run unconfined", () => {
    expect(() => sessionCommandPlace({ executor: {} })).toThrow(/refused rather than run unconfined/);
  });
});
