import { hash, verify } from "@node-rs/argon2"
import { Effect } from "effect"

/** Argon2id (OWASP's first choice) through @node-rs/argon2, for passwords and API client secrets. */
export const hashSecret = (plain: string) => Effect.promise(() => hash(plain))

export const verifySecret = (hashed: string, plain: string) =>
  Effect.promise(() => verify(hashed, plain).catch(() => false))
