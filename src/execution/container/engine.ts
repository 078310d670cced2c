/**
 * The Docker Engine API client, loaded on first use (dockerode is heavy; importing ts-code-mode
 * must stay fast). It honours DOCKER_HOST (unix://, tcp:// with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH)
 * the way the docker CLI does; without it, the podman socket of the recipe when it exists, else
 * Docker's default socket.
 */
import { existsSync } from "node:fs";
import type Docker from "dockerode";
import { INTEGRATION_PACKAGES, loadPeer } from "../../adapters/peer.js";
import { ContainerEngineError } from "../../errors.js";
import type { DockerodeClient } from "./types.js";

export type DockerClient = Docker;

/** The rootful podman socket of the recipe (scripts/prerequisites.mjs starts it). */
export const PODMAN_SOCKET = "/run/podman/podman.sock";

/** The client to use: the one given (any dockerode instance, see types.ts), else a new one. */
export async function dockerClient(given?: DockerodeClient): Promise<Docker> {
  if (given) return given as unknown as Docker;
  // A missing dockerode is one line naming the install command, not Node's bare "Cannot find package".
  const { default: DockerCtor } = await loadPeer<{ default: typeof import("dockerode") }>(INTEGRATION_PACKAGES.dockerode);
  if (process.env["DOCKER_HOST"]) return new DockerCtor();
  return new DockerCtor({ socketPath: existsSync(PODMAN_SOCKET) ? PODMAN_SOCKET : "/var/run/docker.sock" });
}

/** Where the client talks to, for error messages. */
export function describeEngine(): string {
  return process.env["DOCKER_HOST"] ?? (existsSync(PODMAN_SOCKET) ? `unix://${PODMAN_SOCKET}` : "unix:///var/run/docker.sock");
}

/** The status code of a Docker API error (dockerode sets `statusCode`), or undefined. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === "number" ? code : undefined;
}

/** Socket-level failures that mean "no engine there", as opposed to an engine that answered with an error. */
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOENT", "EACCES", "EPERM", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/** How to start an engine, for the one-line error. */
export const START_ENGINE_HINT =
  "start it (podman: systemctl start podman.socket, or podman system service --time=0 unix:///run/podman/podman.sock &; Docker: systemctl start docker) or point DOCKER_HOST at a running engine";

/**
 * The engine's error as one clear line when it could not be reached at all; any other error (the
 * engine answered: 404, 409, ...) unchanged.
 */
export function engineError(err: unknown): unknown {
  if (err instanceof ContainerEngineError || statusOf(err) !== undefined) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string" || !UNREACHABLE.has(code)) return err;
  const why = code === "ENOENT" ? "no socket there" : code === "EACCES" || code === "EPERM" ? "permission denied: this user may not use that socket" : code === "ECONNREFUSED" ? "nothing is listening" : code;
  return new ContainerEngineError(`the container engine at ${describeEngine()} is not reachable (${code}: ${why}); ${START_ENGINE_HINT}`, { cause: err });
}

/** Runs one engine request; an unreachable engine becomes a ContainerEngineError. */
export async function engineCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw engineError(err);
  }
}
