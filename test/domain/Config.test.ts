import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { appConfig } from "../../src/Config.js"

const load = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("SERVICE_ROLE", () => {
  it("defaults to all, which runs anywhere, the embedded default included", () => {
    const c = load({})
    expect(Either.isRight(c) && c.right.role).toBe("all")
  })

  it("api and worker need DATABASE_URL and NATS_URL, and say so", () => {
    for (const role of ["api", "worker"]) {
      const alone = load({ SERVICE_ROLE: role })
      expect(Either.isLeft(alone) && String(alone.left)).toContain("SERVICE_ROLE=api or worker needs DATABASE_URL and NATS_URL")
      const noBus = load({ SERVICE_ROLE: role, DATABASE_URL: "postgres://db/x" })
      expect(Either.isLeft(noBus)).toBe(true)
      const both = load({ SERVICE_ROLE: role, DATABASE_URL: "postgres://db/x", NATS_URL: "127.0.0.1:4222" })
      expect(Either.isRight(both) && both.right.role).toBe(role)
    }
  })

  it("refuses anything else", () => {
    const bad = load({ SERVICE_ROLE: "reconciler", DATABASE_URL: "postgres://db/x", NATS_URL: "127.0.0.1:4222" })
    expect(Either.isLeft(bad) && String(bad.left)).toContain("SERVICE_ROLE")
  })
})

describe("DB_PREPARED_STATEMENTS and WORKER_THREAD", () => {
  const flags = [["DB_PREPARED_STATEMENTS", "dbPreparedStatements"], ["WORKER_THREAD", "workerThread"]] as const
  it("are on unless set to 0, and refuse anything but a 1 or 0 spelling", () => {
    for (const [name, field] of flags) {
      const on = load({})
      expect(Either.isRight(on) && on.right[field]).toBe(true)
      const off = load({ [name]: "0" })
      expect(Either.isRight(off) && off.right[field]).toBe(false)
      const bad = load({ [name]: "sometimes" })
      expect(Either.isLeft(bad) && String(bad.left)).toContain(`${name} must be 1 or 0`)
    }
  })
})
