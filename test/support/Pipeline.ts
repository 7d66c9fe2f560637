import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { familyOf } from "../../src/domain/Ledger.js"
import { call } from "./TestApp.js"
import { waitFor } from "./Wait.js"

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

/** Polls Postgres until the tenant has at least `count` reconciled transactions (bounded: 30 s); answers the count. */
export const waitForTransactions = (tenantId: string, count: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    waitFor(
      `${count} transactions of ${tenantId} reconciled`,
      sql<{ n: number }>`SELECT count(*)::bigint AS n FROM transactions WHERE tenant_id = ${tenantId}`.pipe(Effect.map((r) => r[0]!.n)),
      { until: (n) => n >= count, timeoutMs: 30_000 }
    ))

/** Polls Postgres until no inbox row is left unreconciled (bounded: 60 s). */
export const waitForInboxDrained = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  waitFor(
    "every inbox row reconciled (unreconciled rows left)",
    sql<{ n: number }>`SELECT count(*)::bigint AS n FROM inbound_events WHERE reconciled_at IS NULL`.pipe(Effect.map((r) => r[0]!.n)),
    { until: (n) => n === 0, timeoutMs: 60_000 }
  )).pipe(Effect.asVoid)

/**
 * The ledger invariant, as DESIGN.md "Money and ledger" states it, over the whole database (every tenant and mode):
 * 1. every journal balances within its tenant and mode; every account belongs to the chart, and only an account whose
 *    family may change sign has a natural balance below zero;
 * 2. amountPaidKobo = applied credits - applied reversals - refunds (refund journals `rfd:` out of the account);
 * 3. what the account's money accounts hold (customer_funds + escrow) = amountPaidKobo - what was settled out of it
 *    (settlement journals `stl:`) + what its deposits' journals (`txn:`, `review:`) posted to tenant_receivable: a late
 *    reversal's part owed (+), and what its later collections recovered of what was owed (-);
 * 4. every guarded balance row equals its entries: `available` (the sum of its stripes) = -(every customer_funds +
 *    payouts_drawn) of the tenant
 *    and mode; `escrow:<va>`, `sub_merchant:<id>` and `tenant_receivable` their own natural balance; an account with
 *    entries and no row is 0; and the tenant's receivable flag (`tenants.receivable_modes`, what the deposit path reads
 *    instead of the receivable) names exactly the modes whose receivable is above zero;
 * 5. money out: payouts_in_transit and refunds_in_transit hold exactly the transfers still Pending or Processing,
 *    payouts_drawn the payouts not failed or reversed; each day's payout counter is the sum of that day's payouts not
 *    failed, never over its cap; an account's escrow is the sum of its active holds (for accounts with holds);
 *    settlements_in_transit holds exactly the settlement legs' transfers still Pending or Processing;
 * 6. settlement: a settlement's legs sum to its net; sub_merchant:<id>, fees:platform and settlement_pending hold
 *    exactly the legs whose latest transfer failed or was reversed (waiting for a retry);
 * 7. every transaction's tenant, inbox row and account (when it names one) exist, and every inbox row's tenant (no
 *    foreign key checks these).
 * Returns how many virtual accounts it checked.
 */
export const assertLedgerInvariant = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const fail = (what: string, rows: ReadonlyArray<unknown>) => Effect.die(new Error(`ledger invariant: ${what}: ${JSON.stringify(rows.slice(0, 10))}`))
  const unbalanced = yield* sql<{ journalId: string }>`
    SELECT tenant_id, mode, journal_id FROM ledger_entries GROUP BY tenant_id, mode, journal_id HAVING sum(amount_kobo) <> 0`
  if (unbalanced.length > 0) return yield* fail("unbalanced journals", unbalanced)
  // The deposit path's rows name a tenant, an inbox row and an account that exist, and the automation path's runs and
  // holds a tenant and an account: migrations 0025, 0026 and 0030 left these to the write path (no foreign key), which
  // takes them from rows it read (and, for the account, locked) in the same transaction.
  const orphans = yield* sql<{ what: string; id: string }>`
    SELECT 'transaction without its tenant' AS what, t.reference AS id FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM tenants x WHERE x.id = t.tenant_id)
    UNION ALL
    SELECT 'transaction without its inbox row', t.reference FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM inbound_events i WHERE i.id = t.inbound_event_id)
    UNION ALL
    SELECT 'inbox row without its tenant', i.id::text FROM inbound_events i WHERE NOT EXISTS (SELECT 1 FROM tenants x WHERE x.id = i.tenant_id)
    UNION ALL
    SELECT 'transaction without its account', t.reference FROM transactions t
    WHERE t.virtual_account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM virtual_accounts v WHERE v.id = t.virtual_account_id)
    UNION ALL
    SELECT 'automation run without its tenant', r.id FROM automation_runs r WHERE NOT EXISTS (SELECT 1 FROM tenants x WHERE x.id = r.tenant_id)
    UNION ALL
    SELECT 'hold without its tenant', h.reference FROM holds h WHERE NOT EXISTS (SELECT 1 FROM tenants x WHERE x.id = h.tenant_id)
    UNION ALL
    SELECT 'hold without its account', h.reference FROM holds h WHERE NOT EXISTS (SELECT 1 FROM virtual_accounts v WHERE v.id = h.virtual_account_id)`
  if (orphans.length > 0) return yield* fail("rows that name a tenant, an inbox row or an account that does not exist", orphans)
  const accounts = yield* sql<{ account: string }>`SELECT DISTINCT account FROM ledger_entries`
  const outside = accounts.filter((a) => familyOf(a.account) === undefined)
  if (outside.length > 0) return yield* fail("accounts outside the chart", outside)
  const balances = yield* sql<{ tenantId: string; mode: string; account: string; sum: number }>`
    SELECT tenant_id, mode, account, sum(amount_kobo)::bigint AS sum FROM ledger_entries GROUP BY tenant_id, mode, account`
  const wrongSign = balances.filter((b) => {
    const family = familyOf(b.account)!
    return !family.mayChangeSign && (family.kind === "asset" ? b.sum : -b.sum) < 0
  })
  if (wrongSign.length > 0) return yield* fail("balances below zero in accounts that may not change sign", wrongSign)

  const figures = yield* sql<{ accountRef: string; amountPaidKobo: number; fromTransactions: number; held: number; settled: number; receivable: number }>`
    SELECT va.account_ref, va.amount_paid_kobo,
      (COALESCE((SELECT sum(CASE WHEN t.kind = 'inflow' THEN t.applied_kobo ELSE -t.applied_kobo END) FROM transactions t
        WHERE t.virtual_account_id = va.id AND t.status NOT IN ('PendingReview', 'Rejected')), 0)
       - COALESCE((SELECT sum(e.amount_kobo) FROM ledger_entries e WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode
          AND e.journal_id LIKE 'rfd:%' AND e.account IN ('customer_funds:' || va.id, 'escrow:' || va.id)), 0))::bigint AS from_transactions,
      -COALESCE((SELECT sum(e.amount_kobo) FROM ledger_entries e WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode
          AND e.account IN ('customer_funds:' || va.id, 'escrow:' || va.id)), 0)::bigint AS held,
      COALESCE((SELECT sum(e.amount_kobo) FROM ledger_entries e WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode
          AND e.journal_id LIKE 'stl:%' AND e.account IN ('customer_funds:' || va.id, 'escrow:' || va.id)), 0)::bigint AS settled,
      COALESCE((SELECT sum(e.amount_kobo) FROM transactions t JOIN ledger_entries e
          ON e.tenant_id = t.tenant_id AND e.mode = t.mode AND e.journal_id IN ('txn:' || t.reference, 'review:' || t.reference) AND e.account = 'tenant_receivable'
          WHERE t.virtual_account_id = va.id), 0)::bigint AS receivable
    FROM virtual_accounts va`
  const paidOff = figures.filter((f) => f.amountPaidKobo !== f.fromTransactions)
  if (paidOff.length > 0) return yield* fail("amountPaidKobo is not applied credits - reversals - refunds", paidOff)
  const heldOff = figures.filter((f) => f.held !== f.amountPaidKobo - f.settled + f.receivable)
  if (heldOff.length > 0) return yield* fail("customer_funds + escrow is not amountPaidKobo - settled + receivable", heldOff)

  const guarded = yield* sql<{ tenantId: string; mode: string; account: string; row: number; entries: number }>`
    WITH sums AS (
      SELECT tenant_id, mode, 'available' AS account, -sum(amount_kobo) AS entries FROM ledger_entries
      WHERE account LIKE 'customer_funds:%' OR account = 'payouts_drawn' GROUP BY tenant_id, mode
      UNION ALL
      SELECT tenant_id, mode, account, -sum(amount_kobo) FROM ledger_entries
      WHERE account LIKE 'escrow:%' OR account LIKE 'sub_merchant:%' GROUP BY tenant_id, mode, account
      UNION ALL
      SELECT tenant_id, mode, account, sum(amount_kobo) FROM ledger_entries WHERE account = 'tenant_receivable' GROUP BY tenant_id, mode, account
    )
    SELECT COALESCE(s.tenant_id, b.tenant_id) AS tenant_id, COALESCE(s.mode, b.mode) AS mode, COALESCE(s.account, b.account) AS account,
      COALESCE(b.balance_kobo, 0)::bigint AS row, COALESCE(s.entries, 0)::bigint AS entries
    FROM sums s FULL JOIN (
      SELECT tenant_id, mode, CASE WHEN account LIKE 'available:%' THEN 'available' ELSE account END AS account, sum(balance_kobo) AS balance_kobo
      FROM ledger_balances GROUP BY 1, 2, 3
    ) b ON b.tenant_id = s.tenant_id AND b.mode = s.mode AND b.account = s.account`
  const drift = guarded.filter((g) => g.row !== g.entries)
  if (drift.length > 0) return yield* fail("guarded balance rows disagree with their entries", drift)
  const flagOff = yield* sql<{ tenantId: string; mode: string; receivable: number; flagged: boolean }>`
    SELECT t.id AS tenant_id, m.mode, COALESCE(b.balance_kobo, 0)::bigint AS receivable, m.mode = ANY(t.receivable_modes) AS flagged
    FROM tenants t CROSS JOIN (VALUES ('test'), ('live')) m(mode)
    LEFT JOIN ledger_balances b ON b.tenant_id = t.id AND b.mode = m.mode AND b.account = 'tenant_receivable'
    WHERE (COALESCE(b.balance_kobo, 0) > 0) <> (m.mode = ANY(t.receivable_modes))`
  if (flagOff.length > 0) return yield* fail("the tenant's receivable flag disagrees with its receivable", flagOff)

  // 5. Money out: what each transfer state says is where the ledger has it.
  const inTransit = yield* sql<{ tenantId: string; mode: string; account: string; ledger: number; transfers: number }>`
    WITH t AS (
      SELECT tenant_id, mode, CASE WHEN source = 'refund' THEN 'refunds_in_transit' WHEN source = 'settlement' THEN 'settlements_in_transit' ELSE 'payouts_in_transit' END AS account,
        sum(amount_kobo) FILTER (WHERE status IN ('Pending', 'Processing')) AS open,
        sum(amount_kobo) FILTER (WHERE status IN ('Pending', 'Processing', 'Successful')) AS drawn
      FROM transfers GROUP BY 1, 2, 3
    ), l AS (
      SELECT tenant_id, mode, account, sum(amount_kobo) AS sum FROM ledger_entries
      WHERE account IN ('payouts_in_transit', 'refunds_in_transit', 'settlements_in_transit', 'payouts_drawn') GROUP BY 1, 2, 3
    )
    SELECT COALESCE(t.tenant_id, l.tenant_id) AS tenant_id, COALESCE(t.mode, l.mode) AS mode, COALESCE(t.account, l.account) AS account,
      COALESCE(CASE WHEN COALESCE(t.account, l.account) = 'payouts_drawn' THEN l.sum ELSE -l.sum END, 0)::bigint AS ledger,
      COALESCE(t.open, 0)::bigint AS transfers
    FROM t FULL JOIN l ON l.tenant_id = t.tenant_id AND l.mode = t.mode AND l.account = t.account
    WHERE COALESCE(t.account, l.account) IN ('payouts_in_transit', 'refunds_in_transit', 'settlements_in_transit')
    UNION ALL
    SELECT l.tenant_id, l.mode, 'payouts_drawn', l.sum::bigint, COALESCE((SELECT sum(amount_kobo) FROM transfers x WHERE x.tenant_id = l.tenant_id AND x.mode = l.mode
        AND x.source IN ('api', 'dashboard') AND x.status IN ('Pending', 'Processing', 'Successful')), 0)::bigint
    FROM l WHERE l.account = 'payouts_drawn'`
  const transitOff = inTransit.filter((r) => r.ledger !== r.transfers)
  if (transitOff.length > 0) return yield* fail("in-transit and drawn accounts disagree with the transfers' states", transitOff)
  const capOff = yield* sql<{ tenantId: string; day: string; used: number; payouts: number }>`
    SELECT d.tenant_id, d.day::text AS day, d.used_kobo AS used, COALESCE((SELECT sum(amount_kobo) FROM transfers x WHERE x.tenant_id = d.tenant_id
      AND x.mode = d.mode AND x.cap_day = d.day AND x.status <> 'Failed'), 0)::bigint AS payouts
    FROM payout_days d WHERE d.used_kobo <> COALESCE((SELECT sum(amount_kobo) FROM transfers x WHERE x.tenant_id = d.tenant_id
      AND x.mode = d.mode AND x.cap_day = d.day AND x.status <> 'Failed'), 0) OR d.used_kobo > d.cap_kobo`
  if (capOff.length > 0) return yield* fail("a day's payout counter disagrees with its payouts", capOff)
  const holdsOff = yield* sql<{ virtualAccountId: string; held: number; escrow: number }>`
    SELECT h.virtual_account_id, sum(h.held_kobo) FILTER (WHERE h.status = 'Held')::bigint AS held,
      COALESCE((SELECT -sum(e.amount_kobo) FROM ledger_entries e WHERE e.tenant_id = h.tenant_id AND e.mode = h.mode
        AND e.account = 'escrow:' || h.virtual_account_id), 0)::bigint AS escrow
    FROM holds h GROUP BY h.tenant_id, h.mode, h.virtual_account_id
    HAVING COALESCE(sum(h.held_kobo) FILTER (WHERE h.status = 'Held'), 0) <> COALESCE((SELECT -sum(e.amount_kobo) FROM ledger_entries e
      WHERE e.tenant_id = h.tenant_id AND e.mode = h.mode AND e.account = 'escrow:' || h.virtual_account_id), 0)`
  if (holdsOff.length > 0) return yield* fail("escrow disagrees with the account's active holds", holdsOff)

  // 6. Settlement: each settlement's legs sum to its net; a leg's money is in its source (sub_merchant:<id>,
  //    fees:platform, settlement_pending) exactly while its latest transfer has failed or been reversed.
  const netOff = yield* sql<{ id: string; net: number; legs: number }>`
    SELECT s.id, s.net_kobo AS net, COALESCE(sum(l.amount_kobo), 0)::bigint AS legs FROM settlements s
    LEFT JOIN settlement_legs l ON l.settlement_id = s.id GROUP BY s.id, s.net_kobo, s.status
    HAVING s.status <> 'Skipped' AND COALESCE(sum(l.amount_kobo), 0) <> s.net_kobo`
  if (netOff.length > 0) return yield* fail("a settlement's legs do not sum to its net", netOff)
  const sourcesOff = yield* sql<{ tenantId: string; mode: string; account: string; ledger: number; legs: number }>`
    WITH l AS (
      SELECT tenant_id, mode, account, -sum(amount_kobo) AS sum FROM ledger_entries
      WHERE account LIKE 'sub\_merchant:%' OR account IN ('fees:platform', 'settlement_pending') GROUP BY 1, 2, 3
    ), w AS (
      SELECT g.tenant_id, g.mode, g.source_account AS account, sum(g.amount_kobo) AS sum FROM settlement_legs g
      JOIN transfers t ON t.tenant_id = g.tenant_id AND t.mode = g.mode AND t.merchant_tx_ref = g.transfer_ref
      WHERE t.status IN ('Failed', 'Reversed') GROUP BY 1, 2, 3
    )
    SELECT COALESCE(l.tenant_id, w.tenant_id) AS tenant_id, COALESCE(l.mode, w.mode) AS mode, COALESCE(l.account, w.account) AS account,
      COALESCE(l.sum, 0)::bigint AS ledger, COALESCE(w.sum, 0)::bigint AS legs
    FROM l FULL JOIN w ON w.tenant_id = l.tenant_id AND w.mode = l.mode AND w.account = l.account
    WHERE COALESCE(l.sum, 0) <> COALESCE(w.sum, 0)`
  if (sourcesOff.length > 0) return yield* fail("a settlement source account disagrees with its failed legs", sourcesOff)
  return figures.length
})
