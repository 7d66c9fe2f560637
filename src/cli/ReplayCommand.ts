import { Effect, Layer } from "effect"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { Ledger } from "../../services/ledger/Ledger.js"
import { Outbox } from "../../services/outbox/Outbox.js"
import { BUILT_IN } from "../../services/Capabilities.js"
import { replayDeposits, replayReconciled, type ReplayReport } from "../../services/deposits/Replay.js"
import type { AppConfigTag } from "../Config.js"
import type { SqlClient } from "@effect/sql"
import { DatabaseMigrated } from "../db/Database.js"
import { asCliFailure, CliFailure, type Command } from "./Command.js"
import { printJson } from "./Output.js"

const ReplayServicesLive = Reconciler.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(Ledger.Default, Outbox.Default)),
  Layer.provideMerge(DatabaseMigrated("cli"))
)

export const replayCommand: Command = {
  path: ["replay"],
  summary: "re-feed a stream from a sequence number or a time (after an incident)",
  positionals: [],
  options: [
    { name: "stream", kind: "value", valueName: "deposits|reconciled", description: "which stream", choices: ["deposits", "reconciled"], required: true },
    { name: "from-seq", kind: "value", valueName: "N", description: "start at this stream sequence" },
    { name: "since", kind: "value", valueName: "ISO", description: "start at this time (ISO 8601)" },
    {
      name: "consumer", kind: "value", valueName: "NAME", choices: BUILT_IN.map((c) => c.name),
      description: `with --stream reconciled: re-feed only this consumer (${BUILT_IN.map((c) => c.name).join(", ")}; default webhooks)`
    }
  ],
  oneOf: [["from-seq", "since"]],
  check: (a) => (a.values.has("consumer") && a.values.get("stream") !== "reconciled" ? "--consumer goes with --stream reconciled" : undefined),
  details: "Give exactly one of --from-seq and --since. Everything downstream is idempotent, so a replay loses and doubles nothing.\n" +
    "--stream reconciled puts the committed events back among one consumer's pending rows (attempts reset, out of its\n" +
    "dead letters); it handles them again at its next pass, de-duplicating by event id (relay) or (event, endpoint) (webhooks).",
  run: (args) =>
    Effect.gen(function* () {
      const fromSeq = args.values.get("from-seq")
      const since = args.values.get("since")
      if ((fromSeq === undefined) === (since === undefined)) return yield* new CliFailure({ message: "give exactly one of --from-seq N and --since ISO" })
      if (fromSeq !== undefined && !/^\d+$/.test(fromSeq)) return yield* new CliFailure({ message: `--from-seq must be a positive integer, got ${JSON.stringify(fromSeq)}` })
      if (since !== undefined && Number.isNaN(Date.parse(since))) return yield* new CliFailure({ message: `--since must be an ISO 8601 time, got ${JSON.stringify(since)}` })
      const start = fromSeq !== undefined ? { seq: Math.max(1, Number(fromSeq)) } : { since: new Date(since!) }
      const consumer = BUILT_IN.find((c) => c.name === (args.values.get("consumer") ?? "webhooks"))!
      const replay: Effect.Effect<ReplayReport, unknown, AppConfigTag | SqlClient.SqlClient | Reconciler> =
        args.values.get("stream") === "deposits" ? replayDeposits(start) : replayReconciled(start, consumer)
      const report = yield* replay.pipe(
        Effect.provide(ReplayServicesLive),
        Effect.catchAllCause((cause) => Effect.failCause(asCliFailure("replay failed")(cause)))
      )
      yield* printJson(report)
    })
}
