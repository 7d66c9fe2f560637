import * as crypto from "node:crypto"
import { Effect } from "effect"
import { Keys } from "../access/Keys.js"

const PREFIX = "le_"

/**
 * A ledger entry's public id (`le_` + 22 characters), and back. The row id is a bigserial shared by every tenant, so
 * showing it would tell any tenant how many entries the whole service writes. Instead the id is one AES-256 block
 * (the row id and eight zero bytes) under a key derived from DATA_ENCRYPTION_KEY: a keyed permutation, so distinct rows
 * get distinct ids, nothing about the number leaks, and a made-up id fails the zero check (1 in 2^64 passes, and then
 * names a row of no use to it: the lookup is scoped by tenant and mode).
 */
export const makeEntryIds = Effect.gen(function* () {
  const { encryptionKey } = yield* Keys
  const key = crypto.createHmac("sha256", encryptionKey).update("collections/ledger-entry-id/v1").digest()
  const publicId = (rowId: number | string): string => {
    const block = Buffer.alloc(16)
    block.writeBigUInt64BE(BigInt(rowId), 0)
    const cipher = crypto.createCipheriv("aes-256-ecb", key, null).setAutoPadding(false)
    return PREFIX + Buffer.concat([cipher.update(block), cipher.final()]).toString("base64url")
  }
  /** The row id of a public id; undefined for anything that is not one of ours. */
  const rowId = (id: string): string | undefined => {
    if (!id.startsWith(PREFIX)) return undefined
    const body = Buffer.from(id.slice(PREFIX.length), "base64url")
    if (body.length !== 16 || body.toString("base64url") !== id.slice(PREFIX.length)) return undefined
    const decipher = crypto.createDecipheriv("aes-256-ecb", key, null).setAutoPadding(false)
    const block = Buffer.concat([decipher.update(body), decipher.final()])
    return block.readBigUInt64BE(8) === 0n ? block.readBigUInt64BE(0).toString() : undefined
  }
  return { publicId, rowId } as const
})
