import { Clock, Effect, Either, Layer } from "effect"
import { type FlowConfig, planFirings, type RuleConfig } from "../../src/domain/Automation.js"
import { newId } from "../../src/domain/Ids.js"
import { byScope, type Scope, scopeKey } from "../../src/domain/Mode.js"
import { AUTOMATION, AUTOMATION_FIRED } from "../outbox/Registry.js"
import { type ConsumedEvent, type Consumer, decodeData, makeConsumerRunner } from "../outbox/Runner.js"
import { AutomationSettings, runnerOptionsOf } from "./AutomationSettings.js"
import { Outbox } from "../outbox/Outbox.js"
import { AutomationStore, type NewRun } from "./AutomationStore.js"
import { decodeReconciledFacts, depositFactsOf, type ReconciledData } from "./DepositFacts.js"

/**
 * The planner: for each reconciled deposit, which of its tenant's rules and enabled flows it fires (src/domain/
 * Automation.ts decides), as the configuration stands when the deposit is planned. It writes one run per firing
 * (unique per rule or flow and deposit, so a redelivered or replayed deposit fires nothing again) and stages, for each
 * new run, an internal `internal.automation.fired` event for the actor, all in the runner's transaction. It applies
 * nothing itself: each firing is the actor's own unit of work, retried and dead-lettered alone.
 */
export const plan = (events: ReadonlyArray<PlannedEvent>) =>
  Effect.gen(function* () {
    const store = yield* AutomationStore
    const outbox = yield* Outbox
    const deposits = events.flatMap((e) => {
      const facts = depositFactsOf(e.data)
      return facts ? [{ scope: { tenantId: e.tenantId, mode: e.mode } satisfies Scope, facts }] : []
    })
    if (deposits.length === 0) return
    const scopes = [...new Map(deposits.map((d) => [scopeKey(d.scope), d.scope])).values()]
    const { rules, flows } = yield* store.configsOf(scopes)
    if (rules.length === 0 && flows.length === 0) return
    const rulesOf = byScope<RuleConfig & Scope>(rules)
    const flowsOf = byScope<FlowConfig & Scope>(flows)

    const firedAt = new Date(yield* Clock.currentTimeMillis)
    const planned: Array<NewRun> = deposits.flatMap(({ scope, facts }) =>
      planFirings(rulesOf.get(scopeKey(scope)) ?? [], flowsOf.get(scopeKey(scope)) ?? [], facts).map((f): NewRun => ({
        id: newId("run"), tenantId: scope.tenantId, mode: scope.mode, source: f.source, sourceId: f.sourceId, sourceName: f.sourceName,
        trigger: f.trigger, transactionReference: facts.reference, accountRef: facts.accountRef,
        config: { actions: f.actions, holdKobo: f.holdKobo, why: f.why }, facts, firedAt
      }))
    )
    const inserted = new Set((yield* store.insertRuns(planned)).map((r) => r.id))
    // In planned order (rules, then flows, by priority), each on its own account-and-source key: the actor keeps one
    // rule's or flow's firings for an account in order, and a firing that keeps failing holds back no other.
    yield* outbox.stage(planned.filter((r) => inserted.has(r.id)).map((r) => ({
      tenantId: r.tenantId, mode: r.mode, type: AUTOMATION_FIRED, subjectKey: `${r.accountRef}/${r.source}:${r.sourceId}`, data: { runId: r.id }
    })))
  })

/** A `deposit.reconciled` event with what the planner reads of its data. */
type PlannedEvent = ConsumedEvent & { readonly data: ReconciledData }

/**
 * Each event's data through `decodeReconciledFacts` (only the fields rules and flows read), not the runner's decoding
 * of the whole deposit; an event that does not decode fails as a `MalformedEvent`, which the runner dead-letters at
 * once, as its own decoding would.
 */
const decodeFacts = (events: ReadonlyArray<ConsumedEvent>) =>
  Effect.forEach(events, (e) => Either.map(decodeData(e, decodeReconciledFacts), (data): PlannedEvent => ({ ...e, data })))

export const plannerConsumer: Consumer<AutomationStore | Outbox> = {
  ...AUTOMATION,
  withEnvelope: true,
  handle: (events) => Effect.flatMap(decodeFacts(events), plan)
}

export const AutomationPlannerLive = Layer.scopedDiscard(
  Effect.flatMap(AutomationSettings, (s) => Effect.flatMap(makeConsumerRunner(plannerConsumer, runnerOptionsOf(s)), (r) => r.start))
)
