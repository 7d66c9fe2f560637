/**
 * The pure decisions of money rules and payment flows: which of a tenant's rules and flows a deposit fires, in what
 * order, how much a hold escrows, and the words an audit entry says. No IO; services/automation/ loads the rules,
 * flows and deposit facts, asks these functions, and applies what they answer.
 */

export const RULE_TRIGGERS = ["Overpaid", "Underpaid", "HighRisk", "AnyDeposit"] as const
export const RULE_ACTIONS = ["Hold", "Notify", "ReviewFlag"] as const
export const FLOW_TRIGGERS = ["deposit", "overpaid", "underpaid", "fully-paid", "high-risk"] as const
export const FLOW_ACTIONS = ["hold", "release", "notify", "flag"] as const

export type RuleTrigger = (typeof RULE_TRIGGERS)[number]
export type RuleAction = (typeof RULE_ACTIONS)[number]
export type FlowTrigger = (typeof FLOW_TRIGGERS)[number]
export type FlowAction = (typeof FLOW_ACTIONS)[number]

/** Stated limits: per tenant and mode, and per flow. */
export const MAX_RULES = 100
export const MAX_FLOWS = 100
export const MAX_FLOW_ACTIONS = 10
export const PRIORITY_MIN = 0
export const PRIORITY_MAX = 1_000_000
export const DEFAULT_PRIORITY = 100
export const DRY_RUN_DEFAULT_TAKE = 50
export const DRY_RUN_MAX_TAKE = 500

export interface RuleConfig {
  readonly id: string
  readonly trigger: RuleTrigger
  readonly action: RuleAction
  /** Gates Overpaid (the deposit's surplus) and Underpaid (the account's deficit after it); null means any. */
  readonly thresholdKobo: number | null
  /** Gates HighRisk (required there). */
  readonly minRiskScore: number | null
  readonly priority: number
  readonly createdAt: Date
}

export interface FlowConfig {
  readonly id: string
  readonly name: string
  readonly trigger: FlowTrigger
  readonly actions: ReadonlyArray<FlowAction>
  readonly minAmountKobo: number | null
  readonly minRiskScore: number | null
  readonly priority: number
  readonly enabled: boolean
  readonly createdAt: Date
}

/** What a rule or flow may look at: one reconciled inflow into a known virtual account. */
export interface DepositFacts {
  readonly reference: string
  readonly accountRef: string
  readonly amountKobo: number
  readonly riskScore: number
  /** Its money was credited to the account (status Completed); false while it awaits review. */
  readonly credited: boolean
  /** The account's expected amount; null for an open account. */
  readonly expectedAmountKobo: number | null
  /** The part of this deposit above what was still due (0 for an open account). */
  readonly surplusKobo: number
  /** What the account still owes after this deposit (0 for an open account). */
  readonly deficitAfterKobo: number
}

/** One rule or flow a deposit fired, in the order they run. */
export interface Firing {
  readonly source: "rule" | "flow"
  readonly sourceId: string
  /** The flow's name; for a rule, "<trigger> → <action>". */
  readonly sourceName: string
  readonly trigger: string
  readonly actions: ReadonlyArray<FlowAction>
  /** What a hold of this firing escrows (the surplus for an overpayment trigger, else the deposit), before what is free caps it. */
  readonly holdKobo: number
  /** Why it fired, in words (the review flag's reason). */
  readonly why: string
}

const RULE_ACTION_STEP: Record<RuleAction, FlowAction> = { Hold: "hold", Notify: "notify", ReviewFlag: "flag" }

const atLeast = (value: number, gate: number | null) => value >= Math.max(gate ?? 0, 1)

/** Whether a rule fires for the deposit: its trigger, under its gate. */
export const ruleFires = (rule: Pick<RuleConfig, "trigger" | "thresholdKobo" | "minRiskScore">, d: DepositFacts): boolean => {
  switch (rule.trigger) {
    case "Overpaid":
      return d.credited && d.surplusKobo > 0 && atLeast(d.surplusKobo, rule.thresholdKobo)
    case "Underpaid":
      return d.credited && d.expectedAmountKobo !== null && d.deficitAfterKobo > 0 && atLeast(d.deficitAfterKobo, rule.thresholdKobo)
    case "HighRisk":
      return d.riskScore >= (rule.minRiskScore ?? 101)
    case "AnyDeposit":
      return true
  }
}

/** Whether a flow's trigger matches the deposit (its gates aside). */
export const flowTriggerMatches = (trigger: FlowTrigger, minRiskScore: number | null, d: DepositFacts): boolean => {
  switch (trigger) {
    case "deposit":
      return true
    case "overpaid":
      return d.credited && d.surplusKobo > 0
    case "underpaid":
      return d.credited && d.expectedAmountKobo !== null && d.deficitAfterKobo > 0
    case "fully-paid":
      // This deposit completed the expected amount: nothing owed after it, and some of it was still due.
      return d.credited && d.expectedAmountKobo !== null && d.deficitAfterKobo === 0 && d.surplusKobo < d.amountKobo
    case "high-risk":
      // Without a minRiskScore, "high risk" is the service's own judgement: the deposit was held for review.
      return minRiskScore === null ? !d.credited : d.riskScore >= minRiskScore
  }
}

/** Whether a flow fires: enabled, its trigger, and its optional gates (`minAmountKobo`, `minRiskScore`). */
export const flowFires = (flow: Pick<FlowConfig, "trigger" | "minAmountKobo" | "minRiskScore" | "enabled">, d: DepositFacts): boolean =>
  flow.enabled &&
  flowTriggerMatches(flow.trigger, flow.minRiskScore, d) &&
  (flow.minAmountKobo === null || d.amountKobo >= flow.minAmountKobo) &&
  (flow.minRiskScore === null || d.riskScore >= flow.minRiskScore)

/** Ascending priority; equal priorities in creation order, then by id (a total order, so every run agrees). */
export const byPriority = <T extends { readonly priority: number; readonly createdAt: Date; readonly id: string }>(a: T, b: T): number =>
  a.priority - b.priority || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const holdFor = (overpaymentTrigger: boolean, d: DepositFacts) => (overpaymentTrigger ? d.surplusKobo : d.amountKobo)

const ruleWhy = (rule: RuleConfig, d: DepositFacts): string => {
  switch (rule.trigger) {
    case "Overpaid":
      return `overpaid by ${nairaText(d.surplusKobo)}`
    case "Underpaid":
      return `underpaid: ${nairaText(d.deficitAfterKobo)} still owed`
    case "HighRisk":
      return `risk score ${d.riskScore} (at least ${rule.minRiskScore})`
    case "AnyDeposit":
      return "a deposit arrived"
  }
}

export const ruleName = (rule: Pick<RuleConfig, "trigger" | "action">) => `${rule.trigger} → ${rule.action}`

export const ruleFiring = (rule: RuleConfig, d: DepositFacts): Firing => ({
  source: "rule",
  sourceId: rule.id,
  sourceName: ruleName(rule),
  trigger: rule.trigger,
  actions: [RULE_ACTION_STEP[rule.action]],
  holdKobo: holdFor(rule.trigger === "Overpaid", d),
  why: `rule ${rule.id} (${rule.trigger}): ${ruleWhy(rule, d)}`
})

export const flowFiring = (flow: FlowConfig, d: DepositFacts): Firing => ({
  source: "flow",
  sourceId: flow.id,
  sourceName: flow.name,
  trigger: flow.trigger,
  actions: flow.actions,
  holdKobo: holdFor(flow.trigger === "overpaid", d),
  why: `flow "${flow.name}" (${flow.trigger}), risk score ${d.riskScore}`
})

/** What the deposit fires: its rules in ascending priority, then its enabled flows in ascending priority. */
export const planFirings = (rules: ReadonlyArray<RuleConfig>, flows: ReadonlyArray<FlowConfig>, d: DepositFacts): ReadonlyArray<Firing> => [
  ...[...rules].sort(byPriority).filter((r) => ruleFires(r, d)).map((r) => ruleFiring(r, d)),
  ...[...flows].sort(byPriority).filter((f) => flowFires(f, d)).map((f) => flowFiring(f, d))
]

/** What a deposit fired would do, in words, when nothing is applied (dry runs). */
export const dryRunOutcome = (action: FlowAction, firing: Firing, d: DepositFacts): string => {
  switch (action) {
    case "hold":
      return d.credited
        ? `would hold up to ${nairaText(firing.holdKobo)} in escrow (what of it is still free)`
        : "would hold nothing: the deposit awaits review and its money is not credited"
    case "release":
      return "would release the holds rules and flows placed on the account"
    case "notify":
      return `would send a ${firing.source}.notify event`
    case "flag":
      return d.credited ? "would flag the deposit for review" : "would note it: the deposit already awaits review"
  }
}

/**
 * One deposit of a dry run: whether the rule or flow would fire, and what each of its actions would do. A step's
 * `action` is spelt as its rule or flow spells it: a flow's lower-case (`hold`), a rule's as the rule names it (`Hold`,
 * `ReviewFlag`; give `ruleAction`).
 */
export const dryRunResult = (d: DepositFacts, fired: boolean, firing: Firing, ruleAction?: RuleAction) => ({
  transactionReference: d.reference,
  accountRef: d.accountRef,
  amountKobo: d.amountKobo,
  fired,
  steps: fired ? firing.actions.map((action) => ({ action: ruleAction ?? action, outcome: dryRunOutcome(action, firing, d) })) : []
})

/** 500000 -> "5,000.00 NGN": naira with kobo, for words people read (amounts on the wire stay integer kobo). */
export const nairaText = (kobo: number): string => {
  const sign = kobo < 0 ? "-" : ""
  const abs = Math.abs(kobo)
  const naira = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return `${sign}${naira}.${String(abs % 100).padStart(2, "0")} NGN`
}
