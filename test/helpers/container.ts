/**
 * The container engine and image for tests on a real engine (podman's Docker API here; the
 * prerequisites script installs and starts it). The image is built once per content hash: the
 * first test file to need it builds it under image.ts's lock, the others find it there.
 */
import { buildImage } from "../../src/execution/container/image.js";
import { dockerClient, type DockerClient } from "../../src/execution/container/engine.js";
import { listLabelled } from "../../src/execution/container/cleanup.js";

let docker: DockerClient | null = null;

export async function testDocker(): Promise<DockerClient> {
  docker ??= await dockerClient();
  return docker;
}

/** The default image, built if missing; its tag. */
export async function ensureTestImage(): Promise<string> {
  return (await buildImage({ docker: await testDocker() })).tag;
}

/** The default image plus a working Python 3 (`image build --with python3`), built if missing; its tag. */
export async function ensurePythonTestImage(): Promise<string> {
  return (await buildImage({ docker: await testDocker(), with: ["python3"] })).tag;
}

/** Ids of labelled containers whose owner is this test process. */
export async function ownContainers(): Promise<string[]> {
  return (await listLabelled(await testDocker())).filter((c) => c.ownerPid === process.pid).map((c) => c.id);
}
