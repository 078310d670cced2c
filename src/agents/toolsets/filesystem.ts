/**
 * `filesystem_project` / `filesystem_cwd` (+ `_ro`): read_file, list_files, and (not _ro)
 * write_file, confined to one root. A path is resolved under the root, then the real path of what
 * exists of it is checked again, so `..` and symlinks that point outside are both refused. Reads
 * and listings are bounded: a model cannot make the host read a huge file or walk a huge tree.
 */
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ToolError } from "../../errors.js";
import { writeFileAtomic } from "../../storage/atomic.js";
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

/** The absolute path of `rel` under `root`, refused when it (or the real path of its existing part) leaves the root. */
export async function confine(root: string, rel: string, tool: string): Promise<string> {
  const realRoot = await realpath(root);
  const full = path.resolve(realRoot, rel);
  const outside = (p: string) => {
    const back = path.relative(realRoot, p);
    return back === ".." || back.startsWith(`..${path.sep}`) || path.isAbsolute(back);
  };
  if (outside(full)) throw refuse(tool, `${rel} is outside the allowed folder ${root}`);
  // Walk up to the deepest part that exists and check where it really is: a symlink inside the
  // root may point anywhere.
  let existing = full;
  for (;;) {
    try {
      const real = await realpath(existing);
      if (outside(real)) throw refuse(tool, `${rel} leads outside the allowed folder ${root} (through a symbolic link)`);
      break;
    } catch (err) {
      if (err instanceof ToolError) throw err;
      const parent = path.dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  return full;
}

export function filesystemToolset(root: string, readOnly: boolean, maxOutputChars: number): AgentTool[] {
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
        const file = await confine(root, a.path, "read_file");
        const max = a.max_chars ?? Math.min(DEFAULT_MAX_CHARS, maxOutputChars);
        const offset = a.offset ?? 0;
        // Read only the bytes that can hold the wanted characters (4 bytes per character at most).
        // A FIFO or device would block the open (or never end); only regular files are read.
        const info = await stat(file);
        if (!info.isFile()) throw refuse("read_file", `${a.path} is not a regular file`);
        if (offset * 4 > MAX_READ_BYTES) throw refuse("read_file", `offset ${offset} is past what read_file reads of a file (the first ${MAX_READ_BYTES / 1024 / 1024} MiB)`);
        const handle = await open(file, "r");
        try {
          const size = (await handle.stat()).size;
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
        const start = await confine(root, a.path ?? ".", "list_files");
        const realRoot = await realpath(root);
        const match = a.pattern ? pathGlob(a.pattern) : null;
        const found: string[] = [];
        const queue = [start];
        let visited = 0;
        while (queue.length && found.length < MAX_LISTED && visited < MAX_VISITED_DIRS) {
          const dir = queue.shift()!;
          visited++;
          const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
          for (const e of entries) {
            const full = path.join(dir, e.name);
            const rel = path.relative(realRoot, full);
            // Symlinked folders are not followed: they could lead outside or loop.
            if (e.isDirectory()) queue.push(full);
            else if (!match || match.test(rel.split(path.sep).join("/"))) found.push(rel);
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
      const file = await confine(root, a.path, "write_file");
      const info = await lstat(file).catch(() => null);
      if (info?.isSymbolicLink()) throw refuse("write_file", `${a.path} is a symbolic link; write to the file itself`);
      if (info?.isDirectory()) throw refuse("write_file", `${a.path} is a folder`);
      // Written beside and renamed: a reader never sees half a file.
      await writeFileAtomic(file, a.content);
      return `wrote ${a.content.length} characters to ${path.relative(await realpath(root), file)}`;
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
