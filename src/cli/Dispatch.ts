import { Either } from "effect"
import { HELP_FLAGS, type ParsedArgs, parseArgs, suggest } from "./Args.js"
import { type Command, usageLine } from "./Command.js"
import { commandHelp, globalHelp, groupHelp } from "./Help.js"

/** What the command line asks for: a command to run, or text to print with an exit code (help: 0, usage error: 2). */
export type Plan =
  | { readonly _tag: "Run"; readonly command: Command; readonly args: ParsedArgs }
  | { readonly _tag: "Print"; readonly text: string; readonly exitCode: 0 | 2 }

const help = (text: string): Plan => ({ _tag: "Print", text, exitCode: 0 })
const usage = (message: string, hint: string): Plan => ({ _tag: "Print", text: `error: ${message}\n${hint}`, exitCode: 2 })

const isHelp = (arg: string | undefined) => arg !== undefined && (HELP_FLAGS.includes(arg) || arg === "help")

/** Options before `--` only: after it every word is an argument. */
const asksForHelp = (rest: ReadonlyArray<string>) => {
  const end = rest.indexOf("--")
  return (end < 0 ? rest : rest.slice(0, end)).some((a) => HELP_FLAGS.includes(a))
}

const matches = (c: Command, argv: ReadonlyArray<string>) => c.path.every((word, i) => argv[i] === word)

export const plan = (argv: ReadonlyArray<string>, table: ReadonlyArray<Command>): Plan => {
  const first = argv[0]
  if (first === undefined) return usage("missing command", globalHelp(table))
  if (isHelp(first)) {
    const group = argv[1] === undefined ? [] : table.filter((c) => c.path[0] === argv[1])
    return help(group.length === 0 ? globalHelp(table) : group.length === 1 && group[0]!.path.length === 1 ? commandHelp(group[0]!) : groupHelp(argv[1]!, group))
  }
  const command = table.filter((c) => matches(c, argv)).sort((a, b) => b.path.length - a.path.length)[0]
  if (command) {
    const rest = argv.slice(command.path.length)
    if (asksForHelp(rest)) return help(commandHelp(command))
    return Either.match(parseArgs(rest, command), {
      onLeft: (e) => usage(e.message, `Usage: ${usageLine(command)}\nSee: collections ${command.path.join(" ")} --help`),
      onRight: (args) => ({ _tag: "Run", command, args })
    })
  }
  const group = table.filter((c) => c.path[0] === first && c.path.length > 1)
  if (group.length > 0) {
    const second = argv[1]
    if (isHelp(second)) return help(groupHelp(first, group))
    const subs = group.map((c) => c.path[1]!)
    const what = second === undefined || second.startsWith("-") ? `"${first}" needs a command` : `unknown command "${first} ${second}"${suggest(second, subs, `${first} `)}`
    return usage(what, groupHelp(first, group))
  }
  const words = [...new Set(table.map((c) => c.path[0]!))]
  return usage(`unknown command "${first}"${suggest(first, words, "")}`, "See: collections --help")
}
