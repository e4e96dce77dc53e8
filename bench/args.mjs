// The bench scripts' command-line options: `--name value` pairs taken out of the arguments,
// so what is left is the list of files.

/** The value after `name` in `args` (both removed from it), or `fallback` when absent. */
export function option(args, name, fallback) {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
}
