/**
 * Deposit risk score 0..100 with explainable reasons (NIGERIA.md §5.3). Pure:
 * the caller computes the window counts; this only weighs them.
 */

export interface RiskSignals {
  /** null: no payer name or no customer name to compare. */
  readonly nameMatch: { readonly score: number; readonly band: "STRONG" | "PARTIAL" | "WEAK" } | null
  /** Other inflows to the same account within VELOCITY_WINDOW_MS before this one. */
  readonly inflowsToAccountInWindow: number
  /** Distinct other accounts of the tenant the same payer name paid within PAYER_REUSE_WINDOW_MS. */
  readonly accountsPaidByPayerInWindow: number
}

export interface RiskReason {
  readonly code: string
  readonly points: number
  readonly detail: string
}

export interface RiskAssessment {
  /** Integer 0..100. */
  readonly score: number
  readonly reasons: ReadonlyArray<RiskReason>
}

export const VELOCITY_WINDOW_MS = 10 * 60_000
export const PAYER_REUSE_WINDOW_MS = 24 * 3_600_000
export const DEFAULT_RISK_THRESHOLD = 70

// Third-party payments are normal in Nigeria, so no name signal alone reaches the
// default threshold (70); a total mismatch (60) plus any velocity or reuse tier does,
// as does heavy payer reuse (50) plus velocity (20). Partial matches barely count.
export const NAME_MISMATCH_TOTAL_POINTS = 60
export const NAME_MISMATCH_POINTS = 40
export const NAME_PARTIAL_POINTS = 15
export const TOTAL_MISMATCH_BELOW = 0.3

/** [minimum count, points], highest tier first. */
export const VELOCITY_TIERS: ReadonlyArray<readonly [number, number]> = [[10, 45], [5, 30], [3, 20]]
export const PAYER_REUSE_TIERS: ReadonlyArray<readonly [number, number]> = [[8, 50], [4, 35], [2, 20]]

const nameReason = (m: RiskSignals["nameMatch"]): RiskReason | undefined => {
  if (m === null || m.band === "STRONG") return undefined
  const detail = `payer name matches customer name at ${m.score.toFixed(2)} (${m.band})`
  if (m.band === "PARTIAL") return { code: "name_partial_match", points: NAME_PARTIAL_POINTS, detail }
  const points = m.score < TOTAL_MISMATCH_BELOW ? NAME_MISMATCH_TOTAL_POINTS : NAME_MISMATCH_POINTS
  return { code: "name_mismatch", points, detail }
}

const tierPoints = (tiers: ReadonlyArray<readonly [number, number]>, count: number): number =>
  tiers.find(([min]) => count >= min)?.[1] ?? 0

const velocityReason = (count: number): RiskReason | undefined => {
  const points = tierPoints(VELOCITY_TIERS, count)
  return points === 0
    ? undefined
    : { code: "velocity", points, detail: `${count} other inflows to this account in the last ${VELOCITY_WINDOW_MS / 60_000} minutes` }
}

const payerReuseReason = (count: number): RiskReason | undefined => {
  const points = tierPoints(PAYER_REUSE_TIERS, count)
  return points === 0
    ? undefined
    : {
        code: "payer_name_reuse",
        points,
        detail: `payer name paid ${count} other accounts in the last ${PAYER_REUSE_WINDOW_MS / 3_600_000} hours`
      }
}

export const scoreRisk = (s: RiskSignals): RiskAssessment => {
  const reasons = [
    nameReason(s.nameMatch),
    velocityReason(s.inflowsToAccountInWindow),
    payerReuseReason(s.accountsPaidByPayerInWindow)
  ].filter((r): r is RiskReason => r !== undefined)
  const total = reasons.reduce((sum, r) => sum + r.points, 0)
  return { score: Math.min(100, Math.max(0, Math.round(total))), reasons }
}

export const requiresReview = (a: RiskAssessment, thresholdScore: number): boolean => a.score >= thresholdScore
