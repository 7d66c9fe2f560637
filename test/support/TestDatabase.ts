import { Context, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** One short-lived client on `url` for `f`. */
export const withClient = async <A>(url: string, f: (c: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** One short-lived client on the server's admin database. */
export const withAdmin = <A>(f: (c: pg.Client) => Promise<A>): Promise<A> => withClient(ADMIN_URL, f)

/** The URL of database `name` on the admin URL's server. */
export const databaseUrl = (name: string) => {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/** Creates a scratch database named `<prefix>_<time>_<random>` and returns its name. */
export const createScratchDatabase = async (prefix: string) => {
  const name = `${prefix}_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`))
  return name
}

/** Ends the database's sessions and drops it. */
export const dropScratchDatabase = (name: string) =>
  withAdmin(async (c) => {
    await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name])
    await c.query(`DROP DATABASE IF EXISTS ${name}`)
  })

/** A fresh database on the real Postgres for one test file, dropped when the scope closes. */
export const freshDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const name = await createScratchDatabase("t")
    return { name, url: Redacted.make(databaseUrl(name)) }
  }),
  ({ name }) => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined))
)

export class TestDatabaseUrl extends Context.Tag("test/TestDatabaseUrl")<TestDatabaseUrl, { readonly name: string; readonly url: Redacted.Redacted<string> }>() {}
export const TestDatabaseLive = Layer.scoped(TestDatabaseUrl, freshDatabase)
