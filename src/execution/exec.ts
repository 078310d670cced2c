/**
 * The optional `exec` of an executor: run one command (an argv array, never a shell line) where the
 * agent's code runs — a container's image, say. Executors that can, implement `ExecCapable`;
 * `serve` answers its exec route with NotSupportedError (HTTP 501) for the others.
 */
export interface ExecOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ExecCapable {
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
}

export function canExec(executor: unknown): executor is ExecCapable {
  return typeof executor === "object" && executor !== null && typeof (executor as Partial<ExecCapable>).exec === "function";
}
