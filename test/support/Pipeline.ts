import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Schedule } from "effect"
import * as crypto from "node:crypto"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { call } from "./TestApp.js"

export interface Tenant {
  readonly tenantId: string
  readonly ownerToken: string
  readonly token: string
  readonly merchantId: string
  readonly webhookSecret: string
}

export const sessionId = () => `999999${Date.now()}${crypto.randomBytes(6).toString("hex")}`.slice(0, 30)

export interface InboundFields {
  readonly accountNumber: string
  readonly amountKobo: number
  readonly sessionId?: string
  readonly event?: string
  readonly senderName?: string | null
  readonly senderAccountNumber?: string | null
  readonly paidAt?: string
  readonly reversedSessionId?: string | null
}

export const eventBody = (t: Pick<Tenant, "merchantId">, f: InboundFields) => ({
  event: f.event ?? "transfer.inbound",
  merchantId: t.merchantId,
  sessionId: f.sessionId ?? sessionId(),
  accountNumber: f.accountNumber,
  amountKobo: f.amountKobo,
  senderName: f.senderName === undefined ? "ADEYEMI JOHN O" : f.senderName,
  senderAccountNumber: f.senderAccountNumber ?? null,
  senderBankCode: "058",
  narration: "test",
  paidAt: f.paidAt ?? new Date().toISOString(),
  reversedSessionId: f.reversedSessionId ?? null
})

/** POSTs a correctly signed sandbox webhook to the receiver. */
export const sendSigned = (t: Pick<Tenant, "merchantId" | "webhookSecret">, f: InboundFields, path = "/webhooks/sandbox") =>
  Effect.gen(function* () {
    const body = eventBody(t, f)
    const res = yield* callWithHeaders("POST", path, JSON.stringify(body), { "x-sandbox-signature": signSandboxEvent(t.webhookSecret, body) })
    return { ...res, sessionId: body.sessionId }
  })

export const callWithHeaders = (method: "POST", url: string, body: string, headers: Record<string, string>) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const req = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.bodyText(body, "application/json"), HttpClientRequest.setHeaders(headers))
    const res = yield* client.execute(req)
    const text = yield* res.text
    let parsed: any = text
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = text
    }
    return { status: res.status, contentType: res.headers["content-type"] ?? "", body: parsed }
  }).pipe(Effect.scoped, Effect.orDie)

/** A tenant with a test key token and its test-mode merchant id and webhook secret. */
export const testTenant = Effect.gen(function* () {
  const suffix = crypto.randomBytes(4).toString("hex")
  const s = yield* call("POST", "/api/v1/dashboard/signup", {
    json: { businessName: `Biz ${suffix}`, email: `o-${suffix}@example.ng`, password: "correct horse battery staple" }
  })
  const login = yield* call("POST", "/api/v1/dashboard/login", { json: { email: `o-${suffix}@example.ng`, password: "correct horse battery staple", mode: "test" } })
  const key = yield* call("POST", "/api/v1/dashboard/api-keys", { token: s.body.accessToken, json: { mode: "test" } })
  const tok = yield* call("POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })
  const provider = yield* call("GET", "/api/v1/dashboard/provider", { token: login.body.accessToken })
  return {
    tenantId: s.body.tenantId as string,
    ownerToken: s.body.accessToken as string,
    testOwnerToken: login.body.accessToken as string,
    token: tok.body.accessToken as string,
    merchantId: provider.body.merchantId as string,
    webhookSecret: provider.body.webhookSecret as string
  }
})

export const createAccount = (token: string, accountRef: string, name: string, expectedAmountKobo?: number) =>
  Effect.flatMap(call("POST", "/api/v1/virtual-accounts", { token, json: { accountRef, name, ...(expectedAmountKobo ? { expectedAmountKobo } : {}) } }), (r) =>
    r.status === 201 ? Effect.succeed(r.body as { nuban: string; accountRef: string }) : Effect.die(new Error(`create account failed ${r.status} ${JSON.stringify(r.body)}`))
  )

/** Polls Postgres until the predicate over the reconciled count holds (bounded: 30 s). */
export const waitForTransactions = (tenantId: string, count: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM transactions WHERE tenant_id = ${tenantId}`.pipe(
      Effect.map((r) => r[0]!.n),
      Effect.filterOrFail((n) => n >= count, (n) => new Error(`only ${n} of ${count} transactions reconciled`)),
      Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("30 seconds")))
    )
  }).pipe(Effect.orDie)

export const waitForInboxDrained = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM inbound_events WHERE reconciled_at IS NULL`.pipe(
    Effect.map((r) => r[0]!.n),
    Effect.filterOrFail((n) => n === 0, (n) => new Error(`${n} inbox rows still unreconciled`)),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("60 seconds")))
  )
}).pipe(Effect.orDie)

/**
 * The ledger invariant: every journal sums to zero, and every account's running figure equals the negated balance of
 * its customer_funds ledger account.
 */
export const assertLedgerInvariant = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const unbalanced = yield* sql<{ journalId: string }>`SELECT journal_id FROM ledger_entries GROUP BY journal_id HAVING sum(amount_kobo) <> 0`
  if (unbalanced.length > 0) return yield* Effect.die(new Error(`unbalanced journals: ${unbalanced.map((u) => u.journalId).join(", ")}`))
  const total = yield* sql<{ s: number }>`SELECT COALESCE(sum(amount_kobo), 0)::bigint AS s FROM ledger_entries`
  if (total[0]!.s !== 0) return yield* Effect.die(new Error(`ledger does not sum to zero: ${total[0]!.s}`))
  const drift = yield* sql<{ accountRef: string; amountPaidKobo: number; ledger: number }>`
    SELECT va.account_ref, va.amount_paid_kobo,
      -COALESCE((SELECT sum(amount_kobo) FROM ledger_entries e WHERE e.account = 'customer_funds:' || va.id), 0)::bigint AS ledger
    FROM virtual_accounts va`
  const bad = drift.filter((d) => d.amountPaidKobo !== d.ledger)
  if (bad.length > 0) return yield* Effect.die(new Error(`account figures disagree with the ledger: ${JSON.stringify(bad)}`))
  const applied = yield* sql<{ accountRef: string; amountPaidKobo: number; fromTransactions: number }>`
    SELECT va.account_ref, va.amount_paid_kobo,
      COALESCE((SELECT sum(CASE WHEN t.kind = 'inflow' THEN t.applied_kobo ELSE -t.applied_kobo END) FROM transactions t
        WHERE t.virtual_account_id = va.id AND t.status <> 'PendingReview' AND t.status <> 'Rejected'), 0)::bigint AS from_transactions
    FROM virtual_accounts va`
  const off = applied.filter((a) => a.amountPaidKobo !== a.fromTransactions)
  if (off.length > 0) return yield* Effect.die(new Error(`account figures disagree with transactions: ${JSON.stringify(off)}`))
  return drift.length
})
