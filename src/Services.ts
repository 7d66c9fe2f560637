import { Effect, Layer, Option } from "effect"
import { ApiKeys } from "../services/access/ApiKeys.js"
import { Inbox } from "../services/deposits/Inbox.js"
import { Receiver } from "../services/deposits/Receiver.js"
import { Reconciler } from "../services/deposits/Reconciler.js"
import { Reviews } from "../services/deposits/Reviews.js"
import { AutomationActor, AutomationActorLive } from "../services/automation/Actor.js"
import { AutomationStore } from "../services/automation/AutomationStore.js"
import { Flows } from "../services/automation/Flows.js"
import { AutomationPlannerLive } from "../services/automation/Planner.js"
import { Rules } from "../services/automation/Rules.js"
import { KeysLayer } from "../services/access/Keys.js"
import { Ledger } from "../services/ledger/Ledger.js"
import { Outbox } from "../services/outbox/Outbox.js"
import type { BankProvider } from "../services/providers/BankProvider.js"
import { SandboxFaults } from "../services/providers/SandboxFaults.js"
import { ProvidersLive } from "../services/providers/Providers.js"
import { PaystackInbound } from "../services/providers/PaystackInbound.js"
import { ProviderSetup } from "../services/providers/ProviderSetup.js"
import { ProviderCredits } from "../services/providers/ProviderCredits.js"
import { MonnifyInbound } from "../services/providers/MonnifyInbound.js"
import { ProviderSync, ProviderSyncLive } from "../services/providers/ProviderSync.js"
import { SandboxProviderLive } from "../services/providers/SandboxProvider.js"
import { SandboxReporterLive } from "../services/providers/SandboxReporter.js"
import { BankDirectory } from "../services/transfers/BankDirectory.js"
import { Holds } from "../services/transfers/Holds.js"
import { HoldStore } from "../services/transfers/HoldStore.js"
import { TransferOutcomes } from "../services/transfers/Outcomes.js"
import { PayoutCaps } from "../services/transfers/PayoutCaps.js"
import { Payouts } from "../services/transfers/Payouts.js"
import { Refunds } from "../services/transfers/Refunds.js"
import { TransferCompleterLive, TransferDispatch } from "../services/transfers/TransferDispatch.js"
import { TransferStore } from "../services/transfers/TransferStore.js"
import { Checkout, CheckoutClock } from "../services/checkout/Checkout.js"
import { Billing, BillingClock } from "../services/billing/Billing.js"
import { Copilot } from "../services/copilot/Copilot.js"
import { CopilotReads } from "../services/copilot/CopilotReads.js"
import { Insights } from "../services/insights/Insights.js"
import { InsightsLive } from "../services/insights/InsightsConsumer.js"
import { LanguageModelLive } from "../services/copilot/LanguageModel.js"
import { Rollups } from "../services/insights/Rollups.js"
import { BillingPassesLive } from "../services/billing/BillingPasses.js"
import { BillingConsumerLive } from "../services/billing/BillingConsumer.js"
import { AutoSettleLive } from "../services/settlement/AutoSettle.js"
import { SettlementConfig } from "../services/settlement/SettlementConfig.js"
import { Settlements } from "../services/settlement/Settlements.js"
import { SettlementStore } from "../services/settlement/SettlementStore.js"
import { SubMerchants } from "../services/settlement/SubMerchants.js"
import { Tenants } from "../services/access/Tenants.js"
import { Tokens } from "../services/access/Tokens.js"
import { Transactions } from "../services/deposits/Transactions.js"
import { Users } from "../services/access/Users.js"
import { VirtualAccounts } from "../services/accounts/VirtualAccounts.js"
import { InboxSweeperLive } from "../services/deposits/InboxSweeper.js"
import { InProcessDepositBusLive } from "../streams/InProcessDepositBus.js"
import { JetStreamDepositBusLive } from "../streams/JetStreamDepositBus.js"
import { InProcessBusHealth, Nats, NatsBusHealth, NatsLinkLive } from "../streams/Nats.js"
import { InProcessSubscribeLive, NatsSubscribeLive } from "../streams/Subscribe.js"
import { ensureTopology } from "../streams/Topology.js"
import { OutboxRelayLive } from "../services/outbox/OutboxRelay.js"
import { InProcessReconciledBusLive, JetStreamReconciledBusLive } from "../streams/ReconciledBus.js"
import { ReconcilerWorkersLive } from "../services/deposits/ReconcilerWorkers.js"
import { WebhookDispatcherLive } from "../services/webhooks/WebhooksLive.js"
import { AppConfigTag } from "./Config.js"
import { TableStatsKeeperLive } from "./db/TableStats.js"

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

/** Every domain service and the buses, given AppConfig and a migrated SqlClient. */
export const makeServices = <E, R>(provider: Layer.Layer<BankProvider, E, R>) =>
  Copilot.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(Insights.Default, Rollups.Default, CopilotReads.Default, LanguageModelLive)),
    Layer.provideMerge(Layer.mergeAll(Refunds.Default, AutomationActor.Default, Rules.Default, Flows.Default, Settlements.Default, Checkout.Default, Billing.Default)),
    Layer.provideMerge(Layer.mergeAll(Payouts.Default, Holds.Default, AutomationStore.Default, SettlementConfig.Default)),
    Layer.provideMerge(SubMerchants.Default),
    Layer.provideMerge(Layer.mergeAll(PaystackInbound.Default, MonnifyInbound.Default, ProviderSync.Default, ProviderSetup.Default)),
    Layer.provideMerge(ProviderCredits.Default),
    Layer.provideMerge(Layer.mergeAll(Receiver.Default, Reconciler.Default, Reviews.Default, TransferDispatch.Default, BankDirectory.Default)),
    Layer.provideMerge(TransferOutcomes.Default),
    Layer.provideMerge(SettlementStore.Default),
    Layer.provideMerge(Layer.mergeAll(
      Users.Default, ApiKeys.Default, VirtualAccounts.Default, Inbox.Default, Transactions.Default, Ledger.Default,
      TransferStore.Default, HoldStore.Default, PayoutCaps.Default
    )),
    Layer.provideMerge(ProvidersLive),
    Layer.provideMerge(Layer.mergeAll(Tenants.Default, Tokens.Default, provider, BusesLive, Outbox.Default)),
    Layer.provideMerge(Layer.mergeAll(KeysLayer, SandboxFaults.Default, CheckoutClock.Default, BillingClock.Default))
  )

export const ServicesLive = makeServices(SandboxProviderLive)

/** The workers downstream of the reconciler, and the upkeep: what the main thread runs when the reconciler has a thread of its own. */
export const DownstreamWorkersLive = Layer.mergeAll(
  InboxSweeperLive, OutboxRelayLive, WebhookDispatcherLive, TableStatsKeeperLive, TransferCompleterLive, SandboxReporterLive,
  AutomationPlannerLive, AutomationActorLive, AutoSettleLive, BillingPassesLive, BillingConsumerLive, InsightsLive, ProviderSyncLive
)

/** The reconciler alone: what the reconciler's thread runs. */
export const ReconcilerLive = ReconcilerWorkersLive

/**
 * The long-running fibers: the reconciler, the inbox sweeper, the outbox relay, webhook dispatch, table statistics, the
 * transfer completer, the sandbox provider's outcome reports, the money rules and payment flows (planner and actor), and
 * auto-settle, the billing clock and the billing consumer.
 */
export const WorkersLive = Layer.merge(ReconcilerLive, DownstreamWorkersLive)
