/** Counts as people write them: "1 deposit", "2 deposits", "0 deposits"; `plural` for the irregular ones. */
export const count = (n: number, singular: string, plural = `${singular}s`): string =>
  `${n.toLocaleString("en-NG")} ${n === 1 ? singular : plural}`
