/**
 * ContainerExecutor: the agent's code runs in a container started through the Docker Engine API
 * (Docker, podman, or a remote engine; see engine.ts), with nothing to steal inside: storage,
 * tools and middleware stay on the host, exactly as with the subprocess executor. The container
 * runs only the guest runtime (the subprocess child's, ../subprocess/guest-runtime.ts) and every
 * namespace call crosses the one RpcProvider over a unix socket bind-mounted into a container
 * that has no network. The socket was chosen over the container's attach stream: it needs no
 * stdio demultiplexing, works the same on every engine, and leaves stderr for V8's crash reports.
 *
 * The policy (timeouts, crashes, restarts, streaming, refusing calls outside a run) is the
 * subprocess executor's, driven with a launcher that starts containers (guest.ts).
 *
 * Locked-down defaults: network "none", CapDrop ALL, no-new-privileges, read-only root with tmpfs
 * /tmp and workdir, pids/memory/CPU limits, `Init: true` (a stop takes ~0.1 s instead of 2 s),
 * user nobody, labels for cleanup (close() removes its containers; start() reaps those of dead
 * hosts; `ts-code-mode containers prune` removes them by hand).
 */
import path from "node:path";
import type Docker from "dockerode";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { ValidationError } from "../../errors.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { ToolMiddleware } from "../../tools/middleware/types.js";
import type { ToolableHostOptions } from "../../tools/adapters/toolable/host.js";
import { ToolRegistry } from "../../tools/registry.js";
import { SkillLibrary } from "../../skills/library.js";
import { toolsOption, type CodeToolSet, type CodeToolsInput } from "../../tools/code/tool-set.js";
import type { SearchOptions } from "../../search/config.js";
import type { HostServices, SkillRunner } from "../host.js";
import type { CallContext, CommandPlace } from "../../tools/protocol.js";
import { baseOptionsShape, parseOptions } from "../options.js";
import type { CapabilityReport, ExecutionResult, Executor, RunOptions } from "../protocol.js";
import { SubprocessExecutor } from "../subprocess/executor.js";
import { admitRun } from "../admit.js";
import { errorResult } from "../result.js";
import type { GuestHandle, SpawnOptions } from "../subprocess/child-process.js";
import type { DockerClient } from "./engine.js";
import type { ArgvRunOptions, ArgvRunResult, DockerodeClient, ExecOptions, ExecResult, ProgramLauncher } from "./types.js";
import type { ContainerGuest } from "./guest.js";
import { defaultImageTag } from "./image-tag.js";

type Runtime = typeof import("./runtime.js");
let runtime: Promise<Runtime> | undefined;
/** The container machinery, loaded on the first start (runtime.ts says why), once per process. */
const loadRuntime = (): Promise<Runtime> => (runtime ??= import("./runtime.js"));

export interface ContainerMount {
  /** Host path (absolute). */
  source: string;
  /** Path inside the container (absolute). */
  target: string;
  /** Default true. */
  readOnly?: boolean;
}

export interface ContainerExecutorOptions {
  /** Image to run; default the one `ts-code-mode image build` makes for this version. */
  image?: string;
  /** A dockerode client; default from DOCKER_HOST, else podman's or Docker's socket. */
  docker?: DockerodeClient;
  toolsPath?: string;
  /**
   * Tools defined in code (as for SubprocessExecutor: `[defineTool(...)]`, `{ weather: tool(...) }`,
   * ...); they run on the host, never in the container. Or a ready registry, which wins over
   * toolsPath; the `shell` tool is registered into it (unless shell: false).
   */
  tools?: ToolRegistry | CodeToolsInput;
  middleware?: ToolMiddleware[];
  search?: SearchOptions;
  maxInFlightBytes?: number;
  /** `type: toolable` tools: `sampler` answers their sampling requests (over stdin inside the container), `onEvent` gets their events. */
  toolable?: ToolableHostOptions;
  /** Read-only folders of Agent Skills, merged after the storage's skills. */
  skillRoots?: string[];
  /** "none" (default): no network at all, only loopback. "bridge": the engine's default network. */
  network?: "none" | "bridge";
  /** Memory cap of the container (no swap); default 512. */
  memoryMb?: number;
  /** CPU cap; default 1. */
  cpus?: number;
  /** Processes/threads the container may have; default 256. */
  pidsLimit?: number;
  /** Default true: the image's filesystem cannot be written; /tmp and the workdir are tmpfs. */
  readOnlyRootfs?: boolean;
  /** Host folders to mount (read-only unless readOnly: false). */
  mounts?: ContainerMount[];
  /** A host folder mounted read-write at the SAME path inside and used as the workdir, so paths mean the same inside and out. */
  workspace?: string;
  /** The guest's environment: nothing of the host's is passed. */
  env?: Record<string, string>;
  /** Working directory inside; default the workspace, else /workspace (a tmpfs). */
  workdir?: string;
  /** User inside the container; default "65534:65534" (nobody). */
  user?: string;
  /**
   * How programs run for the host (CLI and toolable tools, skill scripts, runArgv): "runner"
   * (default) through one resident process per container, so a call costs a spawn there; "exec":
   * one engine exec per program (slower; for engines whose long-lived execs misbehave).
   */
  commandRunner?: ProgramLauncher;
  /** Register the `shell` tool (tools.shell.exec) and allow session.exec; default true. */
  shell?: boolean;
  defaultTimeoutMs?: number;
  /** How long a container may take to start and report ready; default 30 s. */
  startupTimeoutMs?: number;
}

const absolute = lazy(() => z.string().startsWith("/", "must be an absolute path").max(4_096).refine((p) => !p.includes("\0"), "must not contain NUL"));

const optionsShape = lazy(() => ({
  ...baseOptionsShape,
  image: z.string().regex(/^[a-z0-9][a-z0-9._/:@-]{0,254}$/, "must be an image reference like localhost/name:tag").optional(),
  docker: z.custom<DockerodeClient>((v) => typeof v === "object" && v !== null && typeof (v as { createContainer?: unknown }).createContainer === "function", "must be a dockerode client").optional(),
  network: z.enum(["none", "bridge"], { error: 'must be "none" or "bridge"' }).optional(),
  memoryMb: z.number().int().min(32, "must be at least 32 MB").max(1_048_576).optional(),
  cpus: z.number().positive().max(1_024).optional(),
  pidsLimit: z.number().int().min(8, "must be at least 8").max(1_000_000).optional(),
  readOnlyRootfs: z.boolean().optional(),
  mounts: z.array(z.strictObject({ source: absolute, target: absolute, readOnly: z.boolean().optional() })).max(64).optional(),
  workspace: absolute.optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "names must be letters, digits and _"), z.string().refine((v) => !v.includes("\0"), "must not contain NUL")).optional(),
  workdir: absolute.optional(),
  user: z.string().regex(/^\d+(:\d+)?$/, 'must be "uid" or "uid:gid" (numbers)').optional(),
  shell: z.boolean().optional(),
  commandRunner: z.enum(["runner", "exec"], { error: 'must be "runner" or "exec"' }).optional(),
  startupTimeoutMs: z.number().int().min(100).max(600_000).optional(),
}));

/** Inside: prints the JSON list of the argv's commands that are not executable files on PATH (or at their path). */
const MISSING_COMMANDS_PROBE = `const fs = require("node:fs"), path = require("node:path");
const dirs = (process.env.PATH || "/usr/local/bin:/usr/bin:/bin").split(":").filter((d) => d.startsWith("/"));
const ok = (f) => { try { fs.accessSync(f, fs.constants.X_OK); return fs.statSync(f).isFile(); } catch { return false; } };
console.log(JSON.stringify(process.argv.slice(1).filter((c) => (c.includes("/") ? !ok(path.resolve(c)) : !dirs.some((d) => ok(path.join(d, c)))))));`;

/** Where a container session's skills are, read-only: /skills/<name>/SKILL.md and its files. */
export const SKILLS_DIR = "/skills";

/**
 * The folders on disk of the skills the session has when it starts (the storage's, then the skill
 * roots', a later one winning a name, as the catalog merges them); skills kept elsewhere (Redis)
 * have none and are read through skills.* only.
 */
async function skillFolders(storage: StorageBackend, roots: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const s of await new SkillLibrary(storage.skills, { roots }).list().catch(() => [])) {
    if (path.isAbsolute(s.location) && path.basename(s.location) === "SKILL.md") out.set(s.name, path.dirname(s.location));
  }
  return out;
}

export const CONTAINER_DEFAULTS = { network: "none", memoryMb: 512, cpus: 1, pidsLimit: 256, user: "65534:65534", workdir: "/workspace", startupTimeoutMs: 30_000 } as const;

export class ContainerExecutor implements Executor {
  readonly kind = "container";
  /** It exists to contain the code: workflows it saves are recorded as untrusted. */
  readonly trust = "untrusted" as const;
  readonly runsPreludes = true;
  private readonly options: z.infer<z.ZodObject<typeof optionsShape>>;
  private readonly registry: ToolRegistry | undefined;
  private readonly codeTools: CodeToolSet | undefined;
  private inner: SubprocessExecutor | null = null;
  private current: ContainerGuest | null = null;
  private starting: Promise<void> | null = null;
  private closed = false;
  private place: CommandPlace | null = null;
  /** Skill folders on disk by name, mounted read-only at /skills/<name> (skillFolders). */
  private skillDirs = new Map<string, string>();
  /** Tools whose program the image lacks, with the fix (markMissingCommands). */
  private unavailable: string[] = [];
  /** Host files of toolable tools, mounted read-only at the same paths (registry.hostFiles). */
  private toolFiles: string[] = [];

  constructor(options: ContainerExecutorOptions = {}) {
    const { tools, ...rest } = options;
    this.options = parseOptions(optionsShape, rest, "ContainerExecutor");
    ({ registry: this.registry, codeTools: this.codeTools } = toolsOption(tools, "ContainerExecutor({ tools })"));
  }

  get image(): string {
    return this.options.image ?? defaultImageTag();
  }

  get host(): HostServices | null {
    return this.inner?.host ?? null;
  }

  /**
   * Where this session runs commands: its container (CLI and toolable tools, skill scripts; an
   * agent's shell_readonly). Null until started.
   */
  get commandPlace(): CommandPlace | null {
    return this.closed ? null : this.place;
  }

  /** Id of the container running now, if any (tests look it up in the engine). */
  get containerId(): string | undefined {
    return this.current?.isAlive ? this.current.handle?.id : undefined;
  }

  private get workdir(): string {
    return this.options.workdir ?? this.options.workspace ?? CONTAINER_DEFAULTS.workdir;
  }

  private get memoryMb(): number {
    return this.options.memoryMb ?? CONTAINER_DEFAULTS.memoryMb;
  }

  capabilities(): CapabilityReport {
    const network = this.options.network ?? CONTAINER_DEFAULTS.network;
    return {
      capabilities: ["timeout", "processIsolation", "memoryLimit", "reset", "filesystemIsolation", ...(network === "none" ? (["networkIsolation"] as const) : [])],
      notes: [
        "timeout: synchronous code before the first await is interrupted and variables are kept; any other runaway code is stopped by removing the container and starting a fresh one, which loses variables.",
        `memoryLimit: the container's memory is capped at ${this.memoryMb} MB (no swap); going over it kills the guest (exit 137), reported as MemoryLimitError when the engine (State.OOMKilled) or the kernel's log confirms the cap's OOM kill — any other exit 137 (a SIGKILL, process.exit(137)) is an ExecutorCrashError naming the exit code — and a fresh container runs the next code.`,
        "processIsolation: the code runs in its own container; a crash or process.exit() ends only it, and the next run gets a fresh container.",
        network === "none" ? "networkIsolation: the container has no network (only loopback); it reaches the host through one unix socket that carries only namespace calls." : "No network isolation: network is \"bridge\", the container may open connections.",
        "tools: command-line tools (type: cli), toolable executables and skill scripts run inside this container, as the container's user (started by one resident runner process there, not an engine exec each), and see exactly its files (a toolable executable's own files are mounted read-only at their host paths; its YAML env enters the container with it); MCP and HTTP tools run on the host (their credentials never enter the container). A cli or toolable tool whose YAML says runs_on: host runs on the host and sees the host's files (its description says so).",
        `filesystemIsolation: the container sees only its image${this.options.readOnlyRootfs === false ? "" : " (read-only)"}, tmpfs /tmp and workdir${this.options.workspace ? `, the workspace ${this.options.workspace} (read-write)` : ""}${this.options.mounts?.length ? ", the mounts given" : ""}${this.skillDirs.size ? `, the skills (read-only at ${SKILLS_DIR}/<name>)` : ""}${this.toolFiles.length ? " and the files of its toolable executables (read-only, at their host paths)" : ""}; storage, tools and credentials stay on the host.`,
        ...(this.unavailable.length ? [`unavailable tools (their program is not in the image): ${this.unavailable.join("; ")}`] : []),
        "Between runs the container is not paused: code left running inside may go on, but cannot call the host (calls outside a run are refused).",
        "deps: packages cannot be installed at runtime (no depsInstall); put them in the image.",
        "Containers carry the label io.ts-code-mode; close() removes them, start() removes those left by a host process that died, `ts-code-mode containers prune` removes them by hand.",
      ],
    };
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.closed) throw new ValidationError("ContainerExecutor is closed; create a new one");
    this.starting ??= this.startNow(storage);
    try {
      await this.starting;
    } catch (err) {
      this.starting = null;
      throw err;
    }
  }

  private async startNow(storage: StorageBackend): Promise<void> {
    const rt = await loadRuntime();
    const docker = await rt.dockerClient(this.options.docker);
    const image = this.image;
    const [exists] = await Promise.all([rt.imageExists(docker, image), rt.reapOrphans(docker).catch(() => 0)]);
    if (!exists) throw new ValidationError(`the container image ${image} is missing; build it with: ${rt.buildCommandFor(image)}`);
    // The sampler and event listener of toolable tools hold for this registry as for one loaded later.
    const registry = this.registry ?? (await ToolRegistry.load(this.options.toolsPath, this.options.toolable ? { toolable: this.options.toolable } : {}));
    if (this.codeTools && registry !== this.registry) await this.codeTools.registerInto(registry);
    if (this.options.shell !== false) registry.register(new rt.ShellAdapter((command, options) => this.execNow(command, options)));
    // Toolable executables run inside: their files are mounted read-only at the same paths.
    this.toolFiles = await registry.hostFiles();
    this.skillDirs = await skillFolders(storage, this.options.skillRoots ?? []);
    this.place = rt.containerPlace(() => this.liveContainer(), { cwd: this.workdir, user: this.options.user ?? CONTAINER_DEFAULTS.user, image: this.image, via: this.options.commandRunner ?? "runner" });
    const place = this.place;
    const inner = new SubprocessExecutor(
      {
        tools: registry,
        ...(this.options.middleware ? { middleware: this.options.middleware } : {}),
        ...(this.options.search ? { search: this.options.search } : {}),
        ...(this.options.maxInFlightBytes !== undefined ? { maxInFlightBytes: this.options.maxInFlightBytes } : {}),
        // Given to the inner executor so they are not silently dropped (the matrix found both missing).
        ...(this.options.toolable ? { toolable: this.options.toolable } : {}),
        ...(this.options.skillRoots ? { skillRoots: this.options.skillRoots } : {}),
        // agents.* is served on the host (the agent runtime), like MCP and HTTP tools.
        ...(this.options.agents ? { agents: this.options.agents } : {}),
        ...(this.options.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: this.options.defaultTimeoutMs } : {}),
        startupTimeoutMs: this.options.startupTimeoutMs ?? CONTAINER_DEFAULTS.startupTimeoutMs,
        maxMemoryMb: this.memoryMb,
        allowRuntimeDeps: false,
        env: {},
        cwd: this.workdir,
      },
      (spawn) => this.launch(rt, docker, spawn),
      // The host services serve the container, not a host child: what its code saves is recorded
      // as untrusted, and skills.run runs inside the container (never on the host for it).
      // Command-line tools run there too (command.ts), so they see the guest's files, not the host's.
      {
        kind: this.kind,
        trust: this.trust,
        runsCommands: false,
        runSkill: (skill, script, args, ctx) => this.runSkillNow(skill, script, args, ctx),
        place,
        // The catalog shows the path the code opens: the skill's folder is mounted at /skills/<name>;
        // one saved after the start is not there (a host path would mean nothing inside): skills.read reads it.
        skillLocation: (name) => (this.skillDirs.has(name) ? `${SKILLS_DIR}/${name}/SKILL.md` : `skill://${name}/SKILL.md`),
      },
    );
    this.inner = inner;
    await inner.start(storage);
    // Run by the first listing (a probe costs the runner's start: a session that lists nothing never pays it).
    registry.checkAvailability(() => this.markMissingCommands(registry));
  }

  /**
   * Tools whose program the image lacks are listed as unavailable with the fix (image build
   * --with), so the agent learns it from tools.list/describe and capabilities(), not at call time.
   * One probe inside the container, as its user, through the runner it warms up.
   */
  private async markMissingCommands(registry: ToolRegistry): Promise<void> {
    const needs = await registry.commandsWhereCodeRuns();
    const { fixFor } = await loadRuntime();
    const commands = [...new Set([...needs.values()].flat())];
    if (!commands.length) return;
    const r = await this.runArgv(["node", "-e", MISSING_COMMANDS_PROBE, ...commands], { timeoutMs: 30_000 }).catch(() => null);
    let missing: unknown;
    try {
      missing = JSON.parse(r?.exitCode === 0 ? r.stdout : "[]");
    } catch {
      missing = [];
    }
    const absent = new Set(Array.isArray(missing) ? missing.filter((m): m is string => typeof m === "string" && commands.includes(m)) : []);
    this.unavailable = [];
    for (const [tool, cmds] of needs) {
      const cmd = cmds.find((c) => absent.has(c));
      if (cmd === undefined) continue;
      const reason = `command '${cmd}' is not in the container image ${this.image}; ${fixFor(this.image, cmd)}, or give the tool's YAML runs_on: host`;
      registry.markUnavailable(tool, reason);
      this.unavailable.push(`${tool} (${reason})`);
    }
  }

  private launch(rt: Runtime, docker: DockerClient, spawn: SpawnOptions): GuestHandle {
    // The guest imports packages only from its workdir (the host's deps folder is not mounted).
    const guest = new rt.ContainerGuest(
      { docker, image: this.image, hostConfig: this.hostConfig(), workdir: this.workdir, env: this.options.env ?? {}, user: this.options.user ?? CONTAINER_DEFAULTS.user, memoryMb: this.memoryMb },
      { ...spawn, env: { TS_CODE_MODE_IMPORT_BASES: JSON.stringify([this.workdir]) } },
    );
    this.current = guest;
    return guest;
  }

  private hostConfig(): Docker.HostConfig {
    const o = this.options;
    const memory = this.memoryMb * 1024 * 1024;
    const mounts: Docker.MountSettings[] = (o.mounts ?? []).map((m) => ({ Type: "bind", Source: path.resolve(m.source), Target: m.target, ReadOnly: m.readOnly !== false }));
    if (o.workspace) mounts.push({ Type: "bind", Source: path.resolve(o.workspace), Target: o.workspace, ReadOnly: false });
    for (const [name, dir] of this.skillDirs) mounts.push({ Type: "bind", Source: dir, Target: `${SKILLS_DIR}/${name}`, ReadOnly: true });
    for (const file of this.toolFiles) {
      const covered = mounts.some((m) => m.Source !== undefined && m.Target === m.Source && (file === m.Source || file.startsWith(`${m.Source}/`)));
      if (!covered) mounts.push({ Type: "bind", Source: file, Target: file, ReadOnly: true });
    }
    const tmpfs: Record<string, string> = { "/tmp": "rw,nosuid,nodev,size=64m,mode=1777" };
    if (!o.workspace && !(o.mounts ?? []).some((m) => m.target === this.workdir)) tmpfs[this.workdir] = "rw,nosuid,nodev,size=256m,mode=1777";
    return {
      NetworkMode: o.network ?? CONTAINER_DEFAULTS.network,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: o.readOnlyRootfs !== false,
      Tmpfs: tmpfs,
      Mounts: mounts,
      PidsLimit: o.pidsLimit ?? CONTAINER_DEFAULTS.pidsLimit,
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round((o.cpus ?? CONTAINER_DEFAULTS.cpus) * 1e9),
      Init: true,
    };
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    if (this.inner) return this.inner.run(code, options);
    const { result } = admitRun(code, { closed: this.closed, started: false }, performance.now());
    return Promise.resolve(result ?? errorResult({ name: "SessionClosedError", message: "Cannot run code: the executor is not started" }, performance.now()));
  }

  /**
   * Run a shell command inside the container: an argv array as is, a string under /bin/sh -c
   * inside the container. Host code calls this directly; agent code uses tools.shell.exec.
   */
  async exec(command: string | string[], options: ExecOptions = {}): Promise<ExecResult> {
    if (this.options.shell === false) throw new ValidationError("exec: this ContainerExecutor was created with shell: false");
    const input = (await loadRuntime()).parseExecInput(command, options);
    const { command: cmd, ...rest } = input;
    return this.execNow(cmd, rest);
  }

  private async execNow(command: string | string[], options: ExecOptions): Promise<ExecResult> {
    const { execIn } = await loadRuntime();
    return execIn(await this.liveContainer(), command, { ...options, workdir: this.workdir, user: this.options.user ?? CONTAINER_DEFAULTS.user });
  }

  /** The guest's container, started (or replaced) first when it is not running. */
  private async liveContainer(): Promise<Docker.Container> {
    if (this.closed || !this.inner) throw new ValidationError("exec: the ContainerExecutor is not started (or closed)");
    // Reuses the guest's container; if it is being replaced, wait for the fresh one.
    let guest = this.current;
    if (!guest?.isAlive || !guest.handle) {
      await this.inner.run("undefined");
      guest = this.current;
    }
    await guest?.ready;
    const container = guest?.handle;
    if (!container) throw new ValidationError("exec: no container is running");
    return container;
  }

  /**
   * Run argv (no shell) inside the session's container, stdout and stderr apart: the seam for
   * host features that must see the guest's files (CLI tools use it; a confined shell_readonly
   * may). cwd defaults to the workdir; user to the container's.
   */
  async runArgv(argv: readonly string[], options: Omit<ArgvRunOptions, "cwd" | "user"> & { cwd?: string; user?: string }): Promise<ArgvRunResult> {
    if (argv.length === 0) throw new ValidationError("runArgv: argv must name a program");
    const { runArgvIn } = await loadRuntime();
    return runArgvIn(await this.liveContainer(), argv, { via: this.options.commandRunner ?? "runner", ...options, cwd: options.cwd ?? this.workdir, user: options.user ?? this.options.user ?? CONTAINER_DEFAULTS.user });
  }

  private async runSkillNow(skill: Parameters<SkillRunner>[0], script: string, args: readonly string[], ctx: CallContext): Promise<string> {
    // Called during a run, so the guest's container is up.
    const container = this.current?.isAlive ? this.current.handle : undefined;
    if (!container) throw new ValidationError("skills.run: no container is running");
    const { runSkillInContainer } = await loadRuntime();
    return runSkillInContainer({ container, workdir: this.workdir, user: this.options.user ?? CONTAINER_DEFAULTS.user, image: this.image, via: this.options.commandRunner ?? "runner" }, skill, script, args, ctx);
  }

  async reset(): Promise<void> {
    await this.inner?.reset();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.starting?.catch(() => undefined);
    await this.inner?.close();
    await this.current?.kill();
  }
}
