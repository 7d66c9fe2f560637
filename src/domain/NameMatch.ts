/**
 * Graded payer-name ↔ customer-name matching (NIGERIA.md §5.2). A mismatch is
 * weak evidence on its own (third-party payments are normal), so this returns a
 * score and a band for the risk score rather than a yes/no.
 */

import { boundedMemo } from "./BoundedMemo.js"

export type NameMatchBand = "STRONG" | "PARTIAL" | "WEAK"

export interface NameMatch {
  readonly score: number
  readonly band: NameMatchBand
}

const HONORIFICS: ReadonlySet<string> = new Set([
  "MR", "MRS", "MS", "MISS", "DR", "CHIEF", "ALHAJI", "ALHAJA", "ALH", "ENGR", "PASTOR", "PST", "PROF",
  "BARR", "HON", "MALLAM", "MALAM", "SIR", "LADY", "REV", "EVANG", "DEACON", "DCN", "PRINCE", "PRINCESS",
  "OBA", "HRH", "OTUNBA", "BISHOP"
])

// Joint-account connector: "JOSHUA AND VIVIAN NNAJI" is the same shape as "JOSHUA & VIVIAN".
const CONNECTORS: ReadonlySet<string> = new Set(["AND"])

// Only second halves that are never standalone names, so "ABDUL MUSA" stays two tokens.
const ABDUL_SUFFIXES: ReadonlySet<string> = new Set([
  "RAHMAN", "RAHAMAN", "RAHEEM", "RAHIM", "KARIM", "KAREEM", "LAHI", "AZIZ", "MALIK", "WAHAB", "QADIR",
  "GANIYU", "HAMID", "HAMEED", "SALAM", "SALAMI", "JABBAR", "RAZAQ", "RAZAK", "MAJID", "MAJEED", "WAHEED",
  "LATEEF", "LATIF", "HAKEEM", "HAKIM", "RASHEED", "RASHID", "GAFAR", "GAFFAR", "QUADRI", "JELIL", "JALIL"
])

const MUHAMMAD_VARIANTS = ["MOHAMMED", "MUHAMMED", "MOHAMMAD", "MOHAMED", "MUHAMED", "MOHAMAD", "MUHAMAD", "MOHD", "MUHD"]

// Short form → full form; only short forms that overwhelmingly expand to one name.
const SHORT_FORMS: ReadonlyArray<readonly [string, string]> = [
  ["SEUN", "OLUWASEUN"], ["SEGUN", "OLUSEGUN"], ["TUNDE", "BABATUNDE"], ["FEMI", "OLUFEMI"],
  ["BAYO", "ADEBAYO"], ["DAPO", "OLADAPO"], ["LANRE", "OLANREWAJU"], ["TOYIN", "OLUWATOYIN"],
  ["KUNLE", "ADEKUNLE"], ["TOPE", "TEMITOPE"], ["SOLA", "OLUSOLA"], ["GBENGA", "OLUGBENGA"],
  ["EMEKA", "CHUKWUEMEKA"], ["NKEM", "NKEMDILIM"], ["IKE", "IKECHUKWU"], ["CHIDI", "CHIDIEBERE"],
  ["UCHE", "UCHECHUKWU"], ["EBUKA", "CHUKWUEBUKA"], ["NEDU", "CHINEDU"], ["NONSO", "CHINONSO"],
  ["KENE", "KENECHUKWU"], ["UGO", "UGOCHUKWU"]
]

const CANONICAL: ReadonlyMap<string, string> = new Map([
  ...MUHAMMAD_VARIANTS.map((v) => [v, "MUHAMMAD"] as const),
  ...SHORT_FORMS
])

/** A token as written (after cleaning) and in canonical form; compounds compare both. */
interface Token {
  readonly raw: string
  readonly canon: string
}

/** Fintech/pool prefixes sit before a "/" ("PAYSTACK/John Doe", "FROM GTBANK/ADEYEMI JOHN O"): keep the last segment. */
const lastSegment = (raw: string): string => {
  const segments = raw.split("/").filter((s) => s.trim().length > 0)
  return segments[segments.length - 1] ?? ""
}

const cleanWords = (raw: string): Array<string> =>
  lastSegment(raw)
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toUpperCase()
    .replace(/['’‘`]/g, "")
    .replace(/[^A-Z]+/g, " ")
    .split(" ")
    .filter((w) => w.length > 0)

/** A name made only of titles ("PRINCE") keeps them rather than vanishing. */
const dropTitlesAndConnectors = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const kept = words.filter((w) => !HONORIFICS.has(w) && !CONNECTORS.has(w))
  return kept.length > 0 ? kept : words
}

const joinAbdul = (words: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < words.length; i++) {
    const next = words[i + 1]
    if (words[i] === "ABDUL" && next !== undefined && ABDUL_SUFFIXES.has(next)) {
      out.push(`ABDUL${next}`)
      i++
    } else {
      out.push(words[i]!)
    }
  }
  return out
}

const tokeniseNow = (raw: string): ReadonlyArray<Token> =>
  joinAbdul(dropTitlesAndConnectors(cleanWords(raw))).map((w) => ({ raw: w, canon: CANONICAL.get(w) ?? w }))

/**
 * Tokens by name, kept: a customer's name comes back with each of its deposits and payers' names repeat, while the
 * (payer, customer) pair below often does not (tokenising, mostly Unicode normalisation and regexes, showed in the
 * reconciler's profile; docs/performance.md). The tokens are never mutated.
 */
const tokenise = boundedMemo(20_000, tokeniseNow)

/** Uppercase ASCII tokens, honorifics and fintech prefixes dropped, common variants canonicalised. */
export const normaliseName = (raw: string): ReadonlyArray<string> => tokenise(raw).map((t) => t.canon)

const jaro = (a: string, b: string): number => {
  const window = Math.max(0, Math.floor(Math.max(a.length, b.length) / 2) - 1)
  const aHit: Array<boolean> = new Array<boolean>(a.length).fill(false)
  const bHit: Array<boolean> = new Array<boolean>(b.length).fill(false)
  let matches = 0
  for (let i = 0; i < a.length; i++) {
    const hi = Math.min(b.length - 1, i + window)
    for (let j = Math.max(0, i - window); j <= hi; j++) {
      if (!bHit[j] && a[i] === b[j]) {
        aHit[i] = bHit[j] = true
        matches++
        break
      }
    }
  }
  if (matches === 0) return 0
  let halfTranspositions = 0
  let k = 0
  for (let i = 0; i < a.length; i++) {
    if (!aHit[i]) continue
    while (!bHit[k]) k++
    if (a[i] !== b[k]) halfTranspositions++
    k++
  }
  const m = matches
  return (m / a.length + m / b.length + (m - halfTranspositions / 2) / m) / 3
}

/**
 * Jaro-Winkler similarity in [0, 1]: prefix scale 0.1, prefix up to 4, boost
 * applied only when Jaro ≥ 0.7 (Winkler's original rule, as in Apache commons-text).
 */
export const jaroWinkler = (a: string, b: string): number => {
  if (a === b) return 1
  if (a.length === 0 || b.length === 0) return 0
  const j = jaro(a, b)
  if (j < 0.7) return j
  let prefix = 0
  while (prefix < 4 && prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  return j + prefix * 0.1 * (1 - j)
}

const TOKEN_MATCH_THRESHOLD = 0.88
const INITIAL_WEIGHT = 0.5
const INITIAL_CREDIT = 0.8

const isInitial = (t: Token): boolean => t.canon.length === 1
const weightOf = (t: Token): number => (isInitial(t) ? INITIAL_WEIGHT : 1)

/** One pairing: token indices on each side (two on one side for a compound), and the weight it earns. */
interface Pairing {
  readonly a: ReadonlyArray<number>
  readonly b: ReadonlyArray<number>
  readonly gain: number
  readonly sim: number
  readonly full: boolean
}

const bestSimilarity = (xs: ReadonlyArray<string>, ys: ReadonlyArray<string>): number =>
  Math.max(...xs.flatMap((x) => ys.map((y) => jaroWinkler(x, y))))

const formsOf = (t: Token): ReadonlyArray<string> => (t.raw === t.canon ? [t.canon] : [t.canon, t.raw])

const sameInitial = (initial: Token, other: Token): boolean =>
  other.canon.startsWith(initial.canon) || other.raw.startsWith(initial.canon)

const pairTokens = (x: Token, y: Token, i: number, j: number): Pairing | undefined => {
  const ix = isInitial(x)
  const iy = isInitial(y)
  if (ix && iy) return x.canon === y.canon ? { a: [i], b: [j], gain: INITIAL_WEIGHT, sim: 1, full: false } : undefined
  if (ix || iy) {
    const matches = ix ? sameInitial(x, y) : sameInitial(y, x)
    return matches ? { a: [i], b: [j], gain: INITIAL_WEIGHT * INITIAL_CREDIT, sim: INITIAL_CREDIT, full: false } : undefined
  }
  const sim = bestSimilarity(formsOf(x), formsOf(y))
  return sim >= TOKEN_MATCH_THRESHOLD ? { a: [i], b: [j], gain: 1, sim, full: true } : undefined
}

/** Adjacent full tokens of `xs` whose concatenation matches one full token of `ys` (CHUKWU EMEKA ↔ CHUKWUEMEKA). */
const compoundPairings = (xs: ReadonlyArray<Token>, ys: ReadonlyArray<Token>, swap: boolean): Array<Pairing> => {
  const out: Array<Pairing> = []
  for (let i = 0; i + 1 < xs.length; i++) {
    const first = xs[i]!
    const second = xs[i + 1]!
    if (isInitial(first) || isInitial(second)) continue
    const joined = [first.raw + second.raw, first.canon + second.canon]
    ys.forEach((y, j) => {
      if (isInitial(y)) return
      const sim = bestSimilarity(joined, formsOf(y))
      if (sim < TOKEN_MATCH_THRESHOLD) return
      const pair = { x: [i, i + 1], y: [j] }
      out.push({ a: swap ? pair.y : pair.x, b: swap ? pair.x : pair.y, gain: 1, sim, full: true })
    })
  }
  return out
}

const allPairings = (as: ReadonlyArray<Token>, bs: ReadonlyArray<Token>): Array<Pairing> => {
  const singles = as.flatMap((x, i) => bs.flatMap((y, j) => pairTokens(x, y, i, j) ?? []))
  return [...singles, ...compoundPairings(as, bs, false), ...compoundPairings(bs, as, true)]
}

const greedy = (sorted: ReadonlyArray<Pairing>): ReadonlyArray<Pairing> => {
  const usedA = new Set<number>()
  const usedB = new Set<number>()
  const chosen: Array<Pairing> = []
  for (const p of sorted) {
    if (p.a.some((i) => usedA.has(i)) || p.b.some((j) => usedB.has(j))) continue
    p.a.forEach((i) => usedA.add(i))
    p.b.forEach((j) => usedB.add(j))
    chosen.push(p)
  }
  return chosen
}

interface Outcome {
  readonly score: number
  readonly sharedFull: number
}

/** A compound pairing makes two tokens count as one, so that side's weight drops by one. */
const evaluate = (chosen: ReadonlyArray<Pairing>, as: ReadonlyArray<Token>, bs: ReadonlyArray<Token>): Outcome => {
  const sum = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0)
  const matched = sum(chosen.map((p) => p.gain))
  const weightA = sum(as.map(weightOf)) - chosen.filter((p) => p.a.length === 2).length
  const weightB = sum(bs.map(weightOf)) - chosen.filter((p) => p.b.length === 2).length
  const raw = 0.8 * (matched / Math.min(weightA, weightB)) + 0.2 * (matched / Math.max(weightA, weightB))
  return { score: Math.round(Math.min(1, raw) * 10_000) / 10_000, sharedFull: chosen.filter((p) => p.full).length }
}

/**
 * Greedy is run twice, preferring compounds or single tokens on ties, and the better
 * outcome kept: "CHUKWU EMEKA" needs the compound, "CHUKWU EMEKA" ↔ "CHUKWUEMEKA CHUKWU" the singles.
 */
const bestOutcome = (as: ReadonlyArray<Token>, bs: ReadonlyArray<Token>): Outcome => {
  const pairings = allPairings(as, bs)
  const bySpan = (compoundFirst: boolean) => (p: Pairing, q: Pairing) =>
    q.gain - p.gain || q.sim - p.sim || (compoundFirst ? 1 : -1) * (q.a.length + q.b.length - p.a.length - p.b.length)
  const outcomes = [true, false].map((c) => evaluate(greedy([...pairings].sort(bySpan(c))), as, bs))
  const [x, y] = outcomes as [Outcome, Outcome]
  return y.score > x.score || (y.score === x.score && y.sharedFull > x.sharedFull) ? y : x
}

const fullCount = (ts: ReadonlyArray<Token>): number => ts.filter((t) => !isInitial(t)).length

/**
 * Order-insensitive token matching. A matched full token earns credit 1.0 (the 0.88
 * Jaro-Winkler threshold already absorbs spelling variance, and exact duplicates must
 * score 1); an initial earns 0.8 of its 0.5 weight against a full token.
 * score = 0.8·matched/weight(shorter) + 0.2·matched/weight(longer).
 * STRONG also needs ≥ 2 shared full tokens when both names have ≥ 2 (Monnify's rule);
 * otherwise the band is capped at PARTIAL while the score is reported unchanged.
 */
export const matchNames = (payer: string, customer: string): NameMatch => rememberedMatch(`${payer.length}:${payer}${customer}`)

/**
 * Customers pay again and again from the same account, so the same (payer, customer) pair comes back: the answer is
 * kept (the function is pure), which spares the tokenising and Jaro-Winkler of a repeat.
 */
const rememberedMatch = boundedMemo(20_000, (key) => {
  // The key is `<payer length>:<payer><customer>`, so any two names make one key and split back exactly.
  const colon = key.indexOf(":")
  const end = colon + 1 + Number(key.slice(0, colon))
  return computeMatch(key.slice(colon + 1, end), key.slice(end))
})

const computeMatch = (payer: string, customer: string): NameMatch => {
  const as = tokenise(payer)
  const bs = tokenise(customer)
  if (as.length === 0 || bs.length === 0) return { score: 0, band: "WEAK" }
  const { score, sharedFull } = bestOutcome(as, bs)
  const monnifyOk = fullCount(as) < 2 || fullCount(bs) < 2 || sharedFull >= 2
  const band: NameMatchBand = score >= 0.9 && monnifyOk ? "STRONG" : score >= 0.7 ? "PARTIAL" : "WEAK"
  return { score, band }
}
