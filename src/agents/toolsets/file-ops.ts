/**
 * `shell_file_ops`: `ls` (no approval: it only reads, and runs confined like shell_readonly) and
 * `mv` (needs approval: it changes the project). mv is not a process: it is one rename(2) between
 * two folders of the project, each opened one component at a time without following symbolic
 * links (nofollow.ts), so neither path can lead outside; it never replaces an existing file.
 */
import { lstat, realpath, rename } from "node:fs/promises";
import { z } from "zod";
import { ToolError } from "../../errors.js";
import { at, components, openDir } from "./nofollow.js";
import { shellReadonlyToolset } from "./shell.js";
import type { AgentTool } from "./types.js";

/** A path the ls command line may take: readonlyArgv refuses shell syntax and paths out of the root too. */
const lsPath = /^[^\s]{1,1000}$/;

export function shellFileOpsToolset(root: string, allowed: readonly string[] = ["ls", "mv"]): AgentTool[] {
  const tools: AgentTool[] = [];
  if (allowed.includes("ls")) {
    const [readonly] = shellReadonlyToolset(root, { allowedCommands: ["ls"] });
    tools.push({
      name: "ls",
      description: `List a folder of the project ${root} (ls -la), in a sandbox that sees only the project, read-only. Relative paths only.`,
      inputSchema: z.object({ path: z.string().regex(lsPath, "a relative path without spaces").optional().describe("folder or file, relative to the project (default: the project folder)") }),
      needsApproval: false,
      execute: (args, signal) => readonly!.execute({ command: `ls -la ${(args as { path?: string }).path ?? "."}` }, signal),
    });
  }
  if (allowed.includes("mv")) {
    tools.push({
      name: "mv",
      description: `Move or rename a file or folder inside the project ${root}. Never replaces an existing file. Needs approval.`,
      inputSchema: z.object({ source: z.string().min(1).max(1_000), destination: z.string().min(1).max(1_000) }),
      needsApproval: true,
      async execute(args) {
        const a = args as { source: string; destination: string };
        const realRoot = await realpath(root);
        const from = components(realRoot, a.source, "mv", root);
        const to = components(realRoot, a.destination, "mv", root);
        const fromName = from.pop();
        const toName = to.pop();
        if (fromName === undefined || toName === undefined) throw refuse("the project folder itself cannot be moved or replaced");
        const fromDir = await openDir(realRoot, from, "mv", a.source);
        try {
          const toDir = await openDir(realRoot, to, "mv", a.destination);
          try {
            if (!(await lstat(at(fromDir, fromName)).catch(() => null))) throw refuse(`${a.source} does not exist`);
            if (await lstat(at(toDir, toName)).catch(() => null)) throw refuse(`${a.destination} exists; mv does not replace files`);
            await rename(at(fromDir, fromName), at(toDir, toName));
          } finally {
            await toDir.close();
          }
        } finally {
          await fromDir.close();
        }
        return `moved ${a.source} to ${a.destination}`;
      },
    });
  }
  return tools;
}

function refuse(message: string): ToolError {
  return new ToolError({ tool: "mv", callable: null, code: "PERMISSION", message: `refused: ${message}` });
}
