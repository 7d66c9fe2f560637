/**
 * The chart of ledger accounts, per tenant and mode. Amounts are signed kobo: debit positive, credit negative; each
 * journal sums to zero. An asset's natural balance is its debit (sum of entries); a liability's is its credit (minus the
 * sum). `guarded` families also keep a balance row (`ledger_balances`, natural sign, `CHECK (balance_kobo >= 0)`)
 * updated in the posting's transaction, so the database itself refuses an overdraw. Lock order for a step that touches
 * guarded rows: the virtual-account row first, then the balance rows (in account-name order).
 */
export type AccountKind = "asset" | "liability"

export interface AccountFamily {
  /** The name, or the prefix before ":" for a family with one account per key. */
  readonly name: string
  readonly kind: AccountKind
  /** Keyed per virtual account (`:<vaId>`), per sub-merchant (`:<id>`), or one per tenant and mode. */
  readonly keyedBy: "virtual account" | "sub-merchant" | null
  /** Has a balance row that may never go below zero. */
  readonly guarded: boolean
  /**
   * Whether its natural balance may go below zero. Only provider_clearing may: the bank can take back (a late reversal)
   * more than it still holds for the tenant. Every other balance below zero is a bug the invariant reports.
   */
  readonly mayChangeSign: boolean
  readonly holds: string
}

export const CHART: ReadonlyArray<AccountFamily> = [
  { name: "provider_clearing", kind: "asset", keyedBy: null, mayChangeSign: true, guarded: false, holds: "money at the bank provider for the tenant" },
  { name: "customer_funds", kind: "liability", keyedBy: "virtual account", mayChangeSign: false, guarded: false, holds: "a virtual account's collected money that is free: not held, not settled, not refunded" },
  { name: "escrow", kind: "liability", keyedBy: "virtual account", mayChangeSign: false, guarded: true, holds: "a virtual account's held money (holds by rules, flows or the hold endpoint)" },
  { name: "review_pending", kind: "liability", keyedBy: "virtual account", mayChangeSign: false, guarded: false, holds: "deposits awaiting risk review" },
  { name: "suspense:unmatched", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "inflows with no account" },
  { name: "suspense:rejected", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "rejected inflows owed back to payers" },
  { name: "payouts_in_transit", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "payouts sent to the provider, not yet confirmed" },
  { name: "refunds_in_transit", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "refunds sent to the provider, not yet confirmed" },
  { name: "payouts_drawn", kind: "asset", keyedBy: null, mayChangeSign: false, guarded: false, holds: "the tenant's payouts drawn on its free collections and not failed (a contra account to customer_funds)" },
  { name: "sub_merchant", kind: "liability", keyedBy: "sub-merchant", mayChangeSign: false, guarded: true, holds: "collections routed to a sub-merchant, net of the platform fee, not yet settled" },
  { name: "fees:platform", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "platform fees kept by the tenant from sub-merchant collections, not yet paid to its settlement account" },
  { name: "settlement_pending", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "swept for the tenant's own settlement account and not yet sent (a failed leg's money waiting for its retry)" },
  { name: "settlements_in_transit", kind: "liability", keyedBy: null, mayChangeSign: false, guarded: false, holds: "settlement legs sent to the provider, not yet confirmed" },
  { name: "tenant_receivable", kind: "asset", keyedBy: null, mayChangeSign: false, guarded: true, holds: "what the provider took back (a late reversal) beyond what the deposit's hold and its account's free money still held; recovered from the tenant's next free collections" }
]

export const LedgerAccount = {
  providerClearing: "provider_clearing",
  customerFunds: (vaId: string) => `customer_funds:${vaId}`,
  escrow: (vaId: string) => `escrow:${vaId}`,
  reviewPending: (vaId: string) => `review_pending:${vaId}`,
  unmatched: "suspense:unmatched",
  rejected: "suspense:rejected",
  payoutsInTransit: "payouts_in_transit",
  refundsInTransit: "refunds_in_transit",
  payoutsDrawn: "payouts_drawn",
  subMerchant: (id: string) => `sub_merchant:${id}`,
  platformFees: "fees:platform",
  settlementPending: "settlement_pending",
  settlementsInTransit: "settlements_in_transit",
  tenantReceivable: "tenant_receivable"
} as const

/**
 * The balance rows (`ledger_balances.account`) that guard what may never be overdrawn. The tenant's available balance,
 * what payouts may draw on (its free collections, minus the sum of every `customer_funds:*`, less its payouts not
 * failed, `payouts_drawn`), is kept as up to `AVAILABLE_STRIPES` rows `available:<n>` whose sum it is, each never below
 * zero: every deposit batch raises it, and one row per tenant would make the reconciler's partitions wait for each
 * other's commits; a raise takes any stripe no one holds, a lowering locks them all. The others mirror their ledger
 * account's natural balance. The `tenant_receivable` row exists from the tenant's creation (migration 0019); a step that
 * recovers from it, adds to it or must see it at zero (settlement) locks it after the account rows and before the
 * stripes.
 */
export const AVAILABLE_STRIPES = 8
export const GuardedBalance = {
  available: "available",
  availableStripe: (n: number) => `available:${n}`,
  escrow: LedgerAccount.escrow,
  subMerchant: LedgerAccount.subMerchant,
  receivable: LedgerAccount.tenantReceivable
} as const

/** The family an account name belongs to; undefined for a name outside the chart. */
export const familyOf = (account: string): AccountFamily | undefined =>
  CHART.find((f) => f.name === account) ?? CHART.find((f) => f.keyedBy !== null && account.startsWith(`${f.name}:`))

/** Journal ids, by the step that posts them: a step posts its journal once (the ledger makes a repeat a no-op). */
export const JournalId = {
  deposit: (reference: string) => `txn:${reference}`,
  review: (reference: string) => `review:${reference}`
} as const

export interface Leg {
  readonly account: string
  readonly amountKobo: number
}

/** A transfer of `amountKobo` from `credit` to `debit`; no legs when nothing moves. */
export const move = (debit: string, credit: string, amountKobo: number): ReadonlyArray<Leg> =>
  amountKobo === 0 ? [] : [{ account: debit, amountKobo }, { account: credit, amountKobo: -amountKobo }]

export const isBalanced = (legs: ReadonlyArray<Leg>) => legs.reduce((s, l) => s + l.amountKobo, 0) === 0

/** Legs with the same account summed, zero legs dropped. */
export const netLegs = (legs: ReadonlyArray<Leg>): ReadonlyArray<Leg> => {
  const byAccount = new Map<string, number>()
  for (const l of legs) byAccount.set(l.account, (byAccount.get(l.account) ?? 0) + l.amountKobo)
  return [...byAccount].filter(([, a]) => a !== 0).map(([account, amountKobo]) => ({ account, amountKobo }))
}

/** What `legs` change on the tenant's available balance (natural sign: credits to customer_funds raise it). */
export const availableDelta = (legs: ReadonlyArray<Leg>): number =>
  legs.reduce((s, l) => (l.account.startsWith("customer_funds:") || l.account === LedgerAccount.payoutsDrawn ? s - l.amountKobo : s), 0)
