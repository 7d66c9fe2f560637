import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Queue } from "effect"
import { wakeEverywhere } from "../outbox/CrossProcessWakeups.js"
import { OutboxWakeups } from "../outbox/Wakeups.js"
import { Receiver } from "../deposits/Receiver.js"
import { signSandboxEvent } from "../deposits/SandboxEvent.js"
import { Tenants } from "../access/Tenants.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import { outageLog } from "../../src/OutageLog.js"

/** Not an event: what the reporter listens for, nudged when the sandbox bank accepts a transfer (a report is then due soon). */
export const SANDBOX_REPORTS_DUE = "internal.sandbox-reports-due"
/** The reports a pass sends at most; a full pass is followed by another one interval later. */
const REPORTS_PER_PASS = 100
/** The longest the reporter sleeps with nothing due and no nudge: a safety net only (a nudge or a due time wakes it). */
export const REPORTER_IDLE_MAX_MS = 60_000

/** In the sandbox bank, once it has accepted a transfer: wakes the reporter here and, through Postgres, in the other processes. */
export const reportsDue = Effect.flatMap(SqlClient.SqlClient, (sql) => wakeEverywhere(sql, [SANDBOX_REPORTS_DUE]))

/**
 * How long the reporter waits after a pass that sent `sent` reports: one interval after a full pass (more are likely
 * due), else until the next report falls due (`nextDueInMs`, null when none is waiting), never less than one interval
 * nor more than REPORTER_IDLE_MAX_MS.
 */
export const reporterWaitMs = (intervalMs: number, sent: number, nextDueInMs: number | null) =>
  sent >= REPORTS_PER_PASS ? intervalMs : Math.min(REPORTER_IDLE_MAX_MS, Math.max(intervalMs, nextDueInMs ?? REPORTER_IDLE_MAX_MS))

interface Due {
  readonly merchantId: string
  readonly reference: string
  readonly providerReference: string
  readonly accountNumber: string
  readonly amountKobo: number
  readonly outcome: "success" | "failed" | "reversed"
  readonly status: "Processing" | "Successful"
}

/** What the sandbox bank reports next about a transfer, and the state that leaves it in. */
const nextReport = (d: Due) =>
  d.status === "Processing"
    ? d.outcome === "failed"
      ? { event: "transfer.failed", status: "Failed", done: true, reason: "Beneficiary bank declined the transfer (sandbox FAIL TRANSFER account)" }
      : { event: "transfer.success", status: "Successful", done: d.outcome === "success", reason: null }
    : { event: "transfer.reversed", status: "Reversed", done: true, reason: "Beneficiary bank returned the funds (sandbox REVERSE TRANSFER account)" }

/**
 * The sandbox bank's side of outbound transfers: once a transfer's report is due it tells us the outcome through its
 * signed webhook, into our own receiver, exactly as a real provider calls it (`transfer.success`, `transfer.failed`;
 * a REVERSE TRANSFER account reports success and, a delay later, `transfer.reversed`). A SLOW TRANSFER never reports:
 * only the completer's status check finds it done. A report is marked sent after the receiver answered, so a crash
 * in between sends it again, and the receiver answers it `duplicate`.
 */
export const reportDueOnce = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const receiver = yield* Receiver
  const tenants = yield* Tenants
  const settings = yield* MoneyOutSettings
  const due = yield* sql<Due>`SELECT merchant_id, reference, provider_reference, account_number, amount_kobo, outcome, status
    FROM sandbox_provider_transfers WHERE NOT done AND outcome <> 'slow' AND report_after <= now() ORDER BY report_after LIMIT ${REPORTS_PER_PASS}`.pipe(Effect.orDie)
  for (const d of due) {
    const creds = yield* tenants.byMerchantId(d.merchantId)
    if (!creds) continue
    const next = nextReport(d)
    const body = {
      event: next.event, merchantId: d.merchantId, sessionId: d.providerReference, reference: d.reference,
      accountNumber: d.accountNumber, amountKobo: d.amountKobo, paidAt: new Date().toISOString(), reason: next.reason
    }
    yield* receiver.receive("sandbox", JSON.stringify(body), signSandboxEvent(creds.webhookSecret, body)).pipe(
      Effect.zipRight(sql`UPDATE sandbox_provider_transfers SET status = ${next.status}, done = ${next.done}, reported = reported || ${next.event}::text,
          report_after = now() + make_interval(secs => ${settings.sandboxReportDelayMs / 1000})
        WHERE merchant_id = ${d.merchantId} AND reference = ${d.reference} AND status = ${d.status}`.pipe(Effect.orDie)),
      Effect.catchAll((e) => Effect.logWarning(`sandbox provider: our receiver refused the ${next.event} report of ${d.reference}: ${JSON.stringify(e)}`))
    )
  }
  return due.length
})

/** Milliseconds until the next report falls due (0 if one is due now), or null when none is waiting. */
const nextDueInMs = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly ms: number | null }>`SELECT ceil(extract(epoch FROM min(report_after) - now()) * 1000)::float8 AS ms
    FROM sandbox_provider_transfers WHERE NOT done AND outcome <> 'slow'`).pipe(Effect.map((rows) => rows[0]?.ms ?? null), Effect.orDie)

/**
 * Sleeps until the next report is due (at most REPORTER_IDLE_MAX_MS) or the sandbox bank accepts a transfer
 * (SANDBOX_REPORTS_DUE, from this process or another through Postgres), so at rest it asks Postgres once a minute
 * (two statements), not every few seconds (issue 33: the embedded default's CPU at rest). A failed pass is reported once per outage
 * (src/OutageLog.ts) and tried again one interval later.
 */
export const SandboxReporterLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const settings = yield* MoneyOutSettings
    const outages = yield* outageLog("sandbox provider reports")
    const wake = yield* Queue.sliding<void>(1)
    const hub = yield* OutboxWakeups
    yield* Effect.acquireRelease(
      Effect.sync(() => hub.listen({ eventTypes: [SANDBOX_REPORTS_DUE] }, () => void Queue.unsafeOffer(wake, undefined))),
      (off) => Effect.sync(off)
    )
    const pass = Effect.gen(function* () {
      const sent = yield* reportDueOnce
      return reporterWaitMs(settings.sandboxReportIntervalMs, sent, sent >= REPORTS_PER_PASS ? 0 : yield* nextDueInMs)
    }).pipe(
      Effect.zipLeft(outages.succeeded()),
      Effect.catchAllCause((cause) => Effect.as(outages.failed(cause), settings.sandboxReportIntervalMs))
    )
    yield* pass.pipe(
      Effect.flatMap((waitMs) => Effect.raceFirst(Effect.sleep(Duration.millis(waitMs)), Queue.take(wake))),
      Effect.forever,
      Effect.forkScoped
    )
  })
)
