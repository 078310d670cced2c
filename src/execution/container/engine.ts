/**
 * The Docker Engine API client, loaded on first use (dockerode is heavy; importing ts-code-mode
 * must stay fast). It honours DOCKER_HOST (unix://, tcp:// with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH)
 * the way the docker CLI does; without it, the podman socket of the recipe when it exists, else
 * Docker's default socket.
 */
import { existsSync } from "node:fs";
import type Docker from "dockerode";

export type DockerClient = Docker;

/** The rootful podman socket of the recipe (scripts/prerequisites.mjs starts it). */
export const PODMAN_SOCKET = "/run/podman/podman.sock";

export async function dockerClient(given?: Docker): Promise<Docker> {
  if (given) return given;
  const { default: DockerCtor } = await import("dockerode");
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
