import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { passSteps, soleAction } from "../../src/domain/ActorPasses.js"
import { FLOW_ACTIONS, type FlowAction } from "../../src/domain/Automation.js"

interface Run {
  readonly n: number
  readonly actions: ReadonlyArray<FlowAction>
  /** The key the runner orders by: a rule or flow's firings for an account. */
  readonly key: string
}

const action = fc.constantFrom<FlowAction>(...FLOW_ACTIONS)
/** A pass: runs of 1-3 actions over a few keys; a key fires one kind of run (a rule or flow has one set of actions). */
const pass = fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), extra: fc.array(action, { maxLength: 2 }) }), { maxLength: 40 })
  .chain((specs) => fc.array(action, { minLength: 6, maxLength: 6 }).map((firstOf) => {
    const actionsOf = new Map<number, ReadonlyArray<FlowAction>>()
    return specs.map((s, n): Run => {
      if (!actionsOf.has(s.key)) actionsOf.set(s.key, [firstOf[s.key]!, ...s.extra])
      return { n, key: String(s.key), actions: actionsOf.get(s.key)! }
    })
  }))

const stepsOf = (runs: ReadonlyArray<Run>) => passSteps(runs, (r) => r.actions)
const order = (steps: ReturnType<typeof stepsOf>) =>
  steps.flatMap((s) => (s.kind === "alone" ? [s.run] : [...s.holds, ...s.notifies]))

describe("the actor's pass steps (src/domain/ActorPasses.ts)", () => {
  it("apply every run once, keep each key's runs in order, and keep every run that may change a hold in its place", () => {
    fc.assert(fc.property(pass, (runs) => {
      const applied = order(stepsOf(runs))
      expect(applied.map((r) => r.n).sort((a, b) => a - b)).toEqual(runs.map((r) => r.n))
      for (const key of new Set(runs.map((r) => r.key))) {
        expect(applied.filter((r) => r.key === key).map((r) => r.n)).toEqual(runs.filter((r) => r.key === key).map((r) => r.n))
      }
      // A run that goes alone has the same runs before it as in the claimed order.
      applied.forEach((r, i) => {
        const only = soleAction(r.actions)
        if (only === "hold" || only === "notify") return
        expect(new Set(applied.slice(0, i).map((x) => x.n))).toEqual(new Set(runs.slice(0, r.n).map((x) => x.n)))
      })
      // Holds keep their order among themselves.
      const holds = applied.filter((r) => soleAction(r.actions) === "hold").map((r) => r.n)
      expect(holds).toEqual([...holds].sort((a, b) => a - b))
    }))
  })

  it("puts the holds of alternating hold and notify runs in one step (the heavy workload: 8 round trips per step)", () => {
    const runs: Array<Run> = Array.from({ length: 50 }, (_, n) => ({ n, key: n % 2 === 0 ? "rule" : "flow", actions: [n % 2 === 0 ? "hold" : "notify"] }))
    const steps = stepsOf(runs)
    expect(steps).toHaveLength(1)
    const [s] = steps
    expect(s?.kind === "together" && s.holds.map((r) => r.n)).toEqual(runs.filter((r) => r.n % 2 === 0).map((r) => r.n))
    expect(s?.kind === "together" && s.notifies.map((r) => r.n)).toEqual(runs.filter((r) => r.n % 2 === 1).map((r) => r.n))
  })

  it("splits at a release, a flag or a run of several actions", () => {
    const runs: Array<Run> = [
      { n: 0, key: "a", actions: ["hold"] }, { n: 1, key: "b", actions: ["notify"] }, { n: 2, key: "c", actions: ["release"] },
      { n: 3, key: "a", actions: ["hold"] }, { n: 4, key: "d", actions: ["hold", "notify"] }, { n: 5, key: "e", actions: ["flag"] },
      { n: 6, key: "b", actions: ["notify"] }
    ]
    expect(stepsOf(runs).map((s) => (s.kind === "alone" ? `alone ${s.run.n}` : `holds ${s.holds.map((r) => r.n)} notifies ${s.notifies.map((r) => r.n)}`)))
      .toEqual(["holds 0 notifies 1", "alone 2", "holds 3 notifies ", "alone 4", "alone 5", "holds  notifies 6"])
  })
})
