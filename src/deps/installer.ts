/**
 * Installs packages into a deps folder with npm: never through a shell, with install scripts off
 * unless the operator allows them, and with a timeout. The folder has its own package.json and
 * node_modules, apart from ts-code-mode's own.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

export interface InstallOptions {
  dir: string;
  allowScripts: boolean;
  timeoutMs: number;
  /** Called with each line npm prints, for progress. */
  onOutput?: (line: string) => void;
}

export interface InstallOutcome {
  ok: boolean;
  /** Last lines npm printed (bounded), for the error message. */
  output: string;
}

const OUTPUT_TAIL = 2_000;

/** The deps folder, ready for `npm install` (a private package.json so npm installs here). */
export async function prepareDepsDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const manifest = path.join(dir, "package.json");
  try {
    await readFile(manifest);
  } catch {
    await writeFile(manifest, `${JSON.stringify({ name: "ts-code-mode-deps", private: true, description: "Packages installed for agent code by ts-code-mode" }, null, 2)}\n`);
  }
}

export async function npmInstall(specs: string[], options: InstallOptions): Promise<InstallOutcome> {
  await prepareDepsDir(options.dir);
  const args = ["install", "--save", "--no-audit", "--no-fund", "--loglevel=error", ...(options.allowScripts ? [] : ["--ignore-scripts"]), "--", ...specs];
  return new Promise((resolve) => {
    let tail = "";
    const child = spawn("npm", args, { cwd: options.dir, shell: false, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
    const onData = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      tail = (tail + text).slice(-OUTPUT_TAIL);
      if (options.onOutput) for (const line of text.split("\n")) if (line.trim()) options.onOutput(line);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const timer = setTimeout(() => {
      tail += `\n(npm install did not finish within ${options.timeoutMs} ms and was stopped)`;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ ok: false, output: `could not run npm: ${err.message}` });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ ok: code === 0, output: tail.trim() });
    });
  });
}
