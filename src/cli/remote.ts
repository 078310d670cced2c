/**
 * `--remote URL` for `run` and `mcp`: the code runs in a session of a `ts-code-mode serve` server
 * (RemoteExecutor) instead of a local executor. The token comes from --token or TS_CODE_MODE_TOKEN
 * (so it need not appear in `ps`). Executor flags that only mean something locally are refused.
 */
import { Option, type Command } from "commander";
import { RemoteExecutor } from "../execution/remote/executor.js";
import { CliUsageError } from "./shared.js";

export const TOKEN_ENV = "TS_CODE_MODE_TOKEN";
/** For `mcp`, whose --token guards its own HTTP endpoint. */
export const REMOTE_TOKEN_ENV = "TS_CODE_MODE_REMOTE_TOKEN";

export interface RemoteFlags {
  remote?: string;
  token?: string;
  /** The tenant's workspace: sent to a server started with --workspace-header. */
  workspace?: string;
  executor?: string;
  engine?: string;
  timeout?: number;
  sampler?: string;
  memoryMb?: number;
  skills?: string[];
  sessionsPerChild?: number;
}

/** `--remote URL` and the token flag: --token for `run`, --remote-token for `mcp` (whose --token is its own). */
export function addRemoteOptions(cmd: Command, tokenFlag: "--token" | "--remote-token"): Command {
  cmd.option("--remote <url>", "run the code on a `ts-code-mode serve` server at this URL instead of here");
  const env = tokenFlag === "--token" ? TOKEN_ENV : REMOTE_TOKEN_ENV;
  cmd.addOption(new Option(`${tokenFlag} <token>`, "the --remote server's bearer token").env(env));
  return cmd;
}

/** A RemoteExecutor for --remote; `executorWasSet` says whether --executor came from the command line. */
export function remoteExecutor(flags: RemoteFlags, options: { executorWasSet: boolean; checkStorage: boolean }): RemoteExecutor {
  const token = flags.token;
  if (options.executorWasSet || flags.engine !== undefined) throw new CliUsageError("--remote runs the code on the server's executor; drop --executor/--engine (choose it on the server: serve --executor ...)");
  if (flags.sampler !== undefined) throw new CliUsageError("--remote: sampling requests are answered on the server; drop --sampler (give it to serve: serve --sampler ...)");
  if (flags.sessionsPerChild !== undefined) throw new CliUsageError("--remote: the server decides how its sessions run; drop --sessions-per-child (give it to serve: serve --sessions-per-child N)");
  if (flags.memoryMb !== undefined || flags.skills !== undefined) {
    throw new CliUsageError("--remote: the server's executor sets the memory cap and offers the skills; drop --memory-mb/--skills (give them to serve: serve --memory-mb N --skills DIR)");
  }
  try {
    return new RemoteExecutor({
      url: flags.remote ?? "",
      ...(token !== undefined ? { token } : {}),
      ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
      ...(flags.timeout !== undefined ? { defaultTimeoutMs: flags.timeout } : {}),
      checkStorage: options.checkStorage,
    });
  } catch (err) {
    throw new CliUsageError(`--remote: ${err instanceof Error ? err.message : String(err)}`);
  }
}
