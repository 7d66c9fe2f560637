import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decideInflow, decideReversalOutcome, type DepositOutcome, heldToTake, recoverFrom, type TransactionStatus } from "../../src/domain/DepositDecision.js"
import { availableDelta } from "../../src/domain/Ledger.js"
import { type AccountState, type BatchDeposit, decideBatch, type TableReads } from "../../src/domain/ReconcileBatch.js"
import { decideReversal, isDuplicateInflow, normalisePayerName } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"

/*
 * decideBatch against a naive reference: the reference applies deposits one at a time to an in-memory table of every
 * transaction, reading the risk windows, duplicates, payer reuse and reversible credits by scanning that table, as the
 * one-at-a-time reconciler did with SQL. decideBatch gets only what the hot path's reads would return for the table
 * as it stood before the batch, and must decide exactly the same, reversals anywhere in the batch included.
 */

interface Row {
  readonly id: number
  readonly d: BatchDeposit
  status: TransactionStatus
  reversedKobo: number
}

interface Model {
  rows: Array<Row>
  paid: Map<string, number>
  free: Map<string, number>
  available: Map<string, number>
  /** By scope: tenant_receivable. */
  owed: Map<string, number>
  /** By deposit reference: what its active hold keeps in escrow. */
  held: Map<string, number>
  /** By deposit reference: what reversals took out of its hold (for the batch's comparison). */
  heldTaken: Map<string, number>
}

const emptyModel = (): Model => ({ rows: [], paid: new Map(), free: new Map(), available: new Map(), owed: new Map(), held: new Map(), heldTaken: new Map() })

/** The hold endpoint, the naive way: escrows what of the deposit is still free (its account's free money, available). */
const holdNaive = (m: Model, d: BatchDeposit) => {
  const row = m.rows.find((r) => r.d.reference === d.reference)
  if (!row || row.status !== "Completed" || d.kind !== "inflow" || d.accountId === null || m.held.has(d.reference)) return
  const kobo = Math.min(d.amountKobo - row.reversedKobo, m.free.get(d.accountId) ?? 0, m.available.get(d.scopeKey) ?? 0)
  if (kobo <= 0) return
  m.held.set(d.reference, kobo)
  m.free.set(d.accountId, m.free.get(d.accountId)! - kobo)
  m.available.set(d.scopeKey, m.available.get(d.scopeKey)! - kobo)
}

const ACCOUNTS = ["va_a", "va_b", "va_c", "va_d"] as const
const SCOPE = (accountId: string | null) => (accountId === "va_d" ? "t2|test" : "t1|test")
const CUSTOMERS: Record<string, string> = { va_a: "John Adeyemi", va_b: "Ngozi Eze", va_c: "Aisha Bello", va_d: "John Adeyemi" }
const EXPECTED: Record<string, number | null> = { va_a: 100_000, va_b: 50_000, va_c: null, va_d: 75_000 }
const THRESHOLD: Record<string, number> = { va_a: 70, va_b: 40, va_c: 70, va_d: 70 }

const credited = (r: Row) => r.d.kind === "inflow" && (r.status === "Completed" || r.status === "PendingReview")

const context = (m: Model, accountId: string) => ({
  id: accountId, figures: { expectedAmountKobo: EXPECTED[accountId]!, amountPaidKobo: m.paid.get(accountId) ?? 0 }, customerName: CUSTOMERS[accountId]!
})

/** One deposit, the naive way: scan the whole table. */
const applyNaive = (m: Model, d: BatchDeposit): DepositOutcome => {
  const t = d.paidAtMs
  let outcome: DepositOutcome
  if (d.kind === "inflow") {
    if (d.accountId === null) outcome = decideInflow({ account: null, amountKobo: d.amountKobo, senderName: d.senderName, duplicate: false, inflowsToAccountInWindow: 0, accountsPaidByPayerInWindow: 0, riskThreshold: 100 })
    else {
      const prior = m.rows.filter((r) => r.d.accountId === d.accountId && credited(r))
      const reuse = new Set(m.rows.filter((r) => d.payerKey !== "" && r.d.scopeKey === d.scopeKey && r.d.payerKey === d.payerKey &&
        r.d.accountId !== null && r.d.accountId !== d.accountId && r.d.paidAtMs >= t - PAYER_REUSE_WINDOW_MS && r.d.paidAtMs <= t).map((r) => r.d.accountId))
      outcome = decideInflow({
        account: context(m, d.accountId), amountKobo: d.amountKobo, senderName: d.senderName, riskThreshold: THRESHOLD[d.accountId]!,
        duplicate: isDuplicateInflow({ ...d }, prior.map((r) => ({ ...r.d }))),
        inflowsToAccountInWindow: prior.filter((r) => r.d.paidAtMs >= t - VELOCITY_WINDOW_MS && r.d.paidAtMs <= t).length,
        accountsPaidByPayerInWindow: d.payerKey === "" ? 0 : reuse.size
      })
      // What late reversals left owing is recovered from this collection first.
      const recovered = recoverFrom(outcome, d.accountId, m.owed.get(d.scopeKey) ?? 0)
      outcome = recovered.outcome
      m.owed.set(d.scopeKey, (m.owed.get(d.scopeKey) ?? 0) - recovered.recoveredKobo)
    }
  } else {
    const reversedKobo = d.accountId === null ? 0 : decideReversal(context(m, d.accountId).figures, d.amountKobo).reversedKobo
    const takes: Array<{ reference: string; takenKobo: number }> = []
    if (d.accountId !== null && reversedKobo > 0) {
      let left = reversedKobo
      const order = m.rows
        .filter((r) => r.d.accountId === d.accountId && r.d.kind === "inflow" && r.status === "Completed" && r.reversedKobo < r.d.amountKobo)
        .sort((a, b) => Number(b.d.reference === d.reversedReference) - Number(a.d.reference === d.reversedReference) || b.d.paidAtMs - a.d.paidAtMs || b.id - a.id)
      for (const r of order) {
        if (left === 0) break
        const take = Math.min(left, r.d.amountKobo - r.reversedKobo)
        left -= take
        r.reversedKobo += take
        takes.push({ reference: r.d.reference, takenKobo: take })
        if (r.reversedKobo === r.d.amountKobo) r.status = "Reversed"
      }
    }
    const fromHolds = heldToTake(takes, m.held)
    outcome = decideReversalOutcome({
      account: d.accountId === null ? null : context(m, d.accountId), amountKobo: d.amountKobo,
      heldKobo: fromHolds.reduce((s, h) => s + h.takenKobo, 0),
      freeKobo: m.free.get(d.accountId ?? "") ?? 0, availableKobo: m.available.get(d.scopeKey) ?? 0
    })
    for (const h of fromHolds) {
      m.held.set(h.reference, m.held.get(h.reference)! - h.takenKobo)
      m.heldTaken.set(h.reference, (m.heldTaken.get(h.reference) ?? 0) + h.takenKobo)
    }
    const receivable = outcome.legs.find((l) => l.account === "tenant_receivable")?.amountKobo ?? 0
    m.owed.set(d.scopeKey, (m.owed.get(d.scopeKey) ?? 0) + receivable)
  }
  if (d.accountId !== null) {
    m.paid.set(d.accountId, outcome.amountPaidAfterKobo!)
    const change = availableDelta(outcome.legs)
    m.free.set(d.accountId, (m.free.get(d.accountId) ?? 0) + change)
    m.available.set(d.scopeKey, (m.available.get(d.scopeKey) ?? 0) + change)
  }
  m.rows.push({ id: m.rows.length + 1, d, status: outcome.status, reversedKobo: 0 })
  return outcome
}

/** What the hot path's reads return for `m` (the table before the batch). */
const tableReads = (m: Model, batch: ReadonlyArray<BatchDeposit>): TableReads => {
  const velocity = new Map<number, number>()
  const candidates = new Map<string, Array<{ reference: string; amountKobo: number; senderAccountNumber: string | null; senderName: string | null; paidAtMs: number }>>()
  const payerAccounts = new Map<number, Array<string>>()
  batch.forEach((d, i) => {
    if (d.kind !== "inflow" || d.accountId === null) return
    const t = d.paidAtMs
    const prior = m.rows.filter((r) => r.d.accountId === d.accountId && credited(r))
    velocity.set(i, prior.filter((r) => r.d.paidAtMs >= t - VELOCITY_WINDOW_MS && r.d.paidAtMs <= t).length)
    const list = candidates.get(d.accountId) ?? []
    for (const r of prior) if (r.d.amountKobo === d.amountKobo && !list.some((c) => c.reference === r.d.reference)) list.push({ ...r.d })
    candidates.set(d.accountId, list)
    if (d.payerKey !== "") {
      payerAccounts.set(i, [...new Set(m.rows.filter((r) => r.d.scopeKey === d.scopeKey && r.d.payerKey === d.payerKey && r.d.accountId !== null &&
        r.d.accountId !== d.accountId && r.d.paidAtMs >= t - PAYER_REUSE_WINDOW_MS && r.d.paidAtMs <= t).map((r) => r.d.accountId!))])
    }
  })
  const reversed = batch.filter((d) => d.kind === "reversal" && d.accountId !== null)
  // The receivable is read for the scopes a reversal belongs to, and for those that owe (the tenant's flag).
  const owing = [...new Set([...reversed.map((d) => d.scopeKey), ...batch.filter((d) => d.accountId !== null && (m.owed.get(d.scopeKey) ?? 0) > 0).map((d) => d.scopeKey)])]
  return {
    velocity, candidates, payerAccounts,
    receivableKobo: new Map(owing.map((scope) => [scope, m.owed.get(scope) ?? 0])),
    holds: new Map(reversed.map((d) => [d.accountId!, new Map(m.rows
      .filter((r) => r.d.accountId === d.accountId && (m.held.get(r.d.reference) ?? 0) > 0)
      .map((r) => [r.d.reference, m.held.get(r.d.reference)!]))])),
    reversible: new Map(reversed.map((d) => [d.accountId!, m.rows
      .filter((r) => r.d.accountId === d.accountId && r.d.kind === "inflow" && r.status === "Completed" && r.reversedKobo < r.d.amountKobo)
      .map((r) => ({ id: r.id, reference: r.d.reference, amountKobo: r.d.amountKobo, reversedKobo: r.reversedKobo, paidAtMs: r.d.paidAtMs }))])),
    freeKobo: new Map(reversed.map((d) => [d.accountId!, m.free.get(d.accountId!) ?? 0])),
    availableKobo: new Map(reversed.map((d) => [d.scopeKey, m.available.get(d.scopeKey) ?? 0]))
  }
}

const PAYERS = ["ADEYEMI JOHN O", "NGOZI EZE", "CHUKWU PETER", null] as const
const BASE = Date.parse("2026-11-20T08:00:00Z")

const depositArb = fc.record({
  reversal: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  account: fc.integer({ min: -1, max: ACCOUNTS.length - 1 }),
  amountKobo: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(25_000, 50_000, 100_000) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 150_000 }) }),
  payer: fc.constantFrom(...PAYERS),
  senderAccount: fc.constantFrom("0010246780", "0000014579", null),
  // Mostly within minutes of each other (velocity tiers, duplicates), sometimes a day apart.
  minute: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 20 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 48 * 60 }) }),
  named: fc.nat(),
  /** In the history: the deposit is then held (the hold endpoint), so a later reversal meets escrow. */
  hold: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
  /** In the history: then a payout draws this share (‰) of its tenant's available balance, so a later reversal may owe. */
  draw: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 1000 }) })
})

type Planned = typeof depositArb extends fc.Arbitrary<infer T> ? T : never

const toDeposit = (x: Planned, i: number, refs: ReadonlyArray<string>, prefix: string): BatchDeposit => {
  const accountId = x.account < 0 ? null : ACCOUNTS[x.account]!
  return {
    kind: x.reversal ? "reversal" : "inflow", reference: `${prefix}${i}`, scopeKey: SCOPE(accountId), accountId, amountKobo: x.amountKobo,
    senderName: x.payer, senderAccountNumber: x.senderAccount, payerKey: x.payer ? normalisePayerName(x.payer) : "",
    paidAtMs: BASE + x.minute * 60_000, reversedReference: x.reversal && refs.length > 0 ? refs[x.named % refs.length]! : null
  }
}

describe("decideBatch, the one reconcile decision", () => {
  it("decides a batch exactly as the naive one-at-a-time reference does, reversals included", () => {
    fc.assert(
      fc.property(fc.array(depositArb, { maxLength: 30 }), fc.array(depositArb, { minLength: 1, maxLength: 30 }), (historyPlan, batchPlan) => {
        const model = emptyModel()
        const history = historyPlan.map((x, i) => toDeposit(x, i, historyPlan.slice(0, i).map((_, k) => `h${k}`), "h"))
        history.forEach((d, i) => {
          applyNaive(model, d)
          if (historyPlan[i]!.hold) holdNaive(model, d)
          const have = model.available.get(d.scopeKey) ?? 0
          model.available.set(d.scopeKey, have - Math.floor((have * historyPlan[i]!.draw) / 1000))
        })
        model.heldTaken.clear()
        const batch = batchPlan.map((x, i) => toDeposit(x, i, [...history.map((h) => h.reference), ...batchPlan.slice(0, i).map((_, k) => `b${k}`)], "b"))

        const accounts = new Map<string, AccountState>(ACCOUNTS.map((id) => [id, {
          id, expectedAmountKobo: EXPECTED[id]!, amountPaidKobo: model.paid.get(id) ?? 0, customerName: CUSTOMERS[id]!, riskThreshold: THRESHOLD[id]!
        }]))
        const reads = tableReads(model, batch)
        const readScopes = [...reads.receivableKobo.keys()]
        const before = new Map(model.rows.map((r) => [r.id, { status: r.status, reversedKobo: r.reversedKobo }]))
        const decision = decideBatch(batch, accounts, reads)

        const expected = batch.map((d) => applyNaive(model, d))
        expect(decision.decided.map((x) => x.outcome)).toEqual(expected)
        const batchRows = model.rows.slice(model.rows.length - batch.length)
        expect(decision.decided.map((x) => [x.statusAfter, x.reversedKoboAfter])).toEqual(batchRows.map((r) => [r.status, r.reversedKobo]))
        const changed = model.rows.slice(0, model.rows.length - batch.length)
          .filter((r) => before.get(r.id)!.reversedKobo !== r.reversedKobo)
          .map((r) => ({ id: r.id, reversedKobo: r.reversedKobo, status: r.status }))
        expect([...decision.reversedCredits].sort((a, b) => a.id - b.id)).toEqual(changed)
        for (const [id, paid] of decision.accounts) expect(paid).toBe(model.paid.get(id))
        // What the reversals took out of holds, and what the tenants owe after the batch.
        expect(new Map(decision.holdsTaken.map((h) => [h.reference, h.takenKobo]))).toEqual(model.heldTaken)
        expect(decision.receivables).toEqual(new Map(readScopes.map((scope) => [scope, model.owed.get(scope) ?? 0])))
        // An account is touched exactly when a deposit of the batch moved money on it.
        const moved = new Set(batch.filter((d, i) => d.accountId !== null && expected[i]!.legs.length > 0).map((d) => d.accountId!))
        expect(new Set(decision.accounts.keys())).toEqual(moved)
      }),
      { numRuns: 1000 }
    )
  })

  it("a credit a reversal of the batch took back no longer counts in a later deposit's velocity window", () => {
    const model = emptyModel()
    const inflow = (reference: string, minute: number): BatchDeposit => ({
      kind: "inflow", reference, scopeKey: "t1|test", accountId: "va_c", amountKobo: 10_000 + minute, senderName: "NGOZI EZE",
      senderAccountNumber: null, payerKey: "NGOZI EZE", paidAtMs: BASE + minute * 60_000, reversedReference: null
    })
    for (const d of [inflow("h0", 0), inflow("h1", 1), inflow("h2", 2)]) applyNaive(model, d)
    const batch: ReadonlyArray<BatchDeposit> = [
      { ...inflow("b0", 3), kind: "reversal", amountKobo: 10_001, reversedReference: "h1" },
      inflow("b1", 4)
    ]
    const accounts = new Map<string, AccountState>([["va_c", { id: "va_c", expectedAmountKobo: null, amountPaidKobo: model.paid.get("va_c")!, customerName: "Aisha Bello", riskThreshold: 70 }]])
    const decision = decideBatch(batch, accounts, tableReads(model, batch))
    const expected = batch.map((d) => applyNaive(model, d))
    expect(decision.decided.map((x) => x.outcome)).toEqual(expected)
    // Two credits left in the window: under the velocity tier of three.
    expect(expected[1]!.risk.reasons.some((r) => r.code.includes("velocity"))).toBe(false)
  })

  it("a late reversal takes what is still free and posts the rest to tenant_receivable; one with nothing to reverse waits for review", () => {
    const accounts = new Map<string, AccountState>([["va_a", { id: "va_a", expectedAmountKobo: 100_000, amountPaidKobo: 100_000, customerName: "John Adeyemi", riskThreshold: 70 }]])
    const reversal: BatchDeposit = {
      kind: "reversal", reference: "r1", scopeKey: "t1|test", accountId: "va_a", amountKobo: 100_000, senderName: null, senderAccountNumber: null,
      payerKey: "", paidAtMs: BASE, reversedReference: "c1"
    }
    const reads: TableReads = {
      velocity: new Map(), candidates: new Map(), payerAccounts: new Map(),
      reversible: new Map([["va_a", [{ id: 1, reference: "c1", amountKobo: 100_000, reversedKobo: 0, paidAtMs: BASE - 1 }]]]),
      freeKobo: new Map([["va_a", 40_000]]), availableKobo: new Map([["t1|test", 40_000]]),
      holds: new Map([["va_a", new Map()]]), receivableKobo: new Map([["t1|test", 0]])
    }
    const late = decideBatch([reversal], accounts, reads).decided[0]!.outcome
    expect(late.status).toBe("Completed")
    expect(late.legs).toEqual([
      { account: "customer_funds:va_a", amountKobo: 40_000 },
      { account: "tenant_receivable", amountKobo: 60_000 },
      { account: "provider_clearing", amountKobo: -100_000 }
    ])
    const nothing = decideBatch([reversal], new Map([["va_a", { ...accounts.get("va_a")!, amountPaidKobo: 0 }]]), { ...reads, reversible: new Map([["va_a", []]]) })
    expect(nothing.decided[0]!.outcome).toMatchObject({ status: "PendingReview", reconciliationStatus: "Reversal", appliedKobo: 0, legs: [] })
    expect(nothing.accounts.size).toBe(0)
  })

  it("a late reversal takes the deposit's hold first, then free money, then owes the rest; the batch's next inflows recover it, oldest first", () => {
    const accounts = new Map<string, AccountState>([
      ["va_a", { id: "va_a", expectedAmountKobo: null, amountPaidKobo: 100_000, customerName: "John Adeyemi", riskThreshold: 100 }],
      ["va_c", { id: "va_c", expectedAmountKobo: null, amountPaidKobo: 0, customerName: "Aisha Bello", riskThreshold: 100 }]
    ])
    const deposit = (reference: string, accountId: string, amountKobo: number, minute: number, kind: "inflow" | "reversal" = "inflow"): BatchDeposit => ({
      kind, reference, scopeKey: "t1|test", accountId, amountKobo, senderName: null, senderAccountNumber: null, payerKey: "",
      paidAtMs: BASE + minute * 60_000, reversedReference: kind === "reversal" ? "c1" : null
    })
    const reads: TableReads = {
      velocity: new Map(), candidates: new Map(), payerAccounts: new Map(),
      reversible: new Map([["va_a", [{ id: 1, reference: "c1", amountKobo: 100_000, reversedKobo: 0, paidAtMs: BASE - 1 }]]]),
      // c1's hold keeps 30,000 in escrow; 25,000 of the account is free; 10,000 of it already owed before.
      holds: new Map([["va_a", new Map([["c1", 30_000]])]]),
      freeKobo: new Map([["va_a", 25_000]]), availableKobo: new Map([["t1|test", 25_000]]), receivableKobo: new Map([["t1|test", 10_000]])
    }
    const batch = [deposit("r1", "va_a", 100_000, 1, "reversal"), deposit("n1", "va_c", 40_000, 2), deposit("n2", "va_c", 60_000, 3), deposit("n3", "va_c", 5_000, 4)]
    const decision = decideBatch(batch, accounts, reads)
    const [reversal, first, second, third] = decision.decided.map((d) => d.outcome)
    expect(reversal!.legs).toEqual([
      { account: "escrow:va_a", amountKobo: 30_000 },
      { account: "customer_funds:va_a", amountKobo: 25_000 },
      { account: "tenant_receivable", amountKobo: 45_000 },
      { account: "provider_clearing", amountKobo: -100_000 }
    ])
    expect(decision.holdsTaken).toEqual([{ scopeKey: "t1|test", reference: "c1", takenKobo: 30_000 }])
    // 55,000 owed: the first inflow pays 40,000 of it (nothing of it counts as available), the second the last 15,000.
    expect(availableDelta(first!.legs)).toBe(0)
    expect(first!.legs.filter((l) => l.account === "tenant_receivable")).toEqual([{ account: "tenant_receivable", amountKobo: -40_000 }])
    expect(availableDelta(second!.legs)).toBe(45_000)
    expect(second!.legs.filter((l) => l.account === "tenant_receivable")).toEqual([{ account: "tenant_receivable", amountKobo: -15_000 }])
    expect(third!.legs.some((l) => l.account === "tenant_receivable")).toBe(false)
    expect(decision.receivables).toEqual(new Map([["t1|test", 0]]))
  })
})
