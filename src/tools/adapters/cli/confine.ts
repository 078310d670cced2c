/**
 * Confinement of one command outside containers: bubblewrap (`bwrap`) runs it in new namespaces
 * (no network, own pids, own mounts) as uid/gid 65534, with the system folders and ONE root folder
 * bound read-only at their own paths, a private tmpfs `/tmp`, and an environment cleared down to
 * PATH/HOME. A symlink that leads outside the root dangles, because outside is not there; a program
 * the command is tricked into starting (`sort --compress-program`, a git hook) is inside the same
 * walls. Option allow-lists in callers stay as a second layer, never the only one.
 *
 * Where bwrap is missing, `confinedArgv` throws a DEPENDENCY ToolError with the install line: a
 * command that promised confinement never runs unconfined.
 */
import { accessSync, constants, lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { ToolError } from "../../../errors.js";

/** Overrides where bwrap is looked up (a path); tests point it at a missing file to check the refusal. */
export const BWRAP_ENV = "TS_CODE_MODE_BWRAP";
export const BWRAP_INSTALL = "apt-get install -y bubblewrap";
const SANDBOX_UID = "65534";
const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * Git settings that would make git run a program (or page, prompt, or reach out): switched off on the
 * command line, which overrides the repository's `.git/config`. Filters and diff drivers named in
 * `.gitattributes` are not listed here by name; `--no-ext-diff --no-textconv` covers diff/log/show and
 * anything left runs inside the sandbox.
 */
export const GIT_SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.pager=cat",
  "core.askPass=",
  "core.sshCommand=false",
  "core.editor=false",
  "core.attributesFile=/dev/null",
  "diff.external=",
  "protocol.allow=never",
  "credential.helper=",
  "gpg.program=false",
  "sequence.editor=false",
];
/** Environment for git inside the sandbox: no system/global config, no pager, no prompts, no locks. */
const GIT_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_PAGER: "cat",
  PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_EXTERNAL_DIFF: "",
};
const GIT_DIFF_SUBCOMMANDS = new Set(["log", "diff", "show"]);

/** `git <sub> ...` with config-driven program execution disabled; other argv unchanged. */
export function hardenGit(argv: readonly string[]): string[] {
  if (path.basename(argv[0] ?? "") !== "git") return [...argv];
  const [git, sub, ...rest] = argv;
  const config = GIT_SAFE_CONFIG.flatMap((c) => ["-c", c]);
  if (sub === undefined) return [git!, ...config];
  const noDrivers = GIT_DIFF_SUBCOMMANDS.has(sub) ? ["--no-ext-diff", "--no-textconv"] : [];
  return [git!, ...config, sub, ...noDrivers, ...rest];
}

/** The bwrap executable: `$TS_CODE_MODE_BWRAP` when set (even if missing: then there is none), else `bwrap` on PATH. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env, given?: string): string | undefined {
  const fromEnv = given ?? env[BWRAP_ENV];
  const candidates = fromEnv ? [fromEnv] : (env.PATH ?? "").split(path.delimiter).filter(Boolean).map((d) => path.join(d, "bwrap"));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The error a confined command gets when no OS sandbox is available. */
export function noSandboxError(tool: string, label = tool, looked = process.env[BWRAP_ENV] ? `at ${BWRAP_ENV}=${process.env[BWRAP_ENV]}` : "on PATH"): ToolError {
  return new ToolError({
    tool,
    callable: null,
    code: "DEPENDENCY",
    message: `${label} runs only inside an OS sandbox, and bubblewrap (bwrap) was not found ${looked}; it is refused rather than run unconfined. Install it: ${BWRAP_INSTALL}`,
  });
}

let systemBinds: string[] | undefined;
/**
 * /usr read-only, and /bin, /sbin, /lib* as the host has them: a symlink (merged /usr) is recreated as
 * the same symlink, a real folder is bound read-only. Nothing else of the host's root is there
 * (no /etc beyond the loader cache, no /home, /root, /run, /var, /tmp).
 */
function systemFolders(): string[] {
  if (systemBinds) return systemBinds;
  const out = ["--ro-bind", "/usr", "/usr"];
  for (const dir of ["/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"]) {
    try {
      const info = lstatSync(dir);
      if (info.isSymbolicLink()) out.push("--symlink", readlinkSync(dir), dir);
      else if (info.isDirectory()) out.push("--ro-bind", dir, dir);
    } catch {
      // absent on this system
    }
  }
  out.push("--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache");
  systemBinds = out;
  return out;
}

export interface ConfineOptions {
  /** The one folder the command sees (read-only, at its real path); also its working directory. */
  root: string;
  tool: string;
  /** How messages name the call. */
  label?: string;
  /** Where bwrap is (default: `$TS_CODE_MODE_BWRAP`, else `bwrap` on PATH); checked like the default. */
  bwrap?: string | undefined;
}

/**
 * The argv that runs `argv` confined to `root` under bwrap (git hardened), or a DEPENDENCY
 * ToolError when bwrap is not available. The result runs without a shell, like any argv.
 */
export function confinedArgv(argv: readonly string[], options: ConfineOptions): string[] {
  const bwrap = findBwrap(process.env, options.bwrap);
  if (!bwrap) throw noSandboxError(options.tool, options.label, options.bwrap ? `at ${options.bwrap}` : undefined);
  // The real path: a root reached through a symlink would otherwise be bound at the link's path only.
  const root = realpathSync(options.root);
  const env = { PATH: SANDBOX_PATH, HOME: "/tmp", LANG: "C.UTF-8", ...GIT_ENV };
  return [
    bwrap,
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    ...Object.entries(env).flatMap(([k, v]) => ["--setenv", k, v]),
    "--uid", SANDBOX_UID,
    "--gid", SANDBOX_UID,
    ...systemFolders(),
    "--proc", "/proc",
    "--dev", "/dev",
    "--tmpfs", "/tmp",
    "--ro-bind", root, root,
    "--chdir", root,
    "--",
    ...hardenGit(argv),
  ];
}
