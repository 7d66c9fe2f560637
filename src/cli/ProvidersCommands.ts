import { Effect, Layer } from "effect"
import { Inbox } from "../../services/deposits/Inbox.js"
import { ProvidersLive } from "../../services/providers/Providers.js"
import { ProviderSync } from "../../services/providers/ProviderSync.js"
import { SandboxFaults } from "../../services/providers/SandboxFaults.js"
import { SandboxProviderLive } from "../../services/providers/SandboxProvider.js"
import type { Mode } from "../domain/Mode.js"
import { CliFailure, type Command } from "./Command.js"
import { withOperatorServices } from "./Env.js"
import { printLine } from "./Output.js"
import { existingTenant } from "./TenantsCommands.js"

/** What the sync needs beside the operator services: the provider router (its sandbox adapter too) and the inbox. */
const SyncServicesLive = ProviderSync.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(ProvidersLive, Inbox.Default)),
  Layer.provideMerge(SandboxProviderLive),
  Layer.provideMerge(SandboxFaults.Default)
)

const sync: Command = {
  path: ["providers", "sync"],
  summary: "record the credits a connected provider has and the inbox lacks (missed webhooks); prints {found, recorded, known}",
  positionals: ["tenantId"],
  options: [
    { name: "mode", kind: "value", valueName: "test|live", description: "the mode whose connection to sync", choices: ["test", "live"], required: true },
    { name: "since", kind: "value", valueName: "ISO-8601", description: "the window's start (default: PROVIDER_SYNC_WINDOW_HOURS ago, 48 hours)" }
  ],
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const tenantId = args.positionals[0]!
        const mode = args.values.get("mode") as Mode
        yield* existingTenant(tenantId)
        const sinceRaw = args.values.get("since")
        const since = sinceRaw === undefined ? undefined : new Date(sinceRaw)
        if (since !== undefined && Number.isNaN(since.getTime())) {
          return yield* new CliFailure({ message: `--since must be an ISO-8601 date-time, got ${JSON.stringify(sinceRaw)}` })
        }
        const job = yield* ProviderSync
        const result = yield* job.sync({ tenantId, mode }, since ? { from: since } : undefined).pipe(
          Effect.mapError((e) => new CliFailure({ message: `the provider did not answer: ${e.reason}` }))
        )
        // The inbox sweeper of the running service publishes what was recorded; the reconciler takes it from there.
        yield* printLine(JSON.stringify(result))
      }).pipe(Effect.provide(SyncServicesLive))
    )
}

export const providersCommands: ReadonlyArray<Command> = [sync]
