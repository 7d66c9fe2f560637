import { Cause, Data, type Effect } from "effect"
import { alternatives, type ArgsSpec, type ParsedArgs } from "./Args.js"
import type { AppConfigTag } from "../Config.js"

/** An operator-facing failure (unknown tenant, not approved, …): its message is printed, exit code 1. */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

/** The first line of what went wrong, for a message without a stack. */
export const describeCause = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  if (!(e instanceof Error)) return String(e)
  const inner = e.cause instanceof Error && e.cause.message !== e.message ? ` (${e.cause.message})` : ""
  return `${e.message}${inner}`.split("\n")[0]!
}

/** Any failure or defect as a CliFailure with `prefix`; an interruption (Ctrl-C) stays an interruption. */
export const asCliFailure = (prefix: string) => (cause: Cause.Cause<unknown>): Cause.Cause<CliFailure> =>
  Cause.isInterruptedOnly(cause)
    ? (cause as Cause.Cause<never>)
    : Cause.fail(new CliFailure({ message: `${prefix}: ${describeCause(cause)}` }))

/**
 * One entry of the command table. `run` gets the parsed arguments and the CLI's configuration; it provides whatever
 * else it needs itself (most commands: `withOperatorServices`), so a usage error never opens the database.
 */
export interface Command extends ArgsSpec {
  /** The command words: `["tenants", "approve"]`. */
  readonly path: ReadonlyArray<string>
  readonly summary: string
  /** Extra help text after the options. */
  readonly details?: string
  readonly run: (args: ParsedArgs) => Effect.Effect<void, CliFailure, AppConfigTag>
}

export const usageLine = (c: Command): string => {
  const grouped = new Set((c.oneOf ?? []).flat())
  return [
    "collections",
    ...c.path,
    ...c.positionals.map((p) => `<${p}>`),
    ...(c.optionalPositionals ?? []).map((p) => `[<${p}>]`),
    ...c.options.filter((o) => !grouped.has(o.name)).map((o) => {
      const shown = o.kind === "flag" ? `--${o.name}` : `--${o.name} ${o.valueName ?? "VALUE"}`
      return o.required ? shown : `[${shown}]`
    }),
    ...(c.oneOf ?? []).map((group) => `(${alternatives(group, c)})`)
  ].join(" ")
}
