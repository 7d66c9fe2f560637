import * as crypto from "node:crypto"

/**
 * Random bytes for ids, drawn from the CSPRNG 4 KiB at a time: one call per ~340 ids instead of one each. Bytes are handed out once and never reused.
 */
const POOL_BYTES = 4096
let pool = crypto.randomBytes(POOL_BYTES)
let offset = 0
const randomHex = (bytes: number): string => {
  if (bytes > POOL_BYTES) return crypto.randomBytes(bytes).toString("hex")
  if (offset + bytes > POOL_BYTES) {
    pool = crypto.randomBytes(POOL_BYTES)
    offset = 0
  }
  const hex = pool.toString("hex", offset, offset + bytes)
  offset += bytes
  return hex
}

/** Opaque, prefixed, unguessable ids: `ten_3f9c…`. The prefix says what the id names. */
export const newId = (prefix: string, bytes = 12): string => `${prefix}_${randomHex(bytes)}`

/** A high-entropy secret for a caller to keep (API client secrets, webhook secrets). */
export const newSecret = (prefix: string, bytes = 32): string => `${prefix}_${crypto.randomBytes(bytes).toString("base64url")}`
