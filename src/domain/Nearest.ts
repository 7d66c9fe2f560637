/** "Did you mean": the known name nearest to a misspelt one (unknown body fields and query parameters). */

/** Edit distance (insert, delete, substitute, swap two neighbours; case ignored), for "did you mean". */
export const distance = (a: string, b: string): number => {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  const d: Array<Array<number>> = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1)
      d[i]![j] = v
    }
  }
  return d[s.length]![t.length]!
}

/** The known name nearest to `name`, when it is near enough to be a slip (at most a third of its letters, and 3). */
export const nearest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  let best: { readonly name: string; readonly d: number } | undefined
  for (const k of known) {
    const d = distance(name, k)
    if (best === undefined || d < best.d) best = { name: k, d }
  }
  return best !== undefined && best.d > 0 && best.d <= Math.min(3, Math.max(1, Math.floor(best.name.length / 3))) ? best.name : undefined
}
