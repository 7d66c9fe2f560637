import { expect, it } from "@effect/vitest"
import { Effect, Layer, PubSub } from "effect"
import { relayConsumer } from "../../services/outbox/OutboxRelay.js"
import type { ConsumedEvent } from "../../services/outbox/Runner.js"
import { ReconciledBus, type ReconciledMessage } from "../../streams/ReconciledBus.js"

// The relay before the NATS link is up (issue 33: a restarted worker claimed before its link was ready and reported
// "6 of 6 events not published"): it publishes nothing, reports nothing and leaves every row for the next pass; once
// the link is up, the same events go, in order.

const events: ReadonlyArray<ConsumedEvent> = [1, 2, 3].map((i) => ({
  outboxId: i, eventId: `evt_${i}`, tenantId: "ten_1", mode: "test", eventType: "deposit.reconciled", subjectKey: "acct-1", attempts: 0,
  envelopeJson: `{"id":"evt_${i}","type":"deposit.reconciled","createdAt":"2026-11-28T00:00:00.000Z","mode":"test","data":{}}`
}))

const busWith = (up: { value: boolean }, sent: Array<string>) =>
  Layer.effect(ReconciledBus, Effect.map(PubSub.unbounded<ReconciledMessage>(), (local) => ({
    local,
    ready: Effect.sync(() => up.value),
    publishMany: (ms: ReadonlyArray<ReconciledMessage>) => Effect.sync(() => ms.map((m) => (up.value ? (sent.push(m.eventId), true) : false)))
  })))

it.effect("the relay waits for the link: nothing published, nothing done, then everything in order", () =>
  Effect.gen(function* () {
    const up = { value: false }
    const sent: Array<string> = []
    const handle = (relayConsumer.handle as (es: ReadonlyArray<ConsumedEvent>) => Effect.Effect<number | void, unknown, ReconciledBus>)
    const before = yield* handle(events).pipe(Effect.provide(busWith(up, sent)))
    expect(before).toBe(0)
    expect(sent).toEqual([])
    up.value = true
    const after = yield* handle(events).pipe(Effect.provide(busWith(up, sent)))
    expect(after).toBe(3)
    expect(sent).toEqual(["evt_1", "evt_2", "evt_3"])
  }))
