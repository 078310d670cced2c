/**
 * `ts-code-mode image build` and `ts-code-mode containers prune`: the image ContainerExecutor runs
 * (built locally, no registry needed) and the containers it leaves when a host process dies. The
 * container modules are loaded when a command runs (dockerode is heavy; see engine.ts).
 */
import type { Command } from "commander";
import { addJsonOption, examples, printJson, userPath, writeLine } from "../shared.js";

interface BuildFlags {
  tools?: string;
  tag?: string;
  from?: string;
  with?: string[];
  json?: boolean;
}

export function registerContainerCommands(program: Command): void {
  const image = program.command("image").description("the container image of --executor container");
  addJsonOption(
    image
      .command("build")
      .description(
        "Build the image ContainerExecutor runs. Offline (default): the host's node binary and the libraries it links, sh and basic programs (ls, cat, grep, sed, ...), and the guest runtime; nothing is pulled. With --from: a Containerfile FROM that image (it needs node on PATH). The default tag carries a hash of the contents, so an unchanged runtime reuses the image.",
      )
      .option("--tag <ref>", "image reference to build (default: localhost/ts-code-mode-runtime:<content hash>, the one the executor uses)")
      .option("--from <image>", "base image with node on PATH (default: offline, from the host's node)")
      .option("--with <names...>", "offline: host programs to add (e.g. git jq); with --from: apt packages to install")
      .option("--tools <dir>", "also add the programs the tool YAML files in DIR run inside a container session (type: cli without runs_on: host)")
      .addHelpText(
        "after",
        examples("image build", "image build --with git jq", "image build --tools .code-mode/tools", "image build --from node:20-bookworm-slim --with git --tag localhost/my-agent:1", "run --executor container 'await tools.list()'") +
          "\nExit codes: 0 built or already there, 1 the build failed or the container engine is not reachable (one line says where it looked and how to start it).\n",
      ),
  ).action(async (flags: BuildFlags) => {
    const { buildImage, defaultImageTag, programsForCommands } = await import("../../execution/container/image.js");
    const programs = [...(flags.with ?? [])];
    let skipped: string[] = [];
    if (flags.tools !== undefined) {
      const { ToolRegistry } = await import("../../tools/registry.js");
      const registry = await ToolRegistry.load(userPath(flags.tools, "--tools"));
      const commands = [...(await registry.commandsWhereCodeRuns()).values()].flat();
      await registry.close();
      const found = programsForCommands(commands, flags.from ? { from: flags.from } : {});
      for (const p of found.add) if (!programs.includes(p)) programs.push(p);
      skipped = found.skipped;
      if (!flags.json && skipped.length) process.stderr.write(`not added (tools using them are listed as unavailable in a container session): ${skipped.join("; ")}\n`);
    }
    if (!flags.json) process.stderr.write("building the container image (the first build takes a few seconds)...\n");
    const result = await buildImage({ ...(flags.tag ? { tag: flags.tag } : {}), ...(flags.from ? { from: flags.from } : {}), ...(programs.length ? { with: programs } : {}) });
    const usage = result.tag === defaultImageTag() ? null : `run it with --executor container --image ${result.tag}`;
    if (flags.json) printJson({ ...result, ...(programs.length ? { with: programs } : {}), ...(flags.tools !== undefined ? { skipped } : {}) });
    else {
      writeLine(process.stdout, result.built ? `built ${result.tag}` : `${result.tag} is already there`);
      if (usage) writeLine(process.stdout, usage);
    }
  });

  const containers = program.command("containers").description("containers started by --executor container (label io.ts-code-mode)");
  addJsonOption(
    containers
      .command("prune")
      .description(
        "Remove your containers whose owner process on this host is gone (ContainerExecutor also does this when it starts); --all also removes your running sessions' containers. Other users' and other hosts' containers are never touched.",
      )
      .option("--all", "also remove this user's running sessions' containers on this host, not only orphans")
      .addHelpText(
        "after",
        examples("containers prune", "containers prune --all --json") +
          "\nExit codes: 0 done (also when nothing was removed), 1 the container engine is not reachable (one line says where it looked and how to start it).\n",
      ),
  ).action(async (flags: { all?: boolean; json?: boolean }) => {
    const [{ pruneContainers }, { dockerClient }] = await Promise.all([import("../../execution/container/cleanup.js"), import("../../execution/container/engine.js")]);
    const { removed, othersKept } = await pruneContainers(await dockerClient(), { all: flags.all ?? false });
    if (flags.json) return printJson({ removed, othersKept });
    writeLine(process.stdout, removed.length ? `removed ${removed.length} container(s): ${removed.map((id) => id.slice(0, 12)).join(", ")}` : "nothing to remove");
    if (othersKept > 0) writeLine(process.stdout, `left ${othersKept} container(s) of other users or hosts alone`);
  });
}
