import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { pacedPasses } from "../../src/Pacing.js"
import { Receiver } from "../deposits/Receiver.js"
import { signSandboxEvent } from "../deposits/SandboxEvent.js"
import { Tenants } from "../access/Tenants.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import { outageLog } from "../../src/OutageLog.js"

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
    FROM sandbox_provider_transfers WHERE NOT done AND outcome <> 'slow' AND report_after <= now() ORDER BY report_after LIMIT 100`.pipe(Effect.orDie)
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

export const SandboxReporterLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const settings = yield* MoneyOutSettings
    // Every interval while reports are due; after empty passes the wait doubles up to 4 intervals (quiet at rest).
    const pace = { baseMs: settings.sandboxReportIntervalMs, idleMaxMs: 4 * settings.sandboxReportIntervalMs }
    yield* pacedPasses(pace, reportDueOnce, (n) => n > 0, { outages: yield* outageLog("sandbox provider reports") }).pipe(Effect.forkScoped)
  })
)
