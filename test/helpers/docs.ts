/** README.md's and docs/'s text, for tests that check what the docs tell users against what runs. */
import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { MAIN, REPO } from "../cli/harness.js";

/** The whole text of a document of the repository, e.g. `docs/agents.md`. */
export async function readDoc(doc: string): Promise<string> {
  return readFile(path.join(REPO, doc), "utf8");
}

/** The text of the `## <title>` section of a document, up to the next `## ` heading. */
export async function docSection(doc: string, title: string): Promise<string> {
  const text = await readDoc(doc);
  const start = text.indexOf(`\n## ${title}\n`);
  expect(start, `${doc} has a '## ${title}' section`).toBeGreaterThan(-1);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The text of README.md's `## <title>` section, up to the next `## ` heading. */
export async function readmeSection(title: string): Promise<string> {
  return docSection("README.md", title);
}

/**
 * The body of the shell block of `doc` whose marker line names `test` (`<!-- docs: run by <test> -->`),
 * the `n`th such block when there are several.
 */
export async function markedShellBlock(doc: string, test: string, n = 0): Promise<string> {
  const marker = `<!-- docs: run by ${test} -->\n`;
  const bodies = [...(await readDoc(doc)).matchAll(/^<!-- docs: run by (\S+) -->\n```(?:sh|bash|shell|console)\n([\s\S]*?)^```$/gm)].filter((m) => `<!-- docs: run by ${m[1]} -->\n` === marker).map((m) => m[2]!);
  expect(bodies.length, `${doc} has a shell block marked ${marker.trim()}`).toBeGreaterThan(n);
  return bodies[n]!;
}

/**
 * Runs a docs shell block as written with `bash -euo pipefail` in `cwd`, with `ts-code-mode` on PATH
 * as this checkout's built CLI (what `npm link` gives a user). Resolves with the exit code and output.
 */
export async function runDocShell(script: string, options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = path.join(options.cwd, ".docs-bin");
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, "ts-code-mode"), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
  await chmod(path.join(bin, "ts-code-mode"), 0o755);
  const env = { ...process.env, ...options.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The commands of a shell block: continuation lines joined, comments and blank lines dropped. */
export function docCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

/** A command line's words as bash splits them (quotes removed, `$(...)` and `$VAR` expanded in `env`). */
export async function shellWords(line: string, options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<string[]> {
  const { stdout } = await promisify(execFile)("bash", ["-c", `printf '%s\\0' ${line}`], { cwd: options.cwd, env: options.env });
  return stdout.split("\0").slice(0, -1);
}
