import { alternatives } from "./Args.js"
import { type Command, usageLine } from "./Command.js"

const columns = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join("\n")
}

/** The command words, positionals and required options: `keys create --tenant ID --mode test|live`. */
const shortUsage = (c: Command): string =>
  [
    ...c.path,
    ...c.positionals.map((p) => `<${p}>`),
    ...(c.optionalPositionals ?? []).map((p) => `[<${p}>]`),
    ...c.options.filter((o) => o.required).map((o) => `--${o.name} ${o.valueName ?? "VALUE"}`),
    ...(c.oneOf ?? []).map((group) => alternatives(group, c))
  ].join(" ")

export const EXIT_CODES = "Exit codes: 0 done, 1 failed (the message says why), 2 usage error."

export const globalHelp = (table: ReadonlyArray<Command>): string =>
  [
    "collections: the operator CLI of the collections service",
    "",
    "Usage: collections <command> [options]",
    "",
    "Commands:",
    columns(table.map((c) => [shortUsage(c), c.summary] as const)),
    "",
    "Options:",
    columns([["-h, --help", "show help (also after any command: collections keys create --help)"]]),
    "",
    "It reads the same environment variables as the service (DATABASE_URL, DATA_DIR, DATA_ENCRYPTION_KEY, ...).",
    "Without DATABASE_URL it uses the embedded Postgres under DATA_DIR (default ./.data): the one a running",
    "service serves, or one it starts for the command. LOG_LEVEL defaults to Warning here; logs go to stderr.",
    EXIT_CODES
  ].join("\n")

export const groupHelp = (group: string, table: ReadonlyArray<Command>): string =>
  [`Usage: collections ${group} <command> [options]`, "", "Commands:", columns(table.map((c) => [usageLine(c), c.summary] as const))].join("\n")

export const commandHelp = (c: Command): string =>
  [
    `Usage: ${usageLine(c)}`,
    "",
    c.summary,
    "",
    "Options:",
    columns([
      ...c.options.map(
        (o) => [o.kind === "flag" ? `--${o.name}` : `--${o.name} ${o.valueName ?? "VALUE"}`, o.description + (o.required ? " (required)" : "")] as const
      ),
      ["-h, --help", "show this help"] as const
    ]),
    ...(c.details ? ["", c.details] : [])
  ].join("\n")
