/** The built CLI in a pseudo-terminal (python3's pty module), for the interactive approval prompt. */
import { spawn } from "node:child_process";
import { MAIN } from "../cli/harness.js";

/**
 * Runs the CLI in a pty, answering each prompt that appears (output ending in ">") with the next
 * line of `answers`. Asynchronous: a fake model server answers from the test's process, so its
 * event loop must keep running.
 */
export function inPty(args: string[], cwd: string, answers: string[], env: Record<string, string>): Promise<{ output: string; code: number }> {
  const script = `
import os, pty, sys, json, select
answers = json.loads(sys.argv[1]); argv = json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
out = b""; pending = list(answers)
while True:
    r, _, _ = select.select([fd], [], [], 30)
    if not r: break
    try: chunk = os.read(fd, 4096)
    except OSError: break
    if not chunk: break
    out += chunk
    if pending and out.rstrip().endswith(b">"):
        os.write(fd, (pending.pop(0) + "\\n").encode())
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf8", "replace"))
sys.exit(os.waitstatus_to_exitcode(status))
`;
  return new Promise((resolve, reject) => {
    const child = spawn("python3", ["-c", script, JSON.stringify(answers), JSON.stringify([process.execPath, MAIN, ...args])], { cwd, env: { ...process.env, ...env } });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ output, code: code ?? -1 });
    });
  });
}
