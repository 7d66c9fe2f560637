import * as crypto from "node:crypto"

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of
 * random bytes, and `webhook-signature` is `v1,` + base64 HMAC-SHA256, keyed with the decoded bytes,
 * of `${webhook-id}.${webhook-timestamp}.${body}`.
 */

const SECRET_PREFIX = "whsec_"
/** Standard Webhooks asks for 24 to 64 bytes; 32 matches the HMAC-SHA256 block strength. */
const SECRET_BYTES = 32

/** A fresh endpoint signing secret: shown to the tenant once, then only ever stored sealed. */
export const newSigningSecret = (): string => `${SECRET_PREFIX}${crypto.randomBytes(SECRET_BYTES).toString("base64")}`

const keyOf = (secret: string): Buffer => {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("signing secret has an unknown format")
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64")
  if (key.length < 24) throw new Error("signing secret is too short")
  return key
}

export interface SignedHeaders {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/** The three Standard Webhooks headers for one attempt. `timestampSeconds` is unix seconds. */
export const signedHeaders = (secret: string, id: string, timestampSeconds: number, body: string): SignedHeaders => {
  const timestamp = String(Math.floor(timestampSeconds))
  const mac = crypto.createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64")
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${mac}` }
}
