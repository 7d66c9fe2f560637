import { Effect, Layer } from "effect"
import { ConsumerDeadLetters } from "../../services/outbox/DeadLetters.js"
import { DatabaseMigrated } from "../db/Database.js"
import { asCliFailure, CliFailure, type Command } from "./Command.js"
import { formatTable, printJson, printLine } from "./Output.js"
import { jsonOption } from "./TenantsCommands.js"

const DeadLettersLive = ConsumerDeadLetters.Default.pipe(Layer.provideMerge(DatabaseMigrated("cli")))
const withDeadLetters = <A>(effect: Effect.Effect<A, CliFailure, ConsumerDeadLetters>) =>
  Effect.provide(effect, DeadLettersLive.pipe(Layer.catchAllCause((cause) => Layer.failCause(asCliFailure("cannot open the database")(cause)))))

const consumerOption = { name: "consumer", kind: "value", valueName: "NAME", description: "only this consumer (relay, webhooks, ...)" } as const

const list: Command = {
  path: ["consumers", "dead-letters", "list"],
  summary: "list events a downstream consumer gave up on (dead letters), newest first",
  positionals: [],
  options: [consumerOption, { name: "take", kind: "value", valueName: "N", description: "at most N (default 50, max 500)" }, jsonOption],
  details: "A consumer dead-letters an event after its attempts (8 by default) all failed; the event no longer holds back its account.",
  run: (args) =>
    withDeadLetters(
      Effect.gen(function* () {
        const take = args.values.get("take")
        if (take !== undefined && !/^\d+$/.test(take)) return yield* new CliFailure({ message: `--take must be a positive integer, got ${JSON.stringify(take)}` })
        const consumer = args.values.get("consumer")
        const rows = yield* Effect.flatMap(ConsumerDeadLetters, (d) =>
          d.list({ ...(consumer !== undefined ? { consumer } : {}), ...(take !== undefined ? { take: Number(take) } : {}) })
        )
        if (args.flags.has("json")) return yield* printJson(rows)
        if (rows.length === 0) return yield* printLine("no dead letters")
        yield* printLine(formatTable(
          ["ID", "CONSUMER", "EVENT", "TYPE", "TENANT", "MODE", "KEY", "ATTEMPTS", "DEAD SINCE", "LAST ERROR"],
          rows.map((r) => [
            String(r.id), r.consumer, r.eventId, r.eventType, r.tenantId, r.mode, r.subjectKey, String(r.attempts),
            r.deadLetteredAt.toISOString(), (r.lastError ?? "-").split("\n")[0]!
          ])
        ))
      })
    )
}

const replay: Command = {
  path: ["consumers", "dead-letters", "replay"],
  summary: "put dead-lettered events back to their consumer, attempts reset",
  positionals: [],
  optionalPositionals: ["id"],
  options: [
    { ...consumerOption, description: "with --all: every dead letter of this consumer" },
    { name: "all", kind: "flag", description: "every dead letter of --consumer" }
  ],
  check: (a) =>
    (a.positionals.length === 1) === (a.values.has("consumer") || a.flags.has("all"))
      ? "give either <id> or --consumer NAME --all"
      : a.positionals.length === 0 && !(a.values.has("consumer") && a.flags.has("all"))
        ? "--consumer NAME and --all go together"
        : undefined,
  details: "The consumer handles the events again at its next pass. Consumers are idempotent (the relay by event id, the\n" +
    "webhook stager by its (event, endpoint) key), so a replay doubles nothing.",
  run: (args) =>
    withDeadLetters(
      Effect.gen(function* () {
        const dl = yield* ConsumerDeadLetters
        const id = args.positionals[0]
        if (id !== undefined) {
          const moved = yield* dl.replay(id).pipe(Effect.catchTag("DeadLetterNotFound", (e) => Effect.fail(new CliFailure({ message: e.message }))))
          return yield* printLine(`requeued dead letter ${moved.id} (consumer ${moved.consumer}, outbox event ${moved.outboxId})`)
        }
        const consumer = args.values.get("consumer")!
        const n = yield* dl.replayAll(consumer)
        yield* printLine(`requeued ${n} dead letter${n === 1 ? "" : "s"} of consumer ${consumer}`)
      })
    )
}

export const consumerCommands: ReadonlyArray<Command> = [list, replay]
