import { Context, Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { MigratorLive, pgClientLayer } from "../../src/db/Database.js"

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

/**
 * The migrated template of this set of migrations: `tpl_<hash of migrations/>`, made by the first test process that
 * needs it (migrated as a scratch database, then renamed; a process that loses that race drops its copy and uses the
 * winner's) and kept on the server for later runs. A changed migration gives a new name, so a template is never stale.
 * Nobody connects to it: `CREATE DATABASE … TEMPLATE` needs it idle.
 */
export const migratedTemplate = (): Promise<string> => (templateMade ??= makeTemplate().catch((e) => {
  templateMade = undefined
  throw e
}))
let templateMade: Promise<string> | undefined

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "migrations")

const migrationsHash = () => {
  const h = crypto.createHash("sha256")
  for (const f of fs.readdirSync(MIGRATIONS_DIR).sort()) h.update(f).update("\0").update(fs.readFileSync(path.join(MIGRATIONS_DIR, f))).update("\0")
  return h.digest("hex").slice(0, 16)
}

const makeTemplate = async () => {
  const name = `tpl_${migrationsHash()}`
  const exists = () => withAdmin((c) => c.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name])).then((r) => (r.rowCount ?? 0) > 0)
  if (await exists()) return name
  const scratch = await createScratchDatabase("tplnew")
  try {
    // Migrated, and its pool closed with the scope.
    await Effect.runPromise(Effect.scoped(Layer.build(MigratorLive.pipe(Layer.provide(pgClientLayer(Redacted.make(databaseUrl(scratch)), 2))))))
    await withAdmin(async (c) => {
      await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [scratch])
      await c.query(`ALTER DATABASE ${scratch} RENAME TO ${name}`)
    })
    return name
  } catch (e) {
    await dropScratchDatabase(scratch).catch(() => undefined)
    if (await exists()) return name // another process made it first
    throw e
  }
}

/** A new database `<prefix>_<time>_<random>` cloned from the migrated template (every migration applied); its name. */
export const createMigratedDatabase = async (prefix: string) => {
  const template = await migratedTemplate()
  const name = `${prefix}_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`
  await withAdmin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`))
  return name
}

/** Ends the database's sessions and drops it. */
export const dropScratchDatabase = (name: string) =>
  withAdmin(async (c) => {
    await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name])
    await c.query(`DROP DATABASE IF EXISTS ${name}`)
  })

/** A fresh (empty) database on the real Postgres for one test file, dropped when the scope closes. */
export const freshDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const name = await createScratchDatabase("t")
    return { name, url: Redacted.make(databaseUrl(name)) }
  }),
  ({ name }) => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined))
)

/**
 * As freshDatabase, but every migration already applied: a clone of the migrated template (a copy of a few megabytes
 * instead of twenty migrations per test file).
 */
export const freshMigratedDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const name = await createMigratedDatabase("t")
    return { name, url: Redacted.make(databaseUrl(name)) }
  }),
  ({ name }) => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined))
)

export class TestDatabaseUrl extends Context.Tag("test/TestDatabaseUrl")<TestDatabaseUrl, { readonly name: string; readonly url: Redacted.Redacted<string> }>() {}
export const TestDatabaseLive = Layer.scoped(TestDatabaseUrl, freshDatabase)
export const TestMigratedDatabaseLive = Layer.scoped(TestDatabaseUrl, freshMigratedDatabase)
