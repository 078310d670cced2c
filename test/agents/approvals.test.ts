/**
 * Approvals through the runtime: approve_all, reject_all (the model is told why), prompt answered
 * by the embedding API (once, for the session, edited arguments, rejected with a reason), prompt
 * with no one to ask, agent calls needing approval by default, and permission errors made fatal.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent, PermissionDeniedError, type AgentApprovalRequest } from "../../src/index.js";
import { removeProject, writeProject } from "./project.js";
import { scripted, toolResults } from "./scripted.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await removeProject(d);
});
async function writer(config: Record<string, unknown>): Promise<string> {
  const dir = await writeProject([{ name: "main", tools: ["filesystem_project"] }], config);
  dirs.push(dir);
  return dir;
}
const write = (content: string) => ({ tool: "write_file", args: { path: "out.txt", content } });
const read = (dir: string) => readFile(path.join(dir, "out.txt"), "utf8").catch(() => null);

describe("approvals", () => {
  it("approve_all runs calls that need approval", async () => {
    const dir = await writer({ approval_mode: "approve_all" });
    const model = scripted([write("yes"), { text: "ok" }]);
    await runAgent(dir, "go", { model });
    expect(await read(dir)).toBe("yes");
  });

  it("reject_all does not run them and tells the model why", async () => {
    const dir = await writer({ approval_mode: "reject_all" });
    const model = scripted([write("no"), { text: "ok" }]);
    const result = await runAgent(dir, "go", { model });
    expect(await read(dir)).toBeNull();
    expect(toolResults(model.prompts[1])[0]).toMatch(/^Tool call write_file was not run: approval mode is reject_all/);
    expect(result.events.some((e) => e.event.type === "approval" && !e.event.approved)).toBe(true);
  });

  it("the runtime option overrides the project's mode (--approve-all)", async () => {
    const dir = await writer({ approval_mode: "reject_all" });
    await runAgent(dir, "go", { model: scripted([write("cli"), { text: "ok" }]), approvalMode: "approve_all" });
    expect(await read(dir)).toBe("cli");
  });

  it("prompt: approve once asks again for the same call; approve for the session does not", async () => {
    const dir = await writer({ approval_mode: "prompt" });
    const asked: AgentApprovalRequest[] = [];
    const once = scripted([write("a"), write("a"), { text: "ok" }]);
    await runAgent(dir, "go", { model: once, onApproval: (r) => (asked.push(r), { kind: "approve" }) });
    expect(asked).toHaveLength(2);
    expect(asked[0]).toEqual({ agent: "main", depth: 0, tool: "write_file", args: { path: "out.txt", content: "a" } });

    asked.length = 0;
    const session = scripted([write("b"), write("b"), write("c"), { text: "ok" }]);
    await runAgent(dir, "go", { model: session, onApproval: (r) => (asked.push(r), { kind: "approve_session" }) });
    // Same tool and arguments: asked once; different arguments: asked again.
    expect(asked.map((r) => (r.args as { content: string }).content)).toEqual(["b", "c"]);
    expect(await read(dir)).toBe("c");
  });

  it("prompt: edited arguments are validated and run instead", async () => {
    const dir = await writer({ approval_mode: "prompt" });
    const model = scripted([write("model's"), write("again"), { text: "ok" }]);
    let n = 0;
    await runAgent(dir, "go", {
      model,
      onApproval: () => (++n === 1 ? { kind: "edit", args: { path: "out.txt", content: "human's" } } : { kind: "edit", args: { path: 7 } }),
    });
    expect(await read(dir)).toBe("human's");
    expect(toolResults(model.prompts[2]).at(-1)).toMatch(/edited arguments are not valid for write_file/);
  });

  it("prompt: a rejection's reason reaches the model", async () => {
    const dir = await writer({ approval_mode: "prompt" });
    const model = scripted([write("x"), { text: "ok" }]);
    await runAgent(dir, "go", { model, onApproval: () => ({ kind: "reject", reason: "not in this folder" }) });
    expect(await read(dir)).toBeNull();
    expect(toolResults(model.prompts[1])[0]).toMatch(/the user rejected it: not in this folder/);
  });

  it("prompt with no terminal and no onApproval rejects, saying how to allow it", async () => {
    const dir = await writer({ approval_mode: "prompt" });
    const model = scripted([write("x"), { text: "ok" }]);
    await runAgent(dir, "go", { model });
    expect(await read(dir)).toBeNull();
    expect(toolResults(model.prompts[1])[0]).toMatch(/no one can approve it.*--approve-all/);
  });

  it("permission_errors fatal ends the run instead of telling the model", async () => {
    const dir = await writer({ approval_mode: "reject_all", permission_errors: "fatal" });
    const model = scripted([write("x"), { text: "never" }]);
    await expect(runAgent(dir, "go", { model })).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(model.prompts).toHaveLength(1);
  });

  it("calling another agent needs approval by default; read-only tools do not; overrides change either", async () => {
    const dir = await writeProject([{ name: "main", tools: ["helper", "filesystem_project"] }, { name: "helper" }], { approval_mode: "prompt" }, { "a.txt": "A" });
    dirs.push(dir);
    const asked: string[] = [];
    const main = scripted([{ tool: "read_file", args: { path: "a.txt" } }, { tool: "helper", args: { input: "hi" } }, { text: "ok" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : scripted([{ text: "hello" }])), onApproval: (r) => (asked.push(r.tool), { kind: "approve" }) });
    expect(asked).toEqual(["helper"]);
    expect(toolResults(main.prompts[2])).toEqual(["A", "hello"]);

    const overridden = await writeProject([{ name: "main", tools: ["filesystem_project"] }], {
      approval_mode: "prompt",
      overrides: { main: { needs_approval: { read_file: true, write_file: false } } },
    }, { "a.txt": "A" });
    dirs.push(overridden);
    asked.length = 0;
    await runAgent(overridden, "go", {
      model: scripted([{ tool: "read_file", args: { path: "a.txt" } }, write("free"), { text: "ok" }]),
      onApproval: (r) => (asked.push(r.tool), { kind: "approve" }),
    });
    expect(asked).toEqual(["read_file"]);
    expect(await read(overridden)).toBe("free");
  });
});
