import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Option, Redacted, Scope } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"
import {
  EmbeddedDbError,
  embeddedOrRunning,
  embeddedUrl,
  findRunningEmbedded,
  INFO_FILE_NAME,
  startEmbeddedPostgres
} from "../../src/db/Embedded.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const tmpDirs: Array<string> = []
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true })
})

const freshDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "embedded-pg-"))
  tmpDirs.push(d)
  return d
}
const infoFile = (dir: string) => path.join(dir, INFO_FILE_NAME)
const readInfo = (dir: string) => JSON.parse(fs.readFileSync(infoFile(dir), "utf8")) as { port: number | null; pid: number; startedAt: string }

const withPg = <A, E>(url: string, maxConnections: number, eff: Effect.Effect<A, E, PgClient.PgClient>) =>
  eff.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections })))


const deadPid = (): number => {
  const r = spawnSync(process.execPath, ["-e", ""])
  if (r.pid === undefined) throw new Error("could not spawn")
  return r.pid
}

const refusedPort = () =>
  Effect.promise(
    () =>
      new Promise<number>((resolve) => {
        const srv = net.createServer()
        srv.listen(0, "127.0.0.1", () => {
          const port = (srv.address() as net.AddressInfo).port
          srv.close(() => resolve(port))
        })
      })
  )

type ChildLine =
  | { ok: true; url: string; port: number; pid: number }
  | { ok: false; reason: string; pid: number | null; message: string }

/** Spawns the fixture service process on `dir`; resolves with its first stdout line. */
const spawnService = (dir: string) =>
  Effect.promise(
    () =>
      new Promise<{ child: ChildProcess; line: ChildLine }>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "fixtures", "embedded-child.ts"), dir], {
          cwd: path.join(here, "..", ".."),
          stdio: ["ignore", "pipe", "pipe"]
        })
        children.push(child)
        let out = ""
        let err = ""
        child.stderr!.on("data", (d: Buffer) => (err += d.toString()))
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString()
          const nl = out.indexOf("\n")
          if (nl >= 0) resolve({ child, line: JSON.parse(out.slice(0, nl)) as ChildLine })
        })
        child.on("exit", (code) => {
          if (!out.includes("\n")) reject(new Error(`child exited ${code} without output: ${err.slice(-2000)}`))
        })
      })
  )

const killHard = (child: ChildProcess) =>
  Effect.promise(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGKILL")
      })
  )

describe("embedded Postgres (PGlite over PGLiteSocketServer)", () => {
  it.live("boots from an empty dir; PgClient with 4 connections creates, writes, reads and runs concurrent queries", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = freshDir()
        const { url, port } = yield* startEmbeddedPostgres(dir)
        expect(url).toBe(embeddedUrl(port))
        expect(url).toBe(`postgres://postgres@127.0.0.1:${port}/postgres`)
        expect(fs.existsSync(path.join(dir, "pgdata", "PG_VERSION"))).toBe(true)
        const info = readInfo(dir)
        expect(info).toEqual({ port, pid: process.pid, startedAt: expect.any(String) })
        expect(new Date(info.startedAt).toISOString()).toBe(info.startedAt)

        yield* withPg(
          url,
          4,
          Effect.gen(function* () {
            const sql = yield* PgClient.PgClient
            yield* sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`
            yield* sql`INSERT INTO items ${sql.insert([{ id: 1, name: "one" }, { id: 2, name: "two" }])}`
            const rows = yield* sql<{ id: number; name: string }>`SELECT id, name FROM items ORDER BY id`
            expect(rows).toEqual([{ id: 1, name: "one" }, { id: 2, name: "two" }])

            // 200 parameterised queries over the 4-connection pool, all in flight at once.
            const results = yield* Effect.forEach(
              Array.from({ length: 200 }, (_, i) => i),
              (i) => sql<{ n: number }>`SELECT ${i}::int AS n`.pipe(Effect.map((r) => r[0]!.n === i)),
              { concurrency: "unbounded" }
            )
            expect(results.every(Boolean)).toBe(true)

            // Transactions from several connections are serialised by the socket server but all commit.
            yield* Effect.forEach(
              [10, 11, 12, 13],
              (id) => sql.withTransaction(sql`INSERT INTO items ${sql.insert({ id, name: `tx${id}` })}`),
              { concurrency: 4 }
            )
            const [{ count }] = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM items`
            expect(count).toBe("6")
          })
        )
      })
    ), 60_000)

  it.live("while running: findRunningEmbedded returns the same url and a second PgClient (the CLI) reads the data; after close the file is gone and a restart sees the data", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const scope = yield* Scope.make()
      const { url, port } = yield* startEmbeddedPostgres(dir).pipe(Scope.extend(scope))

      // The service's client (kept open) and a second, independent client, as a CLI would use.
      yield* withPg(
        url,
        8,
        Effect.gen(function* () {
          const sql = yield* PgClient.PgClient
          yield* sql`CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)`
          yield* sql`INSERT INTO notes ${sql.insert({ id: 1, body: "persist me" })}`

          const found = yield* findRunningEmbedded(dir)
          expect(found).toEqual(Option.some({ url, port, pid: process.pid }))

          // embeddedOrRunning joins the running server instead of opening the dir again.
          const joined = yield* Effect.scoped(embeddedOrRunning(dir))
          expect(joined).toEqual({ url, port, pid: process.pid, attached: true })

          // The "CLI" client, while the service pool holds its connections busy.
          const [serviceRows, cliRows] = yield* Effect.all(
            [
              Effect.forEach([1, 2, 3, 4, 5, 6, 7, 8], () => sql`SELECT body FROM notes`, { concurrency: 8 }),
              withPg(
                Option.getOrThrow(found).url,
                2,
                Effect.flatMap(PgClient.PgClient, (cli) => cli<{ body: string }>`SELECT body FROM notes WHERE id = 1`)
              )
            ],
            { concurrency: 2 }
          )
          expect(serviceRows).toHaveLength(8)
          expect(cliRows).toEqual([{ body: "persist me" }])
        })
      )

      yield* Scope.close(scope, Exit.void)
      expect(fs.existsSync(infoFile(dir))).toBe(false)
      expect(yield* findRunningEmbedded(dir)).toEqual(Option.none())

      // Restart on the same dir: the data persisted.
      const rows = yield* Effect.scoped(
        Effect.flatMap(startEmbeddedPostgres(dir), ({ url }) =>
          withPg(url, 2, Effect.flatMap(PgClient.PgClient, (sql) => sql<{ body: string }>`SELECT body FROM notes`))
        )
      )
      expect(rows).toEqual([{ body: "persist me" }])
      expect(fs.existsSync(infoFile(dir))).toBe(false)
    }), 60_000)

  it.live("ignores stale info files: dead pid, our own pid (pid reuse), live pid with nothing on the port", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const stales = [
        { port: 5432, pid: deadPid(), startedAt: "2020-01-01T00:00:00.000Z" },
        { port: 5432, pid: 999999, startedAt: "2020-01-01T00:00:00.000Z" },
        { port: null, pid: deadPid(), startedAt: "2020-01-01T00:00:00.000Z" },
        { port: 5432, pid: process.pid, startedAt: "2020-01-01T00:00:00.000Z" },
        { port: yield* refusedPort(), pid: process.ppid, startedAt: "2020-01-01T00:00:00.000Z" }
      ]
      fs.mkdirSync(path.join(dir, "pgdata"), { recursive: true })
      for (const [i, stale] of stales.entries()) {
        fs.writeFileSync(infoFile(dir), JSON.stringify(stale))
        expect(yield* findRunningEmbedded(dir)).toEqual(Option.none())
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { url, port } = yield* startEmbeddedPostgres(dir, { maxConnections: 1 })
            expect(readInfo(dir)).toMatchObject({ port, pid: process.pid })
            const n = yield* withPg(
              url,
              1,
              Effect.gen(function* () {
                const sql = yield* PgClient.PgClient
                yield* sql`CREATE TABLE IF NOT EXISTS restarts (n int)`
                yield* sql`INSERT INTO restarts VALUES (${i})`
                return (yield* sql<{ c: number }>`SELECT count(*)::int AS c FROM restarts`)[0]!.c
              })
            )
            expect(n).toBe(i + 1)
          })
        )
        expect(fs.existsSync(infoFile(dir))).toBe(false)
      }
      // Garbage in the file (old and unparsable) is stale too.
      fs.writeFileSync(infoFile(dir), "{not json")
      const old = new Date(Date.now() - 60_000)
      fs.utimesSync(infoFile(dir), old, old)
      yield* Effect.scoped(startEmbeddedPostgres(dir))
    }), 90_000)

  it.live("a second start on the same dir while the first runs fails with EmbeddedDbError (same process)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = freshDir()
        const first = yield* startEmbeddedPostgres(dir)
        const second = yield* Effect.flip(Effect.scoped(startEmbeddedPostgres(dir)))
        expect(second).toBeInstanceOf(EmbeddedDbError)
        expect(second._tag).toBe("EmbeddedDbError")
        expect(second.reason).toBe("InUse")
        expect(second.pid).toBe(process.pid)
        expect(second.message).toContain(`is in use by pid ${process.pid}`)
        // The failed attempt did not disturb the running server or its info file.
        expect(readInfo(dir)).toMatchObject({ port: first.port, pid: process.pid })
        expect(yield* findRunningEmbedded(dir)).toEqual(Option.some({ ...first, pid: process.pid }))
      })
    ), 60_000)

  it.live("across processes: the CLI finds and uses a running service's server, cannot open the dir, and takes over after a kill -9", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const { child, line } = yield* spawnService(dir)
      if (!line.ok) throw new Error(`service failed: ${line.message}`)
      expect(line.pid).toBe(child.pid)

      const found = Option.getOrThrow(yield* findRunningEmbedded(dir))
      expect(found).toEqual({ url: line.url, port: line.port, pid: child.pid })
      yield* withPg(
        found.url,
        2,
        Effect.gen(function* () {
          const sql = yield* PgClient.PgClient
          yield* sql`CREATE TABLE t (v text)`
          yield* sql`INSERT INTO t VALUES ('from the cli')`
        })
      )

      const err = yield* Effect.flip(Effect.scoped(startEmbeddedPostgres(dir)))
      expect(err.reason).toBe("InUse")
      expect(err.pid).toBe(child.pid)
      expect(err.message).toContain(`is in use by pid ${child.pid}`)
      const joined = yield* Effect.scoped(embeddedOrRunning(dir))
      expect(joined).toEqual({ ...found, attached: true })

      // kill -9 leaves the info file (and PGlite's postmaster.pid) behind.
      yield* killHard(child)
      expect(readInfo(dir).pid).toBe(child.pid)
      expect(yield* findRunningEmbedded(dir)).toEqual(Option.none())
      const rows = yield* Effect.scoped(
        Effect.gen(function* () {
          const mine = yield* embeddedOrRunning(dir)
          expect(mine.attached).toBe(false)
          expect(mine.pid).toBe(process.pid)
          return yield* withPg(mine.url, 1, Effect.flatMap(PgClient.PgClient, (sql) => sql<{ v: string }>`SELECT v FROM t`))
        })
      )
      expect(rows).toEqual([{ v: "from the cli" }])
    }), 90_000)

  it.live("two processes racing to start on one empty dir: exactly one wins and the dir stays usable", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const [a, b] = yield* Effect.all([spawnService(dir), spawnService(dir)], { concurrency: 2 })
      const winners = [a, b].filter((r) => r.line.ok)
      const losers = [a, b].filter((r) => !r.line.ok)
      expect(winners).toHaveLength(1)
      expect(losers).toHaveLength(1)
      const loser = losers[0]!.line as Extract<ChildLine, { ok: false }>
      expect(loser.reason).toBe("InUse")
      expect(loser.pid).toBe(winners[0]!.child.pid)

      yield* killHard(winners[0]!.child)
      const v = yield* Effect.scoped(
        Effect.flatMap(startEmbeddedPostgres(dir), ({ url }) =>
          withPg(url, 1, Effect.flatMap(PgClient.PgClient, (sql) => sql<{ v: number }>`SELECT 41 + 1 AS v`))
        )
      )
      expect(v).toEqual([{ v: 42 }])
    }), 90_000)
})
