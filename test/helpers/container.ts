/**
 * The container engine and image for tests on a real engine (podman's Docker API here; the
 * prerequisites script installs and starts it). The image is built once per content hash: the
 * first test file to need it builds it under image.ts's lock, the others find it there.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { ContainerExecutor, type ContainerExecutorOptions } from "../../src/execution/container/executor.js";
import { buildImage } from "../../src/execution/container/image.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
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

/** One container session for a whole test file: its folder, executor and session, and `value(code)`. */
export interface ContainerSessionFixture {
  tmp: string;
  tools: string;
  executor: ContainerExecutor;
  session: Session;
  /** The value of `code`; fails the test with the code when the run fails. */
  value: (code: string) => Promise<unknown>;
  close: () => Promise<void>;
}

/**
 * A temp folder with `tools/` (filled by `fillTools`), a ContainerExecutor on `image` with
 * `options`, and a started Session on FileStorage in `store/`.
 */
export async function openContainerSession(
  prefix: string,
  image: string,
  fillTools: (tools: string) => Promise<void>,
  options: Omit<ContainerExecutorOptions, "image" | "toolsPath"> = {},
): Promise<ContainerSessionFixture> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), prefix));
  const tools = path.join(tmp, "tools");
  await mkdir(tools, { recursive: true });
  await fillTools(tools);
  const executor = new ContainerExecutor({ image, toolsPath: tools, ...options });
  const session = new Session({ storage: new FileStorage({ basePath: path.join(tmp, "store") }), executor });
  await session.start();
  return {
    tmp,
    tools,
    executor,
    session,
    value: async (code) => {
      const r = await session.run(code);
      expect(r.error, code).toBeNull();
      return r.value;
    },
    close: async () => {
      await session.close();
      await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}
