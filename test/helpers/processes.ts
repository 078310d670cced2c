/** Watching real processes from tests: poll until a condition holds, and list processes with `ps`. */
import { execFileSync } from "node:child_process";

/** Poll `check` every `stepMs` until it holds; fails naming `what` after `ms`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 5_000, stepMs = 20): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Live (not zombie) processes whose `ps` line (pid, state, command line) contains `text`. */
export function processesWith(text: string): { pid: number; state: string }[] {
  const out = execFileSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(text))
    .map((line) => line.trim().split(/\s+/))
    .map(([pid, state]) => ({ pid: Number(pid), state: state ?? "" }))
    .filter((p) => !p.state.startsWith("Z"));
}
