import { Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfigTag } from "../../src/Config.js"

/**
 * Key material for tokens and for secrets at rest. Given in the environment for production; otherwise
 * generated once and kept under DATA_DIR (mode 0600) so the service and the CLI agree across restarts.
 */
export interface KeyMaterial {
  readonly tokenSigningKey: Uint8Array
  readonly encryptionKey: Buffer
}

const loadOrCreate = (dataDir: string, file: string): Buffer => {
  const full = path.join(dataDir, file)
  fs.mkdirSync(dataDir, { recursive: true })
  try {
    return Buffer.from(fs.readFileSync(full, "utf8").trim(), "base64url")
  } catch {
    const fresh = crypto.randomBytes(32)
    try {
      fs.writeFileSync(full, fresh.toString("base64url") + "\n", { mode: 0o600, flag: "wx" })
      return fresh
    } catch {
      // Another process created it between our read and write: use theirs.
      return Buffer.from(fs.readFileSync(full, "utf8").trim(), "base64url")
    }
  }
}

const decodeKey = (name: string, value: string): Buffer => {
  const key = Buffer.from(value.trim(), "base64url")
  if (key.length < 32) throw new Error(`${name} must be at least 32 bytes, base64url-encoded (got ${key.length} bytes)`)
  return key
}

export class Keys extends Effect.Service<Keys>()("services/Keys", {
  effect: Effect.gen(function* () {
    const config = yield* AppConfigTag
    return yield* Effect.try({
      try: (): KeyMaterial => ({
        tokenSigningKey: Option.match(config.tokenSigningKey, {
          onNone: () => loadOrCreate(config.dataDir, "token-signing.key"),
          onSome: (k) => decodeKey("TOKEN_SIGNING_KEY", Redacted.value(k))
        }),
        encryptionKey: Option.match(config.dataEncryptionKey, {
          onNone: () => loadOrCreate(config.dataDir, "data-encryption.key"),
          onSome: (k) => decodeKey("DATA_ENCRYPTION_KEY", Redacted.value(k))
        }).subarray(0, 32)
      }),
      catch: (e) => new Error(`Cannot load keys: ${e instanceof Error ? e.message : String(e)}`)
    }).pipe(Effect.orDie)
  })
}) {}

/** AES-256-GCM for secrets we must read back (provider webhook secrets, endpoint signing secrets). */
export class SecretBox extends Effect.Service<SecretBox>()("services/SecretBox", {
  effect: Effect.gen(function* () {
    const { encryptionKey } = yield* Keys
    const seal = (plain: string): string => {
      const iv = crypto.randomBytes(12)
      const cipher = crypto.createCipheriv("aes-256-gcm", encryptionKey, iv)
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".")
    }
    const open = (sealed: string): string => {
      const [v, iv, tag, body] = sealed.split(".")
      if (v !== "v1" || !iv || !tag || body === undefined) throw new Error("sealed secret has an unknown format")
      const decipher = crypto.createDecipheriv("aes-256-gcm", encryptionKey, Buffer.from(iv, "base64url"))
      decipher.setAuthTag(Buffer.from(tag, "base64url"))
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
    }
    return { seal, open } as const
  }),
  dependencies: [Keys.Default]
}) {}

export const KeysLayer = Layer.merge(Keys.Default, SecretBox.Default)
