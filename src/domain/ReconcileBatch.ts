import { type AccountContext, decideInflow, decideReversalOutcome, type DepositOutcome, heldToTake, recoverFrom, type TransactionStatus } from "./DepositDecision.js"
import { availableDelta, LedgerAccount } from "./Ledger.js"
import { decideReversal, isDuplicateInflow, type PriorCredit } from "./Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "./Risk.js"

/**
 * THE reconcile decision: a batch of new deposits (one deposit is a batch of one), decided in order, each seeing what
 * the earlier ones did, exactly as if they were applied one after another. Pure: the service reads what the table holds
 * (`TableReads`), calls this, and writes what it answers.
 */

export interface BatchDeposit {
  readonly kind: "inflow" | "reversal"
  readonly reference: string
  /** Tenant and mode as one key: whose available balance and payer history this deposit belongs to. */
  readonly scopeKey: string
  /** The matched virtual account, or null for an unknown NUBAN. */
  readonly accountId: string | null
  readonly amountKobo: number
  readonly senderName: string | null
  readonly senderAccountNumber: string | null
  /** The normalised payer name; "" when there is none. */
  readonly payerKey: string
  readonly paidAtMs: number
  /** For a reversal: the session it names (its credit is reversed first). */
  readonly reversedReference: string | null
}

export interface AccountState {
  readonly id: string
  readonly expectedAmountKobo: number | null
  readonly amountPaidKobo: number
  readonly customerName: string
  readonly riskThreshold: number
}

/** A Completed inflow a reversal may take back: what is left of it is amountKobo - reversedKobo. */
export interface ReversibleCredit {
  readonly id: number
  readonly reference: string
  readonly amountKobo: number
  readonly reversedKobo: number
  readonly paidAtMs: number
}

/** What the table holds that the batch's decisions read (the batch's own deposits are this function's to add). */
export interface TableReads {
  /** By batch index (inflows to a matched account): the account's credited inflows in [paidAt - velocity window, paidAt]. */
  readonly velocity: ReadonlyMap<number, number>
  /** By account: its credited inflows that could be an earlier copy of a batch inflow (same amount, in the window). */
  readonly candidates: ReadonlyMap<string, ReadonlyArray<PriorCredit>>
  /** By batch index (inflows with a payer to a matched account): other accounts this payer paid in the reuse window. */
  readonly payerAccounts: ReadonlyMap<number, ReadonlyArray<string>>
  /** Only for batches holding a reversal, by account reversed: its reversible credits. */
  readonly reversible: ReadonlyMap<string, ReadonlyArray<ReversibleCredit>>
  /** Only for batches holding a reversal, by account reversed: what its customer_funds hold. */
  readonly freeKobo: ReadonlyMap<string, number>
  /** Only for batches holding a reversal, by scope: the tenant's available balance. */
  readonly availableKobo: ReadonlyMap<string, number>
  /** Only for batches holding a reversal, by account reversed: what its deposits' active holds keep, by reference. */
  readonly holds: ReadonlyMap<string, ReadonlyMap<string, number>>
  /**
   * By scope: what the tenant owes for late reversals (tenant_receivable), read (and locked) only for the scopes that
   * may owe (the tenant's flag) and those a reversal of the batch belongs to. A scope not read owes nothing as far as
   * this batch can tell, and its inflows recover nothing.
   */
  readonly receivableKobo: ReadonlyMap<string, number>
}

export interface Decided {
  readonly outcome: DepositOutcome
  /** The deposit's stored row at the end of the batch (a later reversal of the batch may have reversed it). */
  readonly reversedKoboAfter: number
  readonly statusAfter: TransactionStatus
}

export interface BatchDecision {
  /** One per deposit, in order. */
  readonly decided: ReadonlyArray<Decided>
  /** Accounts whose figures or money this batch moved: their amountPaidKobo after it. */
  readonly accounts: ReadonlyMap<string, number>
  /** Table credits a reversal of the batch took from: their reversed total and status after it. */
  readonly reversedCredits: ReadonlyArray<{ readonly id: number; readonly reversedKobo: number; readonly status: TransactionStatus }>
  /** Holds a reversal of the batch took money from (escrow), by scope and deposit reference: how much, in total. */
  readonly holdsTaken: ReadonlyArray<{ readonly scopeKey: string; readonly reference: string; readonly takenKobo: number }>
  /** What each scope read (`TableReads.receivableKobo`) owes after the batch. */
  readonly receivables: ReadonlyMap<string, number>
}

interface Credit {
  readonly tableId: number | null
  readonly batchIndex: number | null
  readonly reference: string
  readonly amountKobo: number
  reversedKobo: number
  readonly paidAtMs: number
}

const NO_INPUTS = { duplicate: false, inflowsToAccountInWindow: 0, accountsPaidByPayerInWindow: 0 }

const must = <A>(value: A | undefined, what: string): A => {
  if (value === undefined) throw new Error(`reconcile batch: ${what} was not read`)
  return value
}

export const decideBatch = (
  deposits: ReadonlyArray<BatchDeposit>,
  accounts: ReadonlyMap<string, AccountState>,
  table: TableReads
): BatchDecision => {
  const paid = new Map([...accounts.values()].map((a) => [a.id, a.amountPaidKobo]))
  const free = new Map(table.freeKobo)
  const available = new Map(table.availableKobo)
  const owed = new Map(table.receivableKobo)
  // What the holds of reversed accounts still keep, by account and reference; and what reversals took from them.
  const held = new Map([...table.holds].map(([id, byRef]) => [id, new Map(byRef)]))
  const heldTaken = new Map<string, { scopeKey: string; reference: string; takenKobo: number }>()
  const touched = new Set<string>()
  // The batch's own inflows so far, per account (every one is recorded Completed or PendingReview).
  const earlier = new Map<string, Array<{ readonly index: number; readonly d: BatchDeposit }>>()
  // Every batch deposit so far with a payer key, per scope and payer (payer reuse counts reversals' rows too).
  const byPayer = new Map<string, Array<BatchDeposit>>()
  // Credits fully reversed so far: table ids and batch indexes. They no longer count as credited inflows.
  const goneTable = new Set<number>()
  const goneBatch = new Set<number>()
  const batchCredits = new Map<string, Array<Credit>>()
  const tableCredits = new Map<string, Array<Credit>>()
  const reversedAfter = new Map<number, number>()
  const decided: Array<Decided> = []

  const creditsOf = (accountId: string): Array<Credit> => {
    let list = tableCredits.get(accountId)
    if (list === undefined) {
      list = must(table.reversible.get(accountId), `reversible credits of ${accountId}`).map((c) => ({
        tableId: c.id, batchIndex: null, reference: c.reference, amountKobo: c.amountKobo, reversedKobo: c.reversedKobo, paidAtMs: c.paidAtMs
      }))
      tableCredits.set(accountId, list)
    }
    return [...list, ...(batchCredits.get(accountId) ?? [])]
  }

  const riskInputs = (d: BatchDeposit, index: number, accountId: string) => {
    const t = d.paidAtMs
    const inWindow = (ms: number) => ms >= t - VELOCITY_WINDOW_MS && ms <= t
    // Plain loops, not spreads and filters over `list ?? []`: an empty literal is an array of another hidden class than
    // the lists it stands in for, and meeting both deoptimised this function under load, three times in a bench run
    // (docs/performance.md, "Deoptimisations").
    // The account's table credits that reversals of the batch took back whole: no longer inflows that count.
    const goneRefs: Array<string> = []
    let velocityChange = 0
    const credits = tableCredits.get(accountId)
    if (credits !== undefined) {
      for (const c of credits) {
        if (!goneTable.has(c.tableId!)) continue
        goneRefs.push(c.reference)
        if (inWindow(c.paidAtMs)) velocityChange--
      }
    }
    // Earlier inflows to the account: the table's candidates still credited, then the batch's own before this one.
    const prior: Array<PriorCredit> = []
    const candidates = table.candidates.get(accountId)
    if (candidates !== undefined) for (const c of candidates) if (!goneRefs.includes(c.reference)) prior.push(c)
    const before = earlier.get(accountId)
    if (before !== undefined) {
      for (const { index: i, d: e } of before) {
        if (goneBatch.has(i)) continue
        prior.push({ reference: e.reference, amountKobo: e.amountKobo, senderAccountNumber: e.senderAccountNumber, senderName: e.senderName, paidAtMs: e.paidAtMs })
        if (inWindow(e.paidAtMs)) velocityChange++
      }
    }
    const reuse = new Set(table.payerAccounts.get(index) ?? [])
    const samePayer = d.payerKey === "" ? undefined : byPayer.get(`${d.scopeKey}|${d.payerKey}`)
    if (samePayer !== undefined) {
      for (const e of samePayer) {
        if (e.accountId !== null && e.accountId !== accountId && e.paidAtMs >= t - PAYER_REUSE_WINDOW_MS && e.paidAtMs <= t) reuse.add(e.accountId)
      }
    }
    return {
      duplicate: isDuplicateInflow(
        { reference: d.reference, amountKobo: d.amountKobo, senderAccountNumber: d.senderAccountNumber, senderName: d.senderName, paidAtMs: t },
        prior
      ),
      inflowsToAccountInWindow: (table.velocity.get(index) ?? 0) + velocityChange,
      accountsPaidByPayerInWindow: d.payerKey === "" ? 0 : reuse.size
    }
  }

  /** Takes `amountKobo` back from the account's credits: the named session first, then newest first; answers the takes. */
  const allocateReversal = (accountId: string, named: string | null, amountKobo: number) => {
    const takes: Array<{ reference: string; takenKobo: number }> = []
    const order = creditsOf(accountId)
      .filter((c) => c.reversedKobo < c.amountKobo)
      .sort((a, b) =>
        Number(b.reference === named) - Number(a.reference === named) || b.paidAtMs - a.paidAtMs ||
        // Newest id first: batch rows are inserted after every table row, in batch order.
        (a.tableId !== null && b.tableId !== null ? b.tableId - a.tableId : a.tableId !== null ? 1 : b.tableId !== null ? -1 : b.batchIndex! - a.batchIndex!)
      )
    let left = amountKobo
    for (const c of order) {
      if (left === 0) break
      const take = Math.min(left, c.amountKobo - c.reversedKobo)
      left -= take
      c.reversedKobo += take
      takes.push({ reference: c.reference, takenKobo: take })
      const gone = c.reversedKobo === c.amountKobo
      if (c.tableId !== null) {
        reversedAfter.set(c.tableId, c.reversedKobo)
        if (gone) goneTable.add(c.tableId)
      } else if (gone) goneBatch.add(c.batchIndex!)
    }
    return takes
  }

  deposits.forEach((d, index) => {
    const state = d.accountId === null ? undefined : must(accounts.get(d.accountId), `account ${d.accountId}`)
    const context: AccountContext | null = state
      ? { id: state.id, figures: { expectedAmountKobo: state.expectedAmountKobo, amountPaidKobo: paid.get(state.id)! }, customerName: state.customerName }
      : null
    let outcome: DepositOutcome
    if (d.kind === "inflow") {
      const inputs = state ? riskInputs(d, index, state.id) : NO_INPUTS
      outcome = decideInflow({ account: context, amountKobo: d.amountKobo, senderName: d.senderName, riskThreshold: state?.riskThreshold ?? 100, ...inputs })
      if (state && (owed.get(d.scopeKey) ?? 0) > 0) {
        // Oldest first: the batch's deposits in their order, each paying off what is still owed before it counts.
        const recovered = recoverFrom(outcome, state.id, owed.get(d.scopeKey)!)
        outcome = recovered.outcome
        owed.set(d.scopeKey, owed.get(d.scopeKey)! - recovered.recoveredKobo)
      }
      if (state) {
        const list = earlier.get(state.id) ?? []
        list.push({ index, d })
        earlier.set(state.id, list)
        if (outcome.status === "Completed") {
          const credits = batchCredits.get(state.id) ?? []
          credits.push({ tableId: null, batchIndex: index, reference: d.reference, amountKobo: d.amountKobo, reversedKobo: 0, paidAtMs: d.paidAtMs })
          batchCredits.set(state.id, credits)
        }
      }
    } else {
      // What there is to reverse is taken from the credits first, so the holds of the credits it takes are known.
      const reversedKobo = context ? decideReversal(context.figures, d.amountKobo).reversedKobo : 0
      const takes = state && reversedKobo > 0 ? allocateReversal(state.id, d.reversedReference, reversedKobo) : []
      const holds = state && takes.length > 0 ? must(held.get(state.id), `holds of ${state.id}`) : new Map<string, number>()
      const fromHolds = heldToTake(takes, holds)
      outcome = decideReversalOutcome({
        account: context,
        amountKobo: d.amountKobo,
        heldKobo: fromHolds.reduce((s, h) => s + h.takenKobo, 0),
        freeKobo: state ? must(free.get(state.id), `customer funds of ${state.id}`) : 0,
        availableKobo: state ? must(available.get(d.scopeKey), `available balance of ${d.scopeKey}`) : 0
      })
      for (const h of fromHolds) {
        holds.set(h.reference, holds.get(h.reference)! - h.takenKobo)
        const key = `${d.scopeKey}|${h.reference}`
        const prev = heldTaken.get(key)
        heldTaken.set(key, { scopeKey: d.scopeKey, reference: h.reference, takenKobo: (prev?.takenKobo ?? 0) + h.takenKobo })
      }
      const receivable = outcome.legs.find((l) => l.account === LedgerAccount.tenantReceivable)?.amountKobo ?? 0
      if (receivable > 0) owed.set(d.scopeKey, must(owed.get(d.scopeKey), `receivable of ${d.scopeKey}`) + receivable)
    }
    if (state) {
      paid.set(state.id, outcome.amountPaidAfterKobo!)
      if (outcome.legs.length > 0) touched.add(state.id)
      const change = availableDelta(outcome.legs)
      if (free.has(state.id)) free.set(state.id, free.get(state.id)! + change)
      if (available.has(d.scopeKey)) available.set(d.scopeKey, available.get(d.scopeKey)! + change)
    }
    if (d.payerKey !== "") {
      const key = `${d.scopeKey}|${d.payerKey}`
      const list = byPayer.get(key) ?? []
      list.push(d)
      byPayer.set(key, list)
    }
    decided.push({ outcome, reversedKoboAfter: 0, statusAfter: outcome.status })
  })

  // A batch inflow that a later reversal of the batch took back is stored with what was reversed of it.
  const final = decided.map((x, index) => {
    const credit = deposits[index]!.accountId === null ? undefined : batchCredits.get(deposits[index]!.accountId!)?.find((c) => c.batchIndex === index)
    if (!credit || credit.reversedKobo === 0) return x
    return { ...x, reversedKoboAfter: credit.reversedKobo, statusAfter: credit.reversedKobo === credit.amountKobo ? "Reversed" as const : x.statusAfter }
  })
  const tableAmounts = new Map([...tableCredits.values()].flat().map((c) => [c.tableId!, c.amountKobo]))
  return {
    decided: final,
    accounts: new Map([...touched].map((id) => [id, paid.get(id)!])),
    reversedCredits: [...reversedAfter].map(([id, reversedKobo]) => ({
      id, reversedKobo, status: reversedKobo === tableAmounts.get(id) ? "Reversed" as const : "Completed" as const
    })),
    holdsTaken: [...heldTaken.values()],
    receivables: owed
  }
}
