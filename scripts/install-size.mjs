/**
 * The weight of `npm install ts-code-mode` (issue 41, a light core): packs the repository (`npm pack`,
 * whose prepack step builds dist/), installs the tarball into an empty folder as a user would, and
 * counts what landed in its node_modules — packages (npm's own list, node_modules/.package-lock.json:
 * the "added N packages" of `npm install`) and disk use (`du -sk node_modules`, in MiB) — with the
 * largest packages. docs/install.md quotes these figures; test/package/pack.test.ts measures its
 * own install the same way and checks them.
 *
 *   node scripts/install-size.mjs                    the figures and the 15 largest packages
 *   node scripts/install-size.mjs --tarball X.tgz    measure that tarball instead of packing
 *   node scripts/install-size.mjs --installed DIR    measure a project that has it installed already
 *   node scripts/install-size.mjs --write-docs       also rewrite the figures in docs/install.md
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const INSTALL_DOC = path.join(ROOT, "docs", "install.md");
/** The figures' sentence in docs/install.md: "(N packages, M MiB measured on YYYY-MM-DD". */
export const DOC_FIGURES_RE = /\((\d+) packages, (\d+) MiB measured on (\d{4}-\d{2}-\d{2})/;

const kibOf = (dir, exclude = []) =>
  Number(execFileSync("du", ["-sk", ...exclude.map((e) => `--exclude=${e}`), dir], { encoding: "utf8" }).split("\t")[0]);

/**
 * What `npm install` put in `project`/node_modules: the package count, its disk use in KiB and each
 * package's own share (its folder without nested node_modules), largest first.
 */
export function measureInstall(project) {
  const modules = path.join(project, "node_modules");
  const lock = JSON.parse(readFileSync(path.join(modules, ".package-lock.json"), "utf8"));
  const names = Object.keys(lock.packages).filter((k) => k !== "");
  const largest = names
    .map((k) => ({ name: k.slice(k.lastIndexOf("node_modules/") + "node_modules/".length), kib: kibOf(path.join(project, k), ["node_modules"]) }))
    .sort((a, b) => b.kib - a.kib);
  return { packages: names.length, kib: kibOf(modules), largest };
}

/** The docs' wording of a measurement. */
export function docFigures(m, date) {
  return `(${m.packages} packages, ${Math.round(m.kib / 1024)} MiB measured on ${date}`;
}

/** Installs `tarball` into a new empty project under `dir` (as a user does, from the registry); returns the project. */
export function installTarball(tarball, dir) {
  const app = path.join(dir, "app");
  mkdirSync(app, { recursive: true });
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: app, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, npm_config_update_notifier: "false" } });
  return app;
}

async function main() {
  const { values } = parseArgs({ options: { tarball: { type: "string" }, installed: { type: "string" }, "write-docs": { type: "boolean", default: false }, top: { type: "string", default: "15" } } });
  if (values.tarball && values.installed) throw new Error("give --tarball or --installed, not both");
  const tmp = mkdtempSync(path.join(os.tmpdir(), "tcm-install-size-"));
  try {
    let tarball = values.tarball && path.resolve(values.tarball);
    if (!tarball && !values.installed) {
      const report = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }));
      tarball = path.join(tmp, report[0].filename);
    }
    // --installed: a project where the tarball is installed already (the pack test's, which installs with installTarball).
    const m = measureInstall(values.installed ? path.resolve(values.installed) : installTarball(tarball, tmp));
    console.log(`${m.packages} packages, ${(m.kib / 1024).toFixed(1)} MiB (du -sk node_modules: ${m.kib} KiB)`);
    for (const p of m.largest.slice(0, Number(values.top))) console.log(`${String(p.kib).padStart(8)} KiB  ${p.name}`);
    if (values["write-docs"]) {
      const doc = readFileSync(INSTALL_DOC, "utf8");
      if (!DOC_FIGURES_RE.test(doc)) throw new Error(`${INSTALL_DOC} has no "(N packages, M MiB measured on DATE" to update`);
      writeFileSync(INSTALL_DOC, doc.replace(DOC_FIGURES_RE, docFigures(m, new Date().toISOString().slice(0, 10))));
      console.log(`updated ${path.relative(ROOT, INSTALL_DOC)}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
