/**
 * The runnable image ContainerExecutor starts, built locally without a registry:
 *
 *   offline (default): the host's `node` binary and the libraries `ldd` lists, `sh` (for
 *     session.exec of a string) and any host programs given with `with`, plus our guest runtime
 *     (the files of dist/ that execution/container/entry.js imports, nothing else: no compiler, no
 *     storage, no tools) — packed with `tar` and imported through the Docker API.
 *   from a base image (`from`): a Containerfile `FROM <base>` that copies the runtime in and, with
 *     `with`, installs those apt packages (the base must have `node` on PATH, and apt for `with`).
 *
 * The tag carries a hash of what goes in (node version, runtime files, options), so a changed
 * runtime gets a new image and an unchanged one is reused. Concurrent builders (parallel test
 * files) take a lock file; the one that waits finds the image built.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { chmod, copyFile, cp, mkdir, mkdtemp, open, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ContainerEngineError, ValidationError } from "../../errors.js";
import { dockerClient, describeEngine, engineError, START_ENGINE_HINT, statusOf, type DockerClient } from "./engine.js";
import type { DockerodeClient } from "./types.js";
import { BASIC_PROGRAMS, contentHash, defaultImageTag, distRoot, IMAGE_REPOSITORY, optionalHostProgram, runtimeFiles } from "./image-tag.js";

export { BASIC_PROGRAMS, defaultImageTag, distRoot, IMAGE_REPOSITORY, runtimeFiles } from "./image-tag.js";

/** Where the runtime lives inside the image. */
export const RUNTIME_DIR = "/opt/ts-code-mode";
export const ENTRY_PATH = `${RUNTIME_DIR}/dist/execution/container/entry.js`;
/** Where the offline image puts the host's node (also on PATH in base images). */
const NODE_IN_IMAGE = "/usr/local/bin/node";

export interface ImageBuildOptions {
  /** Full image reference; default IMAGE_REPOSITORY:<content hash>. */
  tag?: string;
  /** A base image with node on PATH; default: offline from the host's node. */
  from?: string;
  /** Offline: host programs to copy in (with their libraries). With `from`: apt packages to install. */
  with?: string[];
  docker?: DockerodeClient;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;
const REF_RE = /^[a-z0-9][a-z0-9._/:@-]{0,254}$/;

function checkOptions(options: ImageBuildOptions): void {
  for (const w of options.with ?? []) if (!NAME_RE.test(w)) throw new ValidationError(`image build: ${JSON.stringify(w)} is not a program or package name (letters, digits, . _ + -)`);
  for (const [what, ref] of [["--tag", options.tag], ["--from", options.from]] as const)
    if (ref !== undefined && !REF_RE.test(ref)) throw new ValidationError(`image build: ${what} ${JSON.stringify(ref)} is not an image reference (lowercase name[:tag])`);
}

/** The command that builds `tag`, for error messages. */
export function buildCommandFor(tag: string): string {
  return tag === defaultImageTag() ? "ts-code-mode image build" : `ts-code-mode image build --tag ${tag}`;
}

export async function imageExists(docker: DockerodeClient, tag: string): Promise<boolean> {
  try {
    await (await dockerClient(docker)).getImage(tag).inspect();
    return true;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    const unreachable = engineError(err);
    if (unreachable instanceof ContainerEngineError) throw unreachable;
    throw new ContainerEngineError(`the container engine at ${describeEngine()} did not answer (${err instanceof Error ? err.message : String(err)}); ${START_ENGINE_HINT}`, { cause: err });
  }
}

export interface BuiltImage {
  tag: string;
  /** false when an image with this tag was already there. */
  built: boolean;
}

/** Build the image unless it exists (under a lock, so parallel callers build it once). */
export async function buildImage(options: ImageBuildOptions = {}): Promise<BuiltImage> {
  checkOptions(options);
  const docker = await dockerClient(options.docker);
  const tag = options.tag ?? `${IMAGE_REPOSITORY}:${contentHash(options)}`;
  if (await imageExists(docker, tag)) return { tag, built: false };
  const release = await lock(tag);
  try {
    if (await imageExists(docker, tag)) return { tag, built: false };
    if (options.from) await buildFromBase(docker, tag, options.from, options.with ?? []);
    else await buildOffline(docker, tag, options.with ?? []);
    return { tag, built: true };
  } finally {
    await release();
  }
}

async function lock(tag: string): Promise<() => Promise<void>> {
  const file = path.join(os.tmpdir(), `ts-code-mode-image-${createHash("sha256").update(tag).digest("hex").slice(0, 16)}.lock`);
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      const handle = await open(file, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    // A builder that died leaves its lock: take it over when its process is gone.
    const holder = Number.parseInt(readFileSync(file, { encoding: "utf8", flag: "r" }) || "0", 10);
    if (holder > 0 && !processAlive(holder)) await rm(file, { force: true });
    if (Date.now() > deadline) throw new Error(`another image build holds ${file}; remove it if no build is running`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function copyRuntime(into: string): Promise<void> {
  const dist = distRoot();
  for (const rel of runtimeFiles(dist)) {
    const target = path.join(into, "dist", rel);
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(path.join(dist, rel), target);
  }
  await writeFile(path.join(into, "package.json"), JSON.stringify({ type: "module", private: true }) + "\n");
}

/**
 * What `image build --tools DIR` adds for the commands those tools run inside: the programs an
 * offline image lacks and this host has (`add`), and those it cannot add, with why (`skipped`).
 * With a base image (`from`), commands are apt packages' business: all are skipped with that hint.
 */
export function programsForCommands(commands: readonly string[], options: { from?: string } = {}): { add: string[]; skipped: string[] } {
  const add: string[] = [];
  const skipped: string[] = [];
  for (const command of [...new Set(commands)].sort()) {
    if (command === "node" || command === "sh" || BASIC_PROGRAMS.includes(command)) continue;
    if (!NAME_RE.test(command)) skipped.push(`${command} (a path: put it into the image yourself, or give the tool runs_on: host)`);
    else if (options.from) skipped.push(`${command} (with --from, give its apt package with --with)`);
    else if (optionalHostProgram(command) === undefined) skipped.push(`${command} (not on this host's PATH, so an offline build cannot copy it; install it here or use --from with --with)`);
    else add.push(command);
  }
  return { add, skipped };
}

/** A host program's path, or a clear error. */
function hostProgram(name: string): string {
  const found = optionalHostProgram(name);
  if (!found) throw new ValidationError(`image build: program ${JSON.stringify(name)} is not on this host's PATH (offline builds copy host programs; give --from IMAGE to install apt packages instead)`);
  return found;
}

/** Parts of a Python standard library an image leaves out: tests, GUI, installers, third-party packages. */
const STDLIB_LEFT_OUT = new Set(["site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3/tests", "unittest/test"]);

/**
 * The real interpreter behind `program` (which may be a shim) and its standard library folder, as
 * the interpreter itself reports them; null when it does not answer like a Python 3.
 */
function pythonInstall(program: string): { executable: string; stdlib: string } | null {
  const r = spawnSync(program, ["-I", "-c", "import json, sys, sysconfig; print(json.dumps([sys.executable, sysconfig.get_path('stdlib')]))"], { encoding: "utf8", timeout: 60_000 });
  try {
    const [executable, stdlib] = JSON.parse(r.stdout.trim().split("\n").pop() ?? "") as unknown[];
    if (typeof executable === "string" && typeof stdlib === "string" && path.isAbsolute(executable) && existsSync(path.join(stdlib, "os.py"))) return { executable: realpathSync(executable), stdlib: realpathSync(stdlib) };
  } catch {
    // not a Python 3 that answers
  }
  return null;
}

/** The shared libraries `ldd` lists for a binary (absolute paths). */
function librariesOf(binary: string): string[] {
  const r = spawnSync("ldd", [binary], { encoding: "utf8" });
  if (r.status !== 0) return []; // static binary or script
  return [...r.stdout.matchAll(/(\/[^\s)]+)/g)].map((m) => m[1]!).filter((p) => !p.includes("linux-vdso"));
}

async function buildOffline(docker: DockerClient, tag: string, extra: string[]): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-image-"));
  try {
    const put = async (from: string, to: string) => {
      const target = path.join(root, to);
      await mkdir(path.dirname(target), { recursive: true });
      await copyFile(from, target); // follows symlinks: the image gets the real file
    };
    const binaries: Array<[string, string]> = [[process.execPath, NODE_IN_IMAGE], [hostProgram("sh"), "/bin/sh"]];
    // The basic programs a shell command expects; those this host lacks are left out.
    for (const name of BASIC_PROGRAMS) {
      const found = optionalHostProgram(name);
      if (found) binaries.push([found, `/usr/bin/${name}`]);
    }
    for (const name of extra) {
      // A Python interpreter needs its standard library, and PATH's python3 may be a shim (pyenv's
      // is a bash script): copy the real binary and its stdlib instead of the file PATH names.
      const python = /^python3?(\.\d+)?$/.test(name) ? pythonInstall(hostProgram(name)) : null;
      if (python) {
        binaries.push([python.executable, `/usr/local/bin/${name}`]);
        await cp(python.stdlib, path.join(root, python.stdlib), { recursive: true, dereference: true, filter: (from) => !STDLIB_LEFT_OUT.has(path.relative(python.stdlib, from)) });
        for (const ext of await readdir(path.join(python.stdlib, "lib-dynload")).catch(() => [] as string[])) binaries.push([path.join(python.stdlib, "lib-dynload", ext), path.join(python.stdlib, "lib-dynload", ext)]);
      } else binaries.push([hostProgram(name), `/usr/local/bin/${name}`]);
    }
    const libs = new Set<string>();
    for (const [from, to] of binaries) {
      await put(from, to);
      for (const lib of librariesOf(from)) libs.add(lib);
    }
    for (const lib of libs) await put(lib, lib);
    for (const dir of ["tmp", "workspace", "proc", "dev", "sys", "etc", "run"]) await mkdir(path.join(root, dir), { recursive: true });
    // podman gives a tmpfs over an existing folder that folder's mode: these must be writable by any user.
    for (const dir of ["tmp", "workspace"]) await chmod(path.join(root, dir), 0o1777);
    await writeFile(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n");
    await copyRuntime(path.join(root, RUNTIME_DIR.slice(1)));
    const tar = spawn("tar", ["-C", root, "--owner=0", "--group=0", "-c", "."], { stdio: ["ignore", "pipe", "pipe"] });
    let tarErr = "";
    tar.stderr.on("data", (c: Buffer) => void (tarErr = (tarErr + c.toString()).slice(-2_000)));
    const [repo, version] = splitTag(tag);
    const stream = await docker.importImage(tar.stdout, { repo, tag: version });
    await followProgress(docker, stream);
    if (tar.exitCode === null) await new Promise((r) => tar.once("exit", r));
    if (tar.exitCode !== 0) throw new Error(`tar failed: ${tarErr}`);
    // podman ignores the tag of an import (the image arrives as repo:latest): tag it ourselves.
    if (!(await imageExists(docker, tag))) {
      const latest = docker.getImage(`${repo}:latest`);
      await latest.tag({ repo, tag: version });
      await docker.getImage(`${repo}:latest`).remove({ noprune: true }).catch(() => undefined);
    }
    if (!(await imageExists(docker, tag))) throw new Error(`the engine imported the image but ${tag} is not there`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function buildFromBase(docker: DockerClient, tag: string, base: string, apt: string[]): Promise<void> {
  const context = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-image-"));
  try {
    await copyRuntime(path.join(context, "runtime"));
    const lines = [`FROM ${base}`];
    if (apt.length) lines.push(`RUN apt-get update && apt-get install -y --no-install-recommends ${apt.join(" ")} && rm -rf /var/lib/apt/lists/*`);
    lines.push(`COPY runtime ${RUNTIME_DIR}`, "RUN mkdir -p /workspace && chmod 1777 /workspace /tmp");
    await writeFile(path.join(context, "Containerfile"), lines.join("\n") + "\n");
    const stream = await docker.buildImage({ context, src: ["Containerfile", "runtime"] }, { t: tag, dockerfile: "Containerfile" });
    await followProgress(docker, stream);
    if (!(await imageExists(docker, tag))) throw new Error(`the build of ${tag} from ${base} finished without the image`);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

function followProgress(docker: DockerClient, stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null, events: Array<{ error?: string; errorDetail?: { message?: string } }>) => {
      const failed = events?.find((e) => e.error || e.errorDetail);
      if (err) reject(err);
      else if (failed) reject(new Error(`image build failed: ${failed.error ?? failed.errorDetail?.message}`));
      else resolve();
    });
  });
}

function splitTag(ref: string): [string, string] {
  const slash = ref.lastIndexOf("/");
  const colon = ref.lastIndexOf(":");
  return colon > slash ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, "latest"];
}

