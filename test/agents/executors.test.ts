/**
 * Agents on any executor (project.json `code_mode.executor`: container, Python, remote, ...) and
 * sampling inside an agent: a toolable tool's sampling request made by the agent's run_code is
 * answered by that agent's model, counted in its usage, and can be put under approval.
 * Real parts throughout: podman for the container, CPython, a `serve` process for remote.
 */
import path from "node:path";
import { writeFile, mkdir } from "node:fs/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createRuntime, type AgentSpec } from "../../src/index.js";
import { loadProject } from "../../src/agents/files.js";
import { ensureTestImage } from "../helpers/container.js";
import { startServe, TOKEN, ensureBuilt, type ServeProcess } from "../server/harness.js";
import { PYTOOL } from "../tools/toolable/fixture.js";
import { projectsRemovedAfterEach } from "./project.js";
import { scripted, toolResults } from "./scripted.js";

const project = projectsRemovedAfterEach(afterEach);

/** One agent with run_code whose model runs `code` once, then answers with the tool's result. */
async function runCodeOnce(codeMode: Record<string, unknown>, code: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const dir = await project([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", ...codeMode } });
  const model = scripted([{ tool: "run_code", args: { code } }, { text: "done" }]);
  const runtime = await createRuntime(dir, { model, ...(env ? { env } : {}) });
  await runtime.run("go");
  return toolResults(model.prompts[1]).join("\n");
}

describe("agents on every executor", () => {
  it("container: run_code runs inside the session's container", async () => {
    const image = await ensureTestImage();
    const out = await runCodeOnce({ executor: "container", image }, "require('node:os').hostname()");
    const { hostname } = await import("node:os");
    expect(out).toMatch(/--- value ---\n\S+/);
    expect(out).not.toContain(hostname());
  }, 180_000);

  it("container: the shell toolset runs in the container and the model reads the command's output", async () => {
    const image = await ensureTestImage();
    const dir = await project([{ name: "main", tools: ["shell"] }], { code_mode: { base: ".code-mode", executor: "container", image } });
    const model = scripted([{ tool: "shell", args: { argv: ["sh", "-c", "echo out-line; echo err-line >&2; exit 3"] } }, { text: "done" }]);
    await (await createRuntime(dir, { model })).run("go");
    // The container's exec answers { output, exitCode, truncated }: the output was lost when read as stdout/stderr.
    expect(toolResults(model.prompts[1])).toEqual([expect.stringMatching(/^exit code 3\n(out-line\nerr-line|err-line\nout-line)\n?$/)]);
  }, 180_000);

  it("container: code_mode workspace_dir and mounts give run_code and shell_readonly the same files (issue 32.2)", async () => {
    const image = await ensureTestImage();
    const dir = await project([{ name: "main", tools: ["code", "shell_readonly"] }], { code_mode: { base: ".code-mode", executor: "container", image, workspace_dir: "work", mounts: ["data:/data:ro"] } });
    await mkdir(path.join(dir, "work"));
    await mkdir(path.join(dir, "data"));
    await writeFile(path.join(dir, "data", "in.txt"), "mounted");
    const { chown, chmod } = await import("node:fs/promises");
    await chmod(dir, 0o755);
    await chown(path.join(dir, "work"), 65534, 65534);
    const work = path.join(dir, "work");
    const code = `const fs = require("node:fs"); fs.writeFileSync(${JSON.stringify(work)} + "/out.txt", fs.readFileSync("/data/in.txt", "utf8") + " and written"); process.cwd()`;
    const model = scripted([{ tool: "run_code", args: { code } }, { tool: "shell_readonly", args: { command: "cat out.txt" } }, { text: "done" }]);
    const runtime = await createRuntime(dir, { model });
    await runtime.run("go");
    const results = toolResults(model.prompts[2]).join("\n");
    expect(results).toContain(work);
    expect(results).toContain("mounted and written");
    const { readFile } = await import("node:fs/promises");
    expect(await readFile(path.join(work, "out.txt"), "utf8")).toBe("mounted and written");
  }, 240_000);

  it("python (CPython): run_code takes Python", async () => {
    const out = await runCodeOnce({ executor: "subprocess", language: "python" }, "import sys\nsys.version_info[0] * 14");
    expect(out).toContain("42");
  }, 60_000);

  describe("remote", () => {
    let server: ServeProcess;
    afterAll(async () => {
      await server?.stop();
    });

    it("remote: run_code runs on a `serve` server, with the token read from the variable token_env names", async () => {
      await ensureBuilt();
      const serverBase = path.join(await project([{ name: "unused" }]), "server-store");
      server = await startServe(["--token", TOKEN, "--base", serverBase]);
      const out = await runCodeOnce(
        { executor: "remote", remote: { url: server.url, token_env: "AGENT_TEST_TOKEN" } },
        "await artifacts.save('from-agent.txt', 'hi'); process.pid",
        { ...process.env, AGENT_TEST_TOKEN: TOKEN },
      );
      expect(out).toContain("--- value ---");
      const pid = Number(/--- value ---\n(\d+)/.exec(out)?.[1]);
      expect(pid).toBeGreaterThan(0);
      expect(pid).not.toBe(process.pid);
      // The server's storage got the artifact: the code ran there.
      const { readdir } = await import("node:fs/promises");
      expect(await readdir(path.join(serverBase, "artifacts"))).toContain("from-agent.txt");
    }, 120_000);
  });

  it("refuses executor keys where they would be ignored, naming project.json and the key", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ executor: "subprocess", image: "x" }, /image applies to executor "container" only/],
      [{ executor: "subprocess", workspace_dir: "w" }, /workspace_dir applies to executor "container" only/],
      [{ executor: "sandbox", mounts: ["a:/a"] }, /mounts applies to executor "container" only/],
      [{ executor: "container", engine: "deno" }, /engine applies to executor "sandbox" only/],
      [{ executor: "in-process", language: "python" }, /language "python" runs with executor "subprocess"/],
      [{ executor: "remote" }, /executor "remote" needs remote/],
      [{ executor: "remote", remote: { url: "ftp://x" } }, /http:\/\/ or https:\/\//],
      [{ executor: "warp" }, /executor/],
    ];
    for (const [codeMode, message] of cases) {
      const dir = await project([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", ...codeMode } });
      await expect(loadProject(dir)).rejects.toThrow(message);
    }
  });

  it("container: workspace_dir and mounts are checked as --workspace-dir and --mount are", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ mounts: ["nowhere:/data"] }, /project\.json:1: code_mode: mounts\[0\] "nowhere": .*nowhere does not exist/],
      [{ mounts: [".:data"] }, /DST must be an absolute path inside the container/],
      [{ mounts: [".:/data:rx"] }, /the mode must be ro or rw/],
      [{ workspace_dir: "missing" }, /workspace_dir "missing": .*missing does not exist/],
    ];
    for (const [extra, message] of cases) {
      const dir = await project([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", executor: "container", image: "localhost/none:1", ...extra } });
      const model = scripted([{ tool: "run_code", args: { code: "1" } }, { text: "done" }]);
      const runtime = await createRuntime(dir, { model });
      await expect(async () => {
        await runtime.run("go");
        throw new Error(toolResults(model.prompts[1]).join("\n"));
      }).rejects.toThrow(message);
    }
  }, 60_000);

  it("remote: an agent that calls agents from its code is refused when the project loads, naming the file and line (agents.* cannot be called back from a serve server)", async () => {
    const dir = await project([{ name: "main", tools: ["code"], agents: ["helper"] }, { name: "helper" }], { code_mode: { base: ".code-mode", executor: "remote", remote: { url: "http://127.0.0.1:9" } } });
    const refused = await loadProject(dir).then(() => null, (err: unknown) => err as Error);
    expect(refused?.name).toBe("ValidationError");
    expect(refused?.message).toMatch(/main\.agent\.md:\d+: agents: agents\.\* needs a local executor: with code_mode executor "remote"/);
    // The same project on a local executor loads.
    const local = await project([{ name: "main", tools: ["code"], agents: ["helper"] }, { name: "helper" }], { code_mode: { base: ".code-mode", executor: "subprocess" } });
    await expect(loadProject(local)).resolves.toBeDefined();
  });

  it("remote: a missing token variable is an error naming it, before any request", async () => {
    const dir = await project([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", executor: "remote", remote: { url: "http://127.0.0.1:9", token_env: "SURELY_UNSET_TOKEN_VAR" } } });
    const model = scripted([{ tool: "run_code", args: { code: "1" } }, { text: "done" }]);
    const runtime = await createRuntime(dir, { model, env: {} });
    delete process.env["SURELY_UNSET_TOKEN_VAR"];
    await runtime.run("go");
    expect(toolResults(model.prompts[1]).join("\n")).toMatch(/code_mode\.remote: the environment variable SURELY_UNSET_TOKEN_VAR .* is not set/);
  });
});

describe("sampling inside an agent", () => {
  async function samplingProject(config: Record<string, unknown> = {}): Promise<string> {
    const dir = await project([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", executor: "subprocess" }, ...config });
    await mkdir(path.join(dir, ".code-mode", "tools"), { recursive: true });
    await writeFile(path.join(dir, ".code-mode", "tools", "py.yaml"), `type: toolable\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\ndiscover_timeout: 60\n`);
    return dir;
  }

  it("a toolable tool's sampling request from run_code is answered by the agent's own model and counted in its usage", async () => {
    const dir = await samplingProject();
    // Request 1: the agent calls run_code. Request 2: the tool's sampling request. Request 3: the answer.
    const model = scripted([{ tool: "run_code", args: { code: "await tools.py.ask({ question: '2+2?' })" } }, { text: "four, said the model" }, { text: "done" }]);
    const runtime = await createRuntime(dir, { model: (a: AgentSpec) => (a.name === "main" ? model : undefined) });
    const result = await runtime.run("go");
    expect(toolResults(model.prompts[2]).join("\n")).toContain("four, said the model");
    // The sampling request reached the model with the tool's prompt and system prompt.
    expect(JSON.stringify(model.prompts[1]!.prompt)).toContain("2+2?");
    expect(JSON.stringify(model.prompts[1]!.prompt)).toContain("Be brief");
    expect(result.usage.agents["main"]!.requests).toBe(3);
    const sampling = result.events.filter((e) => e.event.type !== "model_request" && e.event.type !== "model_response" && "tool" in e.event && e.event.tool === "sampling");
    expect(sampling.map((e) => e.event.type)).toEqual(["tool_call", "tool_result"]);
  }, 60_000);

  it("needs_approval.sampling puts it under the agent's approval policy: rejected, the tool sees a refusal and the model is not asked", async () => {
    const dir = await samplingProject({ approval_mode: "reject_all", overrides: { main: { needs_approval: { sampling: true } } } });
    const model = scripted([{ tool: "run_code", args: { code: "let r; try { r = await tools.py.ask({ question: '2+2?' }) } catch (e) { r = 'refused: ' + e.message } r" } }, { text: "done" }]);
    const runtime = await createRuntime(dir, { model });
    const result = await runtime.run("go");
    const out = toolResults(model.prompts[1]).join("\n");
    expect(out).toMatch(/refused: .*reject_all/s);
    expect(result.usage.agents["main"]!.requests).toBe(2);
    expect(result.events.some((e) => e.event.type === "approval" && e.event.tool === "sampling" && !e.event.approved)).toBe(true);
  }, 60_000);
});
