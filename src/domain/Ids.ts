import * as crypto from "node:crypto"

/** Opaque, prefixed, unguessable ids: `ten_3f9c…`. The prefix says what the id names. */
export const newId = (prefix: string, bytes = 12): string => `${prefix}_${crypto.randomBytes(bytes).toString("hex")}`

/** A high-entropy secret for a caller to keep (API client secrets, webhook secrets). */
export const newSecret = (prefix: string, bytes = 32): string => `${prefix}_${crypto.randomBytes(bytes).toString("base64url")}`
