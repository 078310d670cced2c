import { afterAll, beforeAll, expect } from "vitest";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { executorConformance } from "../../conformance/executor.js";
import { ensureTestImage, ownContainers } from "../../helpers/container.js";

beforeAll(ensureTestImage, 120_000);

// Every session of the suite is closed by the suite; nothing of this file may be left running.
afterAll(async () => expect(await ownContainers()).toEqual([]));

// shell: false keeps tools.list() equal to the example tools the suite expects.
executorConformance("ContainerExecutor", ({ toolsPath, defaultTimeoutMs, tools }) => new ContainerExecutor({ toolsPath, defaultTimeoutMs, shell: false, ...(tools ? { tools } : {}) }), {
  // skills.run runs inside the container: files, timeout and process group are in container.test.ts.
  skillsRun: "isolated",
  // The skills are mounted read-only at /skills/<name>; the catalog gives the paths the code opens.
  skillLocation: (name) => `/skills/${name}/SKILL.md`,
});
