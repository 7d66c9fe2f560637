import { Effect } from "effect"
import { CliFailure, type Command } from "./Command.js"

/** Registered so that help lists them and their arguments are checked; they answer "not available yet" until they land. */
const notYet = (path: ReadonlyArray<string>, spec: Omit<Command, "path" | "run">): Command => ({
  ...spec,
  path,
  run: () => Effect.fail(new CliFailure({ message: `"collections ${path.join(" ")}" is not available yet in this version.` }))
})

export const laterCommands: ReadonlyArray<Command> = [
  notYet(["replay"], {
    summary: "re-feed a stream from a sequence number or a time (after an incident)",
    positionals: [],
    options: [
      { name: "stream", kind: "value", valueName: "deposits|reconciled", description: "which stream", choices: ["deposits", "reconciled"], required: true },
      { name: "from-seq", kind: "value", valueName: "N", description: "start at this stream sequence" },
      { name: "since", kind: "value", valueName: "ISO", description: "start at this time (ISO 8601)" }
    ],
    details: "Give exactly one of --from-seq and --since. Everything downstream is idempotent, so a replay loses and doubles nothing."
  }),
  notYet(["dead-letters", "list"], { summary: "list dead-lettered webhook deliveries", positionals: [], options: [] }),
  notYet(["dead-letters", "replay"], { summary: "re-send one dead-lettered webhook delivery", positionals: ["id"], options: [] })
]
