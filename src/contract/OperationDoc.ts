/** One operation's documentation (summary, description, who may call it) and the wording operations share. */

const MODE = "A dashboard token acts in live mode unless it was minted with `mode: test` (POST /api/v1/dashboard/login); " +
  "an API key token acts in its key's mode."

export const ACCESS = {
  public: "Access: public, no bearer token.",
  credentials: "Access: public; authenticated by the credentials in the body.",
  signature: "Access: the bank provider; no bearer token, authenticated by the `X-Sandbox-Signature` header.",
  any: `Access: bearer token of either plane: an API key token, or a dashboard token of any role (Owner, Admin, Member). ${MODE}`,
  apiTest: "Access: API plane only, a test-mode API key token (a live key or a dashboard token gets 403).",
  apiOrOwnerAdmin: `Access: an API key token, or a dashboard token of an Owner or Admin (a Member gets 403). ${MODE}`,
  dashboard: `Access: dashboard plane, any role (Owner, Admin, Member); an API key token gets 403. ${MODE}`,
  ownerAdmin: `Access: dashboard plane, Owner or Admin (a Member or an API key token gets 403). ${MODE}`,
  later: `Access: bearer token (API key or dashboard); the roles are fixed when the operation is built. ${MODE}`
} as const

export type Access = keyof typeof ACCESS
export interface OperationDoc {
  readonly summary: string
  readonly description: string
  readonly access: Access
}

export const doc = (summary: string, access: Access, description = ""): OperationDoc => ({ summary, access, description })
export const PAGE = "Newest first, `{ data, hasMore }`: `take` (default 50, at most 500; larger is clamped) and `startingAfter` " +
  "(the last item's key from the previous page; an unknown key is a 400)."
export const SIGNED = "JSON body as the sandbox provider sends it: `event` (`transfer.inbound` or `transfer.reversal` for deposits; " +
  "`transfer.success`, `transfer.failed` or `transfer.reversed` for the outcome of a transfer we sent, with `reference` = its " +
  "merchantTxRef, `sessionId` = the provider's reference and an optional `reason`; anything else is ignored), `merchantId`, `sessionId` (the provider reference), `accountNumber` (the NUBAN credited), `amountKobo` (integer kobo), " +
  "`senderName`, `senderAccountNumber`, `senderBankCode`, `narration`, `paidAt` (ISO-8601), `reversedSessionId` (for a reversal). " +
  "Header `X-Sandbox-Signature`: lower-case hex HMAC-SHA256, keyed with the tenant's webhook secret for the mode (GET " +
  "/api/v1/dashboard/provider), over the canonical string `event|merchantId|sessionId|accountNumber|amountKobo|paidAt`. " +
  "Answers 200 `{ result, reference }` once the deposit is durably received (processed, duplicate, ignored or unmatched); " +
  "a repeated provider reference is answered again, never credited twice. Invalid text is a 400 before the signature is checked."

/** A public operation documented by its own OpenApi.Summary/Description annotations (no entry here) gets this line. */
export const PUBLIC_ACCESS = ACCESS.public

/** The description an operation shows: what it does, then who may call it. */
export const describe = (d: OperationDoc) => [d.description, ACCESS[d.access]].filter((s) => s !== "").join("\n\n")
