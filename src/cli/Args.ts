import { Data, Either } from "effect"

/** A command-line mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export interface OptionSpec {
  /** Long name without dashes: `tenant` for `--tenant`. */
  readonly name: string
  /** A flag takes no value; a value option takes exactly one. */
  readonly kind: "flag" | "value"
  readonly description: string
  /** Shown in help: `--tenant ID`. */
  readonly valueName?: string
  /** When set, the value must be one of these (compared case-sensitively). */
  readonly choices?: ReadonlyArray<string>
  readonly required?: boolean
}

export interface ArgsSpec {
  readonly positionals: ReadonlyArray<string>
  readonly options: ReadonlyArray<OptionSpec>
  /** Groups of value options of which exactly one must be given: `[["from-seq", "since"]]`. */
  readonly oneOf?: ReadonlyArray<ReadonlyArray<string>>
  /** Positionals that may be left out, after the required ones: shown as `[<id>]`. */
  readonly optionalPositionals?: ReadonlyArray<string>
  /** A rule across the arguments the table cannot say (`<id>` or `--consumer NAME --all`): the usage error, if any. */
  readonly check?: (args: ParsedArgs) => string | undefined
}

export interface ParsedArgs {
  readonly positionals: ReadonlyArray<string>
  readonly values: ReadonlyMap<string, string>
  readonly flags: ReadonlySet<string>
}

export const HELP_FLAGS: ReadonlyArray<string> = ["--help", "-h"]

/** Parses `argv` (after the command words) against `spec`. Accepts `--name value`, `--name=value`, and `--` to end options. */
export const parseArgs = (argv: ReadonlyArray<string>, spec: ArgsSpec): Either.Either<ParsedArgs, UsageError> => {
  const positionals: Array<string> = []
  const values = new Map<string, string>()
  const flags = new Set<string>()
  const fail = (message: string) => Either.left(new UsageError({ message }))
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = arg.startsWith("--") ? arg.slice(2, eq < 0 ? undefined : eq) : ""
    const option = spec.options.find((o) => o.name === name)
    if (!option) return fail(`unknown option ${eq < 0 ? arg : arg.slice(0, eq)}${suggest(name, spec.options.map((o) => o.name))}`)
    if (values.has(name) || flags.has(name)) return fail(`--${name} given twice`)
    if (option.kind === "flag") {
      if (eq >= 0) return fail(`--${name} takes no value`)
      flags.add(name)
      continue
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || (eq < 0 && value.startsWith("--"))) return fail(`--${name} needs a value (${option.valueName ?? "VALUE"})`)
    if (value.trim() === "") return fail(`--${name} must not be empty`)
    if (option.choices && !option.choices.includes(value)) {
      return fail(`--${name} must be one of ${option.choices.join(", ")}; got ${JSON.stringify(value)}`)
    }
    values.set(name, value)
  }
  for (const option of spec.options) {
    if (option.required && !values.has(option.name)) return fail(`missing --${option.name} ${option.valueName ?? "VALUE"}`)
  }
  for (const group of spec.oneOf ?? []) {
    if (group.filter((name) => values.has(name)).length !== 1) return fail(`give exactly one of ${alternatives(group, spec, " and ")}`)
  }
  if (positionals.length < spec.positionals.length) {
    return fail(`missing ${spec.positionals.slice(positionals.length).map((p) => `<${p}>`).join(" ")}`)
  }
  const most = spec.positionals.length + (spec.optionalPositionals?.length ?? 0)
  if (positionals.length > most) {
    return fail(`unexpected argument ${JSON.stringify(positionals[most])}`)
  }
  const parsed = { positionals, values, flags }
  const problem = spec.check?.(parsed)
  return problem === undefined ? Either.right(parsed) : fail(problem)
}

/** `--from-seq N | --since ISO` for a oneOf group (`sep` between the alternatives). */
export const alternatives = (group: ReadonlyArray<string>, spec: ArgsSpec, sep = " | "): string =>
  group.map((name) => `--${name} ${spec.options.find((o) => o.name === name)?.valueName ?? "VALUE"}`).join(sep)

/** " (did you mean --x?)" when a known name is within two edits of `name`, else "". */
export const suggest = (name: string, known: ReadonlyArray<string>, prefix = "--"): string => {
  const best = known
    .map((k) => [k, editDistance(name, k)] as const)
    .filter(([, d]) => d <= 2)
    .sort((a, b) => a[1] - b[1])[0]
  return best ? ` (did you mean ${prefix}${best[0]}?)` : ""
}

const editDistance = (a: string, b: string): number => {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = row
  }
  return prev[b.length]!
}
