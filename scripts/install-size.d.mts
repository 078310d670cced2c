/** Types of scripts/install-size.mjs for test/package/pack.test.ts, which checks docs/install.md's figures. */
export interface InstallMeasure {
  packages: number;
  kib: number;
  largest: Array<{ name: string; kib: number }>;
}
export const INSTALL_DOC: string;
export const DOC_FIGURES_RE: RegExp;
export function measureInstall(project: string): InstallMeasure;
export function docFigures(m: InstallMeasure, date: string): string;
export function installTarball(tarball: string, dir: string): string;
