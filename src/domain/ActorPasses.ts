import type { FlowAction } from "./Automation.js"

/** A step of an actor's pass: runs applied together by one read and one write of each kind, or one run alone. */
export type PassStep<R> =
  | { readonly kind: "together"; readonly holds: ReadonlyArray<R>; readonly notifies: ReadonlyArray<R> }
  | { readonly kind: "alone"; readonly run: R }

/** The one action of a run's actions (top to bottom), when it has exactly one. */
export const soleAction = (actions: ReadonlyArray<FlowAction>): FlowAction | undefined => (actions.length === 1 ? actions[0] : undefined)

/**
 * How the automation actor applies a pass's runs (in their claimed order): a run of several actions, or whose one
 * action is `release` or `flag`, alone and in its place; between two such, the runs whose one action is `hold` together
 * (in their order), then those whose one action is `notify`. Regrouping keeps every order the outbox's runner promises:
 * runs are ordered per key (account and rule or flow), a rule or flow fires one kind of run, so a hold and a notify are
 * never on one key, and a notify reads nothing a hold writes (the deposit's transaction). What may change a hold's
 * outcome (a release, a flag, another action of a flow) keeps its place. In claimed order they went together only
 * while consecutive; on the heavy workload they alternate (an overpaying deposit that also pays its account in full
 * fires both), and passes fell apart into holds of one, 8 round trips each (issue 33). `actionsOf`: a run's actions.
 */
export const passSteps = <R>(runs: ReadonlyArray<R>, actionsOf: (run: R) => ReadonlyArray<FlowAction>): ReadonlyArray<PassStep<R>> => {
  const only = (run: R) => soleAction(actionsOf(run))
  const together = (run: R) => only(run) === "hold" || only(run) === "notify"
  const steps: Array<PassStep<R>> = []
  for (let i = 0; i < runs.length;) {
    let j = i
    while (j < runs.length && together(runs[j]!)) j++
    if (j === i) {
      steps.push({ kind: "alone", run: runs[i++]! })
      continue
    }
    const segment = runs.slice(i, j)
    i = j
    steps.push({ kind: "together", holds: segment.filter((r) => only(r) === "hold"), notifies: segment.filter((r) => only(r) === "notify") })
  }
  return steps
}
