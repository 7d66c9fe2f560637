import { Effect } from "effect"
import { CliFailure, type Command } from "./Command.js"

/** Registered so that help lists them and their arguments are checked; they answer "not available yet" until they land. */
const notYet = (path: ReadonlyArray<string>, spec: Omit<Command, "path" | "run">): Command => ({
  ...spec,
  path,
  run: () => Effect.fail(new CliFailure({ message: `"collections ${path.join(" ")}" is not available yet in this version.` }))
})

export const laterCommands: ReadonlyArray<Command> = [
  notYet(["dead-letters", "list"], { summary: "list dead-lettered webhook deliveries", positionals: [], options: [] }),
  notYet(["dead-letters", "replay"], { summary: "re-send one dead-lettered webhook delivery", positionals: ["id"], options: [] })
]
