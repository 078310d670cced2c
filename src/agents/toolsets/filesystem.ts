/**
 * `filesystem_project` / `filesystem_cwd` (+ `_ro`): read_file, list_files, and (not _ro)
 * write_file, confined to one root. `..` out of the root is refused, and every open walks the path
 * one folder at a time without following symbolic links (nofollow.ts), so neither a symlink in the
 * project nor another process swapping a folder for one mid-call can lead a read or write outside.
 * Reads and listings are bounded: a model cannot make the host read a huge file or walk a huge tree.
 */
import { readdir, realpath } from "node:fs/promises";
import { z } from "zod";
import { ToolError } from "../../errors.js";
import { at, components, openDir, openFileForRead, writeFileNoFollow } from "./nofollow.js";
import type { AgentTool } from "./types.js";

const DEFAULT_MAX_CHARS = 20_000;
const MAX_LISTED = 1_000;
/** Directories visited by one list_files, whatever the pattern. */
const MAX_VISITED_DIRS = 5_000;
const MAX_WRITE_CHARS = 1_000_000;
/** Bytes of one file read_file looks at, whatever offset is asked for. */
const MAX_READ_BYTES = 16 * 1024 * 1024;

function refuse(tool: string, message: string): ToolError {
  return new ToolError({ tool, callable: null, code: "PERMISSION", message });
}

/** `maxFileBytes` (an agent file's max_file_bytes): larger files are not read, larger contents not written. */
export function filesystemToolset(root: string, readOnly: boolean, maxOutputChars: number, maxFileBytes?: number): AgentTool[] {
  const tools: AgentTool[] = [
    {
      name: "read_file",
      description: `Read a text file under ${readOnly ? "the (read-only) " : "the "}folder ${root}. Long files: read in parts with offset and max_chars.`,
      inputSchema: z.object({
        path: z.string().min(1).describe("path relative to the folder"),
        max_chars: z.number().int().min(1).max(maxOutputChars).optional().describe(`at most this many characters (default ${Math.min(DEFAULT_MAX_CHARS, maxOutputChars)})`),
        offset: z.number().int().min(0).optional().describe("start at this character"),
      }),
      needsApproval: false,
      async execute(args) {
        const a = args as { path: string; max_chars?: number; offset?: number };
        const max = a.max_chars ?? Math.min(DEFAULT_MAX_CHARS, maxOutputChars);
        const offset = a.offset ?? 0;
        if (offset * 4 > MAX_READ_BYTES) throw refuse("read_file", `offset ${offset} is past what read_file reads of a file (the first ${MAX_READ_BYTES / 1024 / 1024} MiB)`);
        // Opened non-blocking and checked on the descriptor: a FIFO or device would block (or never
        // end); only regular files are read. Read only the bytes that can hold the wanted characters
        // (4 bytes per character at most).
        const handle = await openFileForRead(await realpath(root), a.path, "read_file", root);
        try {
          const info = await handle.stat();
          if (!info.isFile()) throw refuse("read_file", `${a.path} is not a regular file`);
          if (maxFileBytes !== undefined && info.size > maxFileBytes) throw refuse("read_file", `${a.path} is ${info.size} bytes, more than this agent may read (max_file_bytes ${maxFileBytes})`);
          const size = info.size;
          const want = Math.min(size, (offset + max) * 4, MAX_READ_BYTES);
          const buf = Buffer.alloc(want);
          const { bytesRead } = await handle.read(buf, 0, want, 0);
          const text = buf.subarray(0, bytesRead).toString("utf8");
          const part = text.slice(offset, offset + max);
          const more = offset + part.length < text.length || want < size;
          return more ? `${part}\n[more: read on with offset ${offset + part.length}]` : part;
        } finally {
          await handle.close();
        }
      },
    },
    {
      name: "list_files",
      description: `List files under the folder ${root} (recursively), optionally matching a glob such as **/*.md. At most ${MAX_LISTED} names.`,
      inputSchema: z.object({
        path: z.string().optional().describe("sub-folder to list (default: the whole folder)"),
        pattern: z.string().optional().describe("glob on the path relative to the folder: * within a name, ** across folders"),
      }),
      needsApproval: false,
      async execute(args) {
        const a = args as { path?: string; pattern?: string };
        const realRoot = await realpath(root);
        const start = components(realRoot, a.path ?? ".", "list_files", root);
        // The start is opened now so a bad path is an error, not an empty listing.
        await (await openDir(realRoot, start, "list_files", a.path ?? ".")).close();
        const match = a.pattern ? pathGlob(a.pattern) : null;
        const found: string[] = [];
        const queue = [start];
        let visited = 0;
        while (queue.length && found.length < MAX_LISTED && visited < MAX_VISITED_DIRS) {
          const parts = queue.shift()!;
          visited++;
          // Each folder is opened by walking from the root without following links, then read through
          // its descriptor: a folder swapped for a symlink since it was listed is skipped, not followed.
          const dir = await openDir(realRoot, parts, "list_files", parts.join("/")).catch(() => null);
          if (!dir) continue;
          const entries = await readdir(at(dir, "."), { withFileTypes: true }).catch(() => []);
          await dir.close();
          for (const e of entries) {
            const rel = [...parts, e.name].join("/");
            // Symlinked folders are not followed: they could lead outside or loop.
            if (e.isDirectory()) queue.push([...parts, e.name]);
            else if (!match || match.test(rel)) found.push(rel);
            if (found.length >= MAX_LISTED) break;
          }
        }
        const note = found.length >= MAX_LISTED || visited >= MAX_VISITED_DIRS ? `\n[listing stopped at ${found.length} files; narrow path or pattern]` : "";
        return found.length ? found.sort().join("\n") + note : "(no files)";
      },
    },
  ];
  if (readOnly) return tools;
  tools.push({
    name: "write_file",
    description: `Write (create or replace) a text file under the folder ${root}. Needs approval.`,
    inputSchema: z.object({ path: z.string().min(1), content: z.string().max(MAX_WRITE_CHARS) }),
    needsApproval: true,
    async execute(args) {
      const a = args as { path: string; content: string };
      if (maxFileBytes !== undefined && Buffer.byteLength(a.content, "utf8") > maxFileBytes) throw refuse("write_file", `the content is more than this agent may write (max_file_bytes ${maxFileBytes})`);
      // Written beside and renamed: a reader never sees half a file.
      const rel = await writeFileNoFollow(await realpath(root), a.path, a.content, "write_file", root);
      return `wrote ${a.content.length} characters to ${rel}`;
    },
  });
  return tools;
}

// A glob on /-separated paths: ** crosses folders (followed by a slash it also matches no folder),
// * and ? stay within one name.
function pathGlob(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      i++;
      if (glob[i + 1] === "/") {
        i++;
        re += "(?:.*/)?";
      } else re += ".*";
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}
