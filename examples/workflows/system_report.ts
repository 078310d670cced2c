/**
 * Describe the machine (kernel, architecture, current UTC time) and save the report as a JSON
 * artifact, so later runs can compare against it.
 */
export async function run({ save_as = "reports/system.json" }: {
  /** Artifact name to save the report under. */
  save_as?: string;
}) {
  const report = {
    kernel: (await tools.uname.kernel()).trim(),
    machine: (await tools.uname.machine()).trim(),
    checkedAt: (await tools.date.iso({ utc: true })).trim(),
  };
  await artifacts.save(save_as, report, { description: "Kernel, architecture and time of a system check" });
  return report;
}
