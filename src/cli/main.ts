import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer } from "effect"
import { commands } from "./Commands.js"
import { describeCause } from "./Command.js"
import { plan } from "./Dispatch.js"
import { CliConfigLive, CliLoggingLive } from "./Env.js"
import { printLine, printNote } from "./Output.js"

/** Runs one command line; the exit code is the answer (0 done, 1 failed, 2 usage error). */
const main = (argv: ReadonlyArray<string>): Effect.Effect<number> => {
  const p = plan(argv, commands)
  if (p._tag === "Print") return Effect.as(p.exitCode === 0 ? printLine(p.text) : printNote(p.text), p.exitCode)
  return p.command.run(p.args).pipe(
    Effect.provide(CliLoggingLive.pipe(Layer.provideMerge(CliConfigLive))),
    Effect.as(0),
    Effect.catchTag("CliFailure", (e) => Effect.as(printNote(`error: ${e.message}`), 1)),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.as(printNote(`error: unexpected failure: ${describeCause(cause)}\n${Cause.pretty(cause)}`), 1)
    ),
    Effect.orDie
  )
}

NodeRuntime.runMain(main(process.argv.slice(2)), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  // Interrupted by SIGINT/SIGTERM: 130, as shells report Ctrl-C.
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) ? (typeof exit.value === "number" ? exit.value : 1) : Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
})
