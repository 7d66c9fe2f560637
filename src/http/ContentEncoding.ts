/**
 * Which stored encoding of a static file to send, from the request's `Accept-Encoding` (RFC 9110 12.5.3): the codings
 * the client accepts with a non-zero weight (`*` stands for any not named), the highest weight first, brotli before
 * gzip on a tie; identity when it accepts neither (no header, `identity`, or `gzip;q=0`) or weighs identity higher.
 */

export type StoredEncoding = "br" | "gzip"
export type Chosen = StoredEncoding | "identity"

/** The weights a header gives: coding (lower case) to q, in [0, 1]. */
const weights = (header: string): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  for (const part of header.split(",")) {
    const [coding = "", ...paramList] = part.split(";").map((s) => s.trim().toLowerCase())
    if (coding === "") continue
    const q = paramList.map((p) => /^q\s*=\s*([0-9.]+)$/.exec(p)).find((m) => m !== null)
    const weight = q ? Number(q[1]) : 1
    out.set(coding, Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0)
  }
  return out
}

/** The encoding to send of those `available` (in order of preference on a tie), or identity. */
export const chooseEncoding = (acceptEncoding: string | undefined, available: ReadonlyArray<StoredEncoding> = ["br", "gzip"]): Chosen => {
  if (acceptEncoding === undefined || acceptEncoding.trim() === "") return "identity"
  const w = weights(acceptEncoding)
  const weightOf = (c: StoredEncoding) => w.get(c) ?? (c === "gzip" ? w.get("x-gzip") : undefined) ?? w.get("*") ?? 0
  let best: Chosen = "identity"
  let bestQ = 0
  for (const c of available) {
    const q = weightOf(c)
    if (q > bestQ) {
      best = c
      bestQ = q
    }
  }
  // Identity named with a higher weight than any stored coding is preferred ("gzip;q=0.5, identity").
  const identity = w.get("identity")
  return identity !== undefined && identity > bestQ ? "identity" : best
}
