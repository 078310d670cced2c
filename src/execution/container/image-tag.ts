/**
 * The default image's tag: a hash of the guest runtime's files, this node and the build options
 * (image.ts builds it). Apart from image.ts so that ContainerExecutor's constructor and `image`
 * getter, and the package's `defaultImageTag`, answer without loading the image builder (issue 42:
 * importing the package loads no container code beyond this).
 */
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ValidationError } from "../../errors.js";
import type { ImageBuildOptions } from "./image.js";

export const IMAGE_REPOSITORY = "localhost/ts-code-mode-runtime";


/** dist/ of this package (the built copy when running from the TypeScript sources, as tests do). */
export function distRoot(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js")) return path.resolve(path.dirname(here), "..", "..");
  return path.resolve(path.dirname(here), "..", "..", "..", "dist");
}

/** The dist files the guest runtime needs: entry.js and what it imports, relatively, transitively. */
export function runtimeFiles(dist = distRoot()): string[] {
  const entry = path.join(dist, "execution", "container", "entry.js");
  if (!existsSync(entry)) throw new ValidationError(`the container runtime is not built (${entry} is missing); run \`npm run build\` first`);
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    // `import … from "./x"`, `export … from "./x"`, a bare `import "./x"` (a chunk run for its side
    // effects, as the bundler emits when nothing of it is named) and `import("./x")`.
    for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']|(?:^|\n)\s*import\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec) visit(path.resolve(path.dirname(file), spec));
    }
  };
  visit(entry);
  return [...seen].sort().map((f) => path.relative(dist, f));
}

/** Copied into the offline image when the host has them (coreutils, grep, sed, findutils). */
export const BASIC_PROGRAMS = ["cat", "chmod", "cp", "cut", "date", "echo", "env", "false", "find", "grep", "head", "id", "ls", "mkdir", "mv", "pwd", "rm", "sed", "sha256sum", "sleep", "sort", "tail", "touch", "tr", "true", "uname", "uniq", "wc", "xargs"];

/** The image ContainerExecutor uses when given none: the hash of this runtime, this node, default options. */
export function defaultImageTag(): string {
  return `${IMAGE_REPOSITORY}:${contentHash({})}`;
}

export function contentHash(options: ImageBuildOptions): string {
  const h = createHash("sha256");
  const dist = distRoot();
  h.update(`v4\0${BASIC_PROGRAMS.map((p) => optionalHostProgram(p) ?? "-").join(",")}\0${process.version}\0${process.arch}\0${options.from ?? "offline"}\0${(options.with ?? []).join(",")}\0`);
  for (const rel of runtimeFiles(dist)) h.update(`${rel}\0`).update(readFileSync(path.join(dist, rel))).update("\0");
  return h.digest("hex").slice(0, 16);
}

export function optionalHostProgram(name: string): string | undefined {
  // A PATH search, not `command -v`: a shell answers "echo" for its builtin instead of /usr/bin/echo.
  for (const dir of (process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(path.delimiter)) {
    if (!dir.startsWith("/")) continue;
    const full = path.join(dir, name);
    try {
      accessSync(full, constants.X_OK);
      return full;
    } catch {
      // not here
    }
  }
  return undefined;
}
