/**
 * A function of a string key that remembers its answers, at most `max` of them: past that the memo starts again
 * (a bound, not an eviction policy; the callers' keys are few and repeat, so the bound is a guard, not a working
 * limit). For pure functions only.
 */
export const boundedMemo = <V>(max: number, f: (key: string) => V) => {
  const answers = new Map<string, V>()
  return (key: string): V => {
    const known = answers.get(key)
    if (known !== undefined) return known
    const answer = f(key)
    if (answers.size >= max) answers.clear()
    answers.set(key, answer)
    return answer
  }
}
