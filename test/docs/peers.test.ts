/**
 * docs/peers.md is written by `npm run bench:peers -- --write-docs` (bench/peers.mjs). A real run
 * installs three peers from npm and takes minutes, so it is not run here; this checks that the
 * script answers `--help` and that the file has the shape the script writes today: the command that
 * made it, the date and machine, the table with every figure and every peer, and a reason for each
 * peer that was not measured (a gap is never silent).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { FIGURES, OURS, PEERS, README_TABLE_END, README_TABLE_START, renderTable, withReadmeTable } from "../../bench/peers.mjs";
import { REPO } from "../cli/harness.js";

const DOC = readFileSync(path.join(REPO, "docs", "peers.md"), "utf8");
const cells = (line: string) => line.slice(1, -1).split("|").map((c) => c.trim());

describe("docs/peers.md", () => {
  it("names the command that writes it, with its date and machine", () => {
    expect(DOC).toContain("npm run bench:peers -- --write-docs");
    expect(DOC).toMatch(/on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(DOC).toMatch(/^Machine: \d+ × .+, \d+ GiB, .+, Node \d+\.\d+\.\d+/m);
  });

  it("has the table bench/peers.mjs writes: every figure, ts-code-mode, every peer, py-code-mode and the floor", () => {
    const lines = DOC.split("\n").filter((l) => l.startsWith("|"));
    const rounds = Number(/median of (\d+) rounds/.exec(lines[0] ?? "")?.[1]);
    expect(rounds).toBeGreaterThan(0);
    const side = (title: string) => ({ title, samples: [{ cold_ms: 1, warm_ms: 1, call_ms: 1, session_kib: 1 }], error: null });
    const expected = renderTable({ rounds, ours: OURS.map((o) => side(o.title)), peers: PEERS.map((p) => side(p.title)), floors: { node: 1, twoProcess: 1, ipc: 1, process: 1 }, python: "reason" }).split("\n");
    expect(lines[0]).toBe(expected[0]);
    expect(lines.slice(2).map((l) => cells(l)[0])).toEqual(FIGURES.map((f) => f.label));
    const width = cells(expected[0]!).length;
    for (const line of lines.slice(2)) expect(cells(line)).toHaveLength(width);
  });

  it("states the cold row beside the floor of the work the default executor must do: two node starts and an IPC message, with `node -e 0` beside it", () => {
    const cold = DOC.split("\n").find((l) => l.startsWith(`| ${FIGURES[0]!.label} |`));
    const floorCell = cells(cold ?? "").at(-1) ?? "";
    // Where the environment sets NODE_EXTRA_CA_CERTS, `node -e 0` without it is given too (bench/lib.mjs envWithoutExtraCa).
    expect(floorCell).toMatch(/^\d+ ms \(a node process starting a node child that sends one IPC message; ours [\d.]+×; `node -e 0` \d+ ms(, [\d.]+ ms without NODE_EXTRA_CA_CERTS, which this machine's environment sets: Node 20 parses that bundle at every start)?\)$/);
  });

  it("gives the reason for every column that was not measured", () => {
    const lines = DOC.split("\n").filter((l) => l.startsWith("|"));
    const header = cells(lines[0]!);
    const notMeasured = new Set(lines.slice(2).flatMap((l) => cells(l).flatMap((c, i) => (c === "not measured" ? [header[i]!] : []))));
    for (const title of notMeasured) expect(DOC).toMatch(new RegExp(`^- ${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not measured: .{10,}`, "m"));
  });
});

describe("bench/peers.mjs", () => {
  it("answers --help without installing anything", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(REPO, "bench", "peers.mjs"), "--help"], { timeout: 60_000 });
    expect(stdout).toContain("--write-docs");
    for (const p of PEERS) expect(stdout).toContain(p.name);
  });
});

describe("README.md", () => {
  it("shows the same table as docs/peers.md, between the markers --write-docs rewrites", () => {
    const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
    const start = readme.indexOf(README_TABLE_START);
    const end = readme.indexOf(README_TABLE_END);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const tableOf = (text: string) => text.split("\n").filter((l) => l.startsWith("|")).join("\n");
    expect(tableOf(readme.slice(start, end))).toBe(tableOf(DOC));
    // What --write-docs does to the README changes only the text between the markers.
    const rewritten = withReadmeTable(readme, "| new |", "2030-01-01 00:00 UTC");
    expect(rewritten.slice(0, start)).toBe(readme.slice(0, start));
    expect(rewritten.slice(rewritten.indexOf(README_TABLE_END))).toBe(readme.slice(end));
    expect(tableOf(rewritten.slice(0, rewritten.indexOf(README_TABLE_END)).slice(start))).toBe("| new |");
  });
});
