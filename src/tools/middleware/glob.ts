/**
 * Globs over call names (`tool.callable`): `*` matches within one dot-separated part, `**` across
 * parts, `?` one character. `git.*` matches every git recipe (and not `git` itself), `*` any
 * escape-hatch call, `**` everything.
 */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      re += ".*";
      i++;
    } else if (c === "*") re += "[^.]*";
    else if (c === "?") re += "[^.]";
    else re += c.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

export function matchesAny(name: string, globs: readonly RegExp[]): boolean {
  return globs.some((g) => g.test(name));
}
