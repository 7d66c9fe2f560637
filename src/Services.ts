import { Effect, Layer, Option } from "effect"
import type { SqlClient, SqlError } from "@effect/sql"
import type { ConfigError } from "effect"
import { BUILT_IN, CAPABILITIES } from "../services/Capabilities.js"
import { type Capability, type Staged, Stage } from "../services/Capability.js"
import { ReconcilerWorkersLive } from "../services/deposits/ReconcilerWorkers.js"
import { ConsumerRegistry, UNSET_CONSUMERS } from "../services/outbox/Registry.js"
import { CrossProcessWakeupsLive } from "../services/outbox/CrossProcessWakeups.js"
import type { BankProvider } from "../services/providers/BankProvider.js"
import type { SandboxFaults } from "../services/providers/SandboxFaults.js"
import { SandboxProviderLive } from "../services/providers/SandboxProvider.js"
import { InProcessDepositBusLive } from "../streams/InProcessDepositBus.js"
import { JetStreamDepositBusLive } from "../streams/JetStreamDepositBus.js"
import { InProcessBusHealth, Nats, NatsBusHealth, NatsLinkLive } from "../streams/Nats.js"
import { InProcessSubscribeLive, NatsSubscribeLive } from "../streams/Subscribe.js"
import { ensureTopology } from "../streams/Topology.js"
import { InProcessReconciledBusLive, JetStreamReconciledBusLive } from "../streams/ReconciledBus.js"
import { AppConfigTag } from "./Config.js"
import { TableStatsKeeperLive } from "./db/TableStats.js"
import { MetricsLive } from "./Metrics.js"
import { OutageLogsLive } from "./OutageLog.js"

/**
 * JetStream when NATS_URL is set; otherwise the in-process buses of the embedded default. Also the `subscribe` port
 * (live views) and the bus's health. On NATS, nothing here waits for NATS: the link connects in the background and
 * ensures the topology on every (re)connect (see NatsLinkLive).
 */
export const BusesLive = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) =>
    Option.match(c.natsUrl, {
      onNone: () =>
        Layer.mergeAll(InProcessDepositBusLive, InProcessSubscribeLive, InProcessBusHealth).pipe(Layer.provideMerge(InProcessReconciledBusLive)),
      onSome: (url) => {
        const topology = { prefix: c.natsPrefix }
        const link = NatsLinkLive(url, { onConnect: (nc) => ensureTopology(topology).pipe(Effect.provideService(Nats, nc)) })
        return Layer.mergeAll(JetStreamDepositBusLive(topology), JetStreamReconciledBusLive(topology), NatsSubscribeLive(topology), NatsBusHealth).pipe(
          Layer.provide(link)
        )
      }
    })
  )
)

/**
 * Every capability's services and the buses, given AppConfig and a migrated SqlClient: the layers of each stage
 * (services/Capability.ts `Stage`) merged, each stage provided with everything below it. The bank provider port and
 * the buses sit at the platform stage; the outbox's consumer list is the capabilities' unless a layer outside gives one.
 */
export const makeServices = <E, R>(provider: Layer.Layer<BankProvider, E, R>) => {
  const staged: ReadonlyArray<Staged> = [
    // A fresh metrics registry and outage logs per service (src/Metrics.ts, src/OutageLog.ts).
    [Stage.base, Layer.mergeAll(ConsumersLive, MetricsLive, OutageLogsLive)],
    [Stage.platform, Layer.merge(provider, BusesLive)],
    ...CAPABILITIES.flatMap((c: Capability) => c.services ?? [])
  ]
  const stages = [...new Set(staged.map(([stage]) => stage))].sort((a, b) => a - b)
  const graph = stages.reduce<Layer.Layer<any, any, any> | undefined>((below, stage) => {
    const here = Layer.mergeAll(...(staged.filter(([s]) => s === stage).map(([, layer]) => layer) as [Layer.Layer<any, any, any>]))
    return below === undefined ? here : here.pipe(Layer.provideMerge(below))
  }, undefined)!
  // Typed by hand: computing the graph's output from the manifests' layer types made the checker take minutes and
  // gigabytes. What it needs is the configuration, the database and the provider's own needs (but the sandbox's fault
  // switches, which the graph holds); a layer placed below a
  // service it uses fails at start with "Service not found", which every test that builds the app would show.
  return graph as Layer.Layer<any, E | SqlError.SqlError | ConfigError.ConfigError, AppConfigTag | SqlClient.SqlClient | Exclude<R, SandboxFaults>>
}

/** The outbox's consumers: the capabilities' (BUILT_IN), unless a layer outside the service graph provides a list. */
const ConsumersLive = Layer.effect(ConsumerRegistry, Effect.map(ConsumerRegistry, (given) => (given === UNSET_CONSUMERS ? BUILT_IN : given)))

export const ServicesLive = makeServices(SandboxProviderLive)

/** The workers downstream of the reconciler, and the upkeep: what the main thread runs when the reconciler has a thread of its own. */
export const DownstreamWorkersLive = Layer.mergeAll(
  TableStatsKeeperLive,
  CrossProcessWakeupsLive,
  ...CAPABILITIES.flatMap((c: Capability) => c.workers ?? [])
)

/**
 * The reconciler and the capabilities' thread workers (the automation actor, the insight roll-ups): what the
 * reconciler's thread runs.
 */
export const ThreadWorkersLive = Layer.mergeAll(ReconcilerWorkersLive, ...CAPABILITIES.flatMap((c: Capability) => c.threadWorkers ?? []))

/** The long-running fibers: the reconciler, table statistics and every capability's workers. */
export const WorkersLive = Layer.merge(ThreadWorkersLive, DownstreamWorkersLive)
