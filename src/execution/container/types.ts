/**
 * The container executor's public types, in a module that imports nothing: the published
 * declarations of ts-code-mode must compile in a project without dockerode or its types
 * (dockerode is loaded on first use, and @types/dockerode is only a dev dependency here).
 */

/**
 * A dockerode client (`new Docker(...)` of the dockerode package). Named by the few methods ts-code-mode
 * checks, so that passing one needs no dockerode types; any dockerode instance fits.
 */
export interface DockerodeClient {
  createContainer(...args: never[]): unknown;
  getContainer(...args: never[]): unknown;
  listContainers(...args: never[]): unknown;
  getImage(...args: never[]): unknown;
}

export interface ExecOptions {
  /** Default 30 s. */
  timeoutMs?: number;
  /** Working directory inside the container; default the executor's workdir. */
  cwd?: string;
}

export interface ExecResult {
  /** stdout and stderr, interleaved, up to the output cap. */
  output: string;
  /** The command's exit code; 124 when it was stopped at the timeout, -1 when it could not be read. */
  exitCode: number;
  truncated: boolean;
}

export interface ArgvRunOptions {
  /** Working directory inside the container (absolute). */
  cwd: string;
  /** "uid" or "uid:gid" inside the container. */
  user: string;
  timeoutMs: number;
  /** Added to the container's environment (the host's is never passed). */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** stdout past this many bytes stops the program (default 16 MiB, as on the host). */
  maxStdoutBytes?: number;
  /** How the program is started; default "runner" (see SpawnInOptions.via in command.ts). */
  via?: ProgramLauncher;
}

/** How an in-container program is started: the container's resident runner, or one engine exec. */
export type ProgramLauncher = "runner" | "exec";

export interface ArgvRunResult {
  stdout: string;
  /** The end of stderr (64 KiB at most). */
  stderr: string;
  /** The program's exit code; 124 when stopped at the timeout, 127 when it could not start, -1 when unknown. */
  exitCode: number;
  /** Why it was stopped early, if it was. */
  stopped: "cap" | "abort" | "timeout" | null;
  /** Set when the program could not start (code "ENOENT": not in the image; "EACCES": not executable). */
  startError?: { code: string; message: string };
}
