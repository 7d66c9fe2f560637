import { Context, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const admin = async <A>(f: (c: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** A fresh database on the real Postgres for one test file, dropped when the scope closes. */
export const freshDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const name = `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`
    await admin((c) => c.query(`CREATE DATABASE ${name}`))
    const url = new URL(ADMIN_URL)
    url.pathname = `/${name}`
    return { name, url: Redacted.make(url.toString()) }
  }),
  ({ name }) =>
    Effect.promise(() =>
      admin(async (c) => {
        await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name])
        await c.query(`DROP DATABASE IF EXISTS ${name}`)
      }).catch(() => undefined)
    )
)

export class TestDatabaseUrl extends Context.Tag("test/TestDatabaseUrl")<TestDatabaseUrl, { readonly name: string; readonly url: Redacted.Redacted<string> }>() {}
export const TestDatabaseLive = Layer.scoped(TestDatabaseUrl, freshDatabase)
