// The benches' command lines: `--name value`, `--name=value` (repeatable) and bare `--flag`s, each checked against
// what the bench knows, so a misspelt flag stops the run instead of being ignored.

export interface BenchArgs {
  /** Every value given for `--name`, in order. */
  readonly values: ReadonlyMap<string, ReadonlyArray<string>>
  readonly flags: ReadonlySet<string>
  /** The last value of `--name` as a finite number within `ok`, else `dflt`; out of range throws. */
  readonly num: (name: string, dflt: number, ok: (n: number) => boolean) => number
  /** `--service-env K=V` pairs as a record. */
  readonly env: (name: string) => Record<string, string>
}

export const positiveInteger = (n: number) => Number.isSafeInteger(n) && n >= 1

export const parseBenchArgs = (argv: ReadonlyArray<string>, known: { readonly values: ReadonlyArray<string>; readonly flags: ReadonlyArray<string> }): BenchArgs => {
  const values = new Map<string, Array<string>>()
  const flags = new Set<string>()
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (!a.startsWith("--")) throw new Error(`unexpected argument ${JSON.stringify(a)}`)
    const eq = a.indexOf("=")
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2)
    if (known.flags.includes(name)) {
      flags.add(name)
      continue
    }
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i]
    if (value === undefined) throw new Error(`--${name} needs a value`)
    values.set(name, [...(values.get(name) ?? []), value])
  }
  for (const k of values.keys()) {
    if (!known.values.includes(k)) throw new Error(`unknown flag --${k} (known: ${[...known.values, ...known.flags].map((x) => `--${x}`).join(" ")})`)
  }
  const num = (name: string, dflt: number, ok: (n: number) => boolean) => {
    const raw = values.get(name)?.at(-1)
    const n = raw === undefined ? dflt : Number(raw)
    if (!Number.isFinite(n) || !ok(n)) throw new Error(`--${name} ${raw} is out of range`)
    return n
  }
  const env = (name: string) => {
    const out: Record<string, string> = {}
    for (const kv of values.get(name) ?? []) {
      const eq = kv.indexOf("=")
      if (eq <= 0) throw new Error(`--${name} wants K=V, got ${kv}`)
      out[kv.slice(0, eq)] = kv.slice(eq + 1)
    }
    return out
  }
  return { values, flags, num, env }
}
