/**
 * Tools run where the code runs (issue 32.1): in a container session the CLI tools `init`
 * installs (examples/tools) run inside the session's container, so they see the guest's files and
 * nothing of the host's; a tool with `runs_on: host` runs on the host and says so. One session
 * (one container) for the whole file.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { Session } from "../../../src/session.js";
import { EXAMPLE_TOOLS_PATH } from "../../conformance/executor.js";
import { ensureTestImage, openContainerSession, type ContainerSessionFixture } from "../../helpers/container.js";
import { waitFor } from "../../helpers/processes.js";

let fx: ContainerSessionFixture;
let tmp: string;
let s: Session;
let ex: ContainerExecutor;

const value = (code: string): Promise<unknown> => fx.value(code);

beforeAll(async () => {
  fx = await openContainerSession("tcm-tools-inside-", await ensureTestImage(), async (tools) => {
    await cp(EXAMPLE_TOOLS_PATH, tools, { recursive: true });
    // The same command twice: once where the code runs, once opted out to the host.
    await writeFile(path.join(tools, "hostcat.yaml"), "name: hostcat\ndescription: Print a file\ncommand: cat\nruns_on: host\nend_of_options: true\nschema:\n  positional:\n    - { name: files, type: array, required: true }\n");
    await writeFile(path.join(tools, "nap.yaml"), "name: nap\ndescription: Sleep\ncommand: [sleep, '37']\n");
    await writeFile(path.join(tools, "nothere.yaml"), "name: nothere\ndescription: A program the image lacks\ncommand: tcm-not-in-the-image\n");
  }, { defaultTimeoutMs: 30_000 });
  ({ tmp, session: s, executor: ex } = fx);
}, 240_000);

afterAll(async () => {
  await fx?.close();
});

describe("CLI tools in a container session run inside its container", () => {
  it("tools.grep reads the container's /etc/hostname, not the host's", async () => {
    const host = (await readFile("/etc/hostname", "utf8").catch(() => os.hostname())).trim();
    const inside = ((await ex.exec(["cat", "/etc/hostname"])).output).trim();
    expect(inside).not.toBe(host);
    const got = String(await value('await tools.grep({ pattern: ".", paths: ["/etc/hostname"] })')).trim();
    expect(got).toBe(inside);
  });

  it("tools.ls lists the container's /root, not the host's", async () => {
    const inside = await ex.exec(["ls", "-a", "--", "/root"]);
    const r = await s.run('await tools.ls({ paths: ["/root"] })');
    if (inside.exitCode === 0) expect(r.error).toBeNull();
    else {
      // nobody may not open the image's /root: the tool says so with the container's ls error.
      expect(r.error?.message).toMatch(/\/root/);
      expect(r.error?.message).toMatch(/inside the container/);
    }
    const hostRoot = await import("node:fs/promises").then((fs) => fs.readdir("/root").catch(() => [] as string[]));
    for (const name of hostRoot.filter((n) => !n.startsWith("."))) expect(String(r.value ?? r.error?.message)).not.toContain(name);
  });

  it("a file the code writes is the file the tools read", async () => {
    expect(await value('const fs = await import("node:fs"); fs.writeFileSync("/workspace/a.txt", "one\\ntwo\\nthree\\n"); (await tools.wc.lines({ files: ["/workspace/a.txt"] })).trim()')).toBe("3 /workspace/a.txt");
    expect(String(await value('await tools.sha256sum({ files: ["/workspace/a.txt"] })'))).toMatch(/^[0-9a-f]{64} {2}\/workspace\/a\.txt/);
  });

  it("runs_on: host opts out, visibly: the tool reads the host and its description says so", async () => {
    const marker = path.join(tmp, "host-only.txt");
    await writeFile(marker, "host bytes\n");
    expect(await value(`await tools.hostcat({ files: [${JSON.stringify(marker)}] })`)).toBe("host bytes\n");
    const described = String(await value('await tools.describe("hostcat")'));
    expect(described).toContain("runs_on: host");
    expect(ex.capabilities().notes.join("\n")).toMatch(/runs_on: host/);
  });

  it("a command missing from the image fails with the fix", async () => {
    const r = await s.run("await tools.nothere({})");
    expect(r.error?.message).toMatch(/not in the container image/);
    expect(r.error?.message).toMatch(/image build --with tcm-not-in-the-image/);
  });

  it("a tool whose command the image lacks is listed as unavailable with the fix, before any call", async () => {
    const listed = (await value("await tools.list()")) as Array<{ name: string; description: string }>;
    const nothere = listed.find((t) => t.name === "nothere");
    expect(nothere?.description).toMatch(/^\(unavailable: command 'tcm-not-in-the-image' is not in the container image .*image build --with tcm-not-in-the-image/);
    for (const present of ["grep", "ls", "wc", "hostcat"]) expect(listed.find((t) => t.name === present)?.description).not.toMatch(/unavailable/);
    expect(String(await value('await tools.describe("nothere")'))).toContain("image build --with tcm-not-in-the-image");
    expect(ex.capabilities().notes.join("\n")).toMatch(/unavailable tools \(their program is not in the image\): nothere \(command 'tcm-not-in-the-image'/);
    expect(ex.capabilities().notes.join("\n")).not.toMatch(/unavailable tools.*\bgrep\b/);
  });

  it("a run that ends kills the tool's process inside the container", async () => {
    const r = await s.run("await tools.nap({})", { timeoutMs: 2_000 });
    expect(r.error?.name).toBe("TimeoutError");
    // Nothing of the call is left running inside: it is killed at the call's limit (the run's
    // deadline and the stop margin), long before sleep's own 37 s.
    const running = async () => /^sleep 37/m.test((await ex.exec(["sh", "-c", 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done'])).output);
    await waitFor(async () => !(await running()), "the tool's sleep inside the container to be killed", 25_000, 500);
  });
});
