/** "Did you mean": the known name nearest to a misspelt one (unknown body fields and query parameters; the copilot's words). */

/** Optimal string alignment distance: insertions, deletions, substitutions, and a swap of neighbours as one edit. */
export const editDistance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : i)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1)
      d[i]![j] = v
    }
  }
  return d[a.length]![b.length]!
}

/** editDistance with case ignored, for "did you mean". */
export const distance = (a: string, b: string): number => editDistance(a.toLowerCase(), b.toLowerCase())

/** The known name nearest to `name`, when it is near enough to be a slip (at most a third of its letters, and 3). */
export const nearest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  let best: { readonly name: string; readonly d: number } | undefined
  for (const k of known) {
    const d = distance(name, k)
    if (best === undefined || d < best.d) best = { name: k, d }
  }
  return best !== undefined && best.d > 0 && best.d <= Math.min(3, Math.max(1, Math.floor(best.name.length / 3))) ? best.name : undefined
}
