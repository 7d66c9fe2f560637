import { describe, expect, it } from "vitest"
import {
  DEFAULT_RISK_THRESHOLD,
  PAYER_REUSE_WINDOW_MS,
  requiresReview,
  type RiskSignals,
  scoreRisk,
  VELOCITY_WINDOW_MS
} from "../../src/domain/Risk.js"

const NONE: RiskSignals = { nameMatch: null, inflowsToAccountInWindow: 0, accountsPaidByPayerInWindow: 0 }
const strong = { score: 0.96, band: "STRONG" } as const
const partial = { score: 0.8, band: "PARTIAL" } as const
const weak = { score: 0.5, band: "WEAK" } as const
const totalMismatch = { score: 0, band: "WEAK" } as const

const signals = (over: Partial<RiskSignals>): RiskSignals => ({ ...NONE, ...over })
const codes = (s: RiskSignals) => scoreRisk(s).reasons.map((r) => r.code)

describe("scoreRisk", () => {
  it("scores zero signals 0 with no reasons", () => {
    expect(scoreRisk(NONE)).toEqual({ score: 0, reasons: [] })
    expect(scoreRisk(signals({ nameMatch: strong }))).toEqual({ score: 0, reasons: [] })
  })

  it.each([
    ["STRONG", strong, 0, []],
    ["PARTIAL", partial, 15, ["name_partial_match"]],
    ["WEAK at 0.5", weak, 40, ["name_mismatch"]],
    ["WEAK at exactly 0.3", { score: 0.3, band: "WEAK" } as const, 40, ["name_mismatch"]],
    ["WEAK at 0.29", { score: 0.29, band: "WEAK" } as const, 60, ["name_mismatch"]],
    ["WEAK at 0", totalMismatch, 60, ["name_mismatch"]]
  ] as const)("name match %s alone scores %d", (_label, nameMatch, score, reasonCodes) => {
    const s = signals({ nameMatch })
    expect(scoreRisk(s).score).toBe(score)
    expect(codes(s)).toEqual(reasonCodes)
  })

  it.each([
    [0, 0], [2, 0], [3, 20], [4, 20], [5, 30], [9, 30], [10, 45], [50, 45]
  ])("velocity of %d prior inflows alone scores %d", (count, score) => {
    const s = signals({ inflowsToAccountInWindow: count })
    expect(scoreRisk(s).score).toBe(score)
    expect(codes(s)).toEqual(score === 0 ? [] : ["velocity"])
  })

  it.each([
    [0, 0], [1, 0], [2, 20], [3, 20], [4, 35], [7, 35], [8, 50], [100, 50]
  ])("payer name reused on %d other accounts alone scores %d", (count, score) => {
    const s = signals({ accountsPaidByPayerInWindow: count })
    expect(scoreRisk(s).score).toBe(score)
    expect(codes(s)).toEqual(score === 0 ? [] : ["payer_name_reuse"])
  })

  it("keeps every single signal below the default threshold", () => {
    const singles = [
      signals({ nameMatch: totalMismatch }),
      signals({ inflowsToAccountInWindow: 1000 }),
      signals({ accountsPaidByPayerInWindow: 1000 })
    ]
    for (const s of singles) expect(requiresReview(scoreRisk(s), DEFAULT_RISK_THRESHOLD)).toBe(false)
  })

  it.each([
    ["total mismatch + velocity", { nameMatch: totalMismatch, inflowsToAccountInWindow: 3 }, 80],
    ["total mismatch + payer reuse", { nameMatch: totalMismatch, accountsPaidByPayerInWindow: 2 }, 80],
    ["heavy reuse + velocity", { accountsPaidByPayerInWindow: 8, inflowsToAccountInWindow: 3 }, 70],
    ["weak mismatch + mid velocity", { nameMatch: weak, inflowsToAccountInWindow: 5 }, 70],
    ["mid reuse + top velocity", { accountsPaidByPayerInWindow: 4, inflowsToAccountInWindow: 10 }, 80]
  ] as const)("%s crosses the default threshold (%#)", (_label, over, score) => {
    const a = scoreRisk(signals(over))
    expect(a.score).toBe(score)
    expect(requiresReview(a, DEFAULT_RISK_THRESHOLD)).toBe(true)
  })

  it.each([
    ["weak mismatch + low velocity", { nameMatch: weak, inflowsToAccountInWindow: 3 }, 60],
    ["partial + mid reuse", { nameMatch: partial, accountsPaidByPayerInWindow: 4 }, 50],
    ["mid reuse + low velocity", { accountsPaidByPayerInWindow: 4, inflowsToAccountInWindow: 3 }, 55]
  ] as const)("%s stays below the default threshold", (_label, over, score) => {
    const a = scoreRisk(signals(over))
    expect(a.score).toBe(score)
    expect(requiresReview(a, DEFAULT_RISK_THRESHOLD)).toBe(false)
  })

  it("clamps at 100 but keeps every reason", () => {
    const a = scoreRisk({ nameMatch: totalMismatch, inflowsToAccountInWindow: 10, accountsPaidByPayerInWindow: 8 })
    expect(a.score).toBe(100)
    expect(a.reasons.map((r) => r.code)).toEqual(["name_mismatch", "velocity", "payer_name_reuse"])
    expect(a.reasons.reduce((s, r) => s + r.points, 0)).toBe(155)
  })

  it("returns an integer score and a human-readable detail per reason", () => {
    const a = scoreRisk({ nameMatch: { score: 0.123456, band: "WEAK" }, inflowsToAccountInWindow: 3, accountsPaidByPayerInWindow: 2 })
    expect(Number.isInteger(a.score)).toBe(true)
    for (const r of a.reasons) expect(r.detail.length).toBeGreaterThan(0)
    expect(a.reasons[0]?.detail).toContain("0.12")
  })
})

describe("requiresReview", () => {
  it("reviews at exactly the threshold and above, not below", () => {
    const at = scoreRisk(signals({ nameMatch: weak, inflowsToAccountInWindow: 5 }))
    expect(at.score).toBe(70)
    expect(requiresReview(at, 70)).toBe(true)
    expect(requiresReview(at, 71)).toBe(false)
    expect(requiresReview(at, 69)).toBe(true)
  })

  it("reviews everything at threshold 0", () => {
    expect(requiresReview(scoreRisk(NONE), 0)).toBe(true)
  })
})

describe("windows", () => {
  it("are ten minutes and twenty-four hours", () => {
    expect(VELOCITY_WINDOW_MS).toBe(600_000)
    expect(PAYER_REUSE_WINDOW_MS).toBe(86_400_000)
    expect(DEFAULT_RISK_THRESHOLD).toBe(70)
  })
})
