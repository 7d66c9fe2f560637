/**
 * The embedded database's lock: `${DATA_DIR}/embedded-postgres.json`, both the lock on the data directory and the
 * address of the server that holds it (see Embedded.ts for the protocol and why PGlite needs one).
 */
import { Data, Duration, Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

export const INFO_FILE_NAME = "embedded-postgres.json"
export const PGDATA_DIR_NAME = "pgdata"
/** Default client pool size the socket server is sized for. */
export const DEFAULT_POOL_SIZE = 8
/** Extra socket slots beyond the pool: the operator CLI, liveness probes, a LISTEN connection. */
export const CONNECTION_SLACK = 4

export type EmbeddedDbErrorReason =
  /** Another live process (or this one) has the data directory open. */
  | "InUse"
  /** PGlite or the socket server failed to start. */
  | "StartFailed"
  /** The data directory or the info file could not be read or written. */
  | "Io"

export class EmbeddedDbError extends Data.TaggedError("EmbeddedDbError")<{
  readonly reason: EmbeddedDbErrorReason
  readonly message: string
  readonly dataDir: string
  /** For "InUse": the process that holds the data directory. */
  readonly pid?: number
  readonly cause?: unknown
}> {}

/** The info file: the lock on the data directory and the address of the server that holds it. */
export interface EmbeddedInfo {
  /** null while the server is starting. */
  readonly port: number | null
  readonly pid: number
  readonly startedAt: string
}

type InfoRead =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Invalid"; readonly raw: string; readonly ageMs: number }
  | { readonly _tag: "Valid"; readonly raw: string; readonly info: EmbeddedInfo }

export const infoPath = (dir: string) => path.join(dir, INFO_FILE_NAME)

/** Data directories (realpath) this process has open; guards same-process double starts and own-pid stale files. */
export const openedHere = new Set<string>()

const errnoCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

const parseInfo = (raw: string): EmbeddedInfo | undefined => {
  try {
    const v: unknown = JSON.parse(raw)
    if (typeof v !== "object" || v === null) return undefined
    const { port, pid, startedAt } = v as Record<string, unknown>
    const portOk = port === null || (typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65536)
    const pidOk = typeof pid === "number" && Number.isInteger(pid) && pid > 0
    if (!portOk || !pidOk || typeof startedAt !== "string") return undefined
    return { port: port as number | null, pid, startedAt }
  } catch {
    return undefined
  }
}

/** Throws on I/O errors other than "missing". */
export const readInfoSync = (file: string): InfoRead => {
  let raw: string
  let mtimeMs: number
  try {
    raw = fs.readFileSync(file, "utf8")
    mtimeMs = fs.statSync(file).mtimeMs
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return { _tag: "Missing" }
    throw e
  }
  const info = parseInfo(raw)
  return info === undefined ? { _tag: "Invalid", raw, ageMs: Date.now() - mtimeMs } : { _tag: "Valid", raw, info }
}

const tmpName = (file: string) => `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`

/** Creates `file` with `content` only if it does not exist. false: it exists. */
const createExclusiveSync = (file: string, content: string): boolean => {
  const tmp = tmpName(file)
  fs.writeFileSync(tmp, content, { mode: 0o644 })
  try {
    fs.linkSync(tmp, file) // atomic and exclusive, and the file is complete when it appears
    return true
  } catch (e) {
    const code = errnoCode(e)
    if (code === "EEXIST") return false
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS") {
      // Filesystem without hard links: exclusive create (readers may briefly see an empty file; see assess()).
      try {
        fs.writeFileSync(file, content, { flag: "wx", mode: 0o644 })
        return true
      } catch (e2) {
        if (errnoCode(e2) === "EEXIST") return false
        throw e2
      }
    }
    throw e
  } finally {
    fs.rmSync(tmp, { force: true })
  }
}

export const replaceAtomicSync = (file: string, content: string) => {
  const tmp = tmpName(file)
  try {
    fs.writeFileSync(tmp, content, { mode: 0o644 })
    fs.renameSync(tmp, file)
  } finally {
    fs.rmSync(tmp, { force: true })
  }
}

// ---------------------------------------------------------------------------------------------
// Liveness

export const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errnoCode(e) === "EPERM" // exists, owned by someone else
  }
}

type Probe = "connected" | "refused" | "timeout" | "error"

/** A TCP connect to 127.0.0.1:port, closed at once. */
export const probeTcp = (port: number, timeout: Duration.DurationInput = "1 second"): Effect.Effect<Probe> =>
  Effect.async<Probe>((resume) => {
    let settled = false
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.on("error", () => {}) // late errors after we settled must not become uncaught
    const settle = (r: Probe) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(r))
    }
    const timer = setTimeout(() => settle("timeout"), Duration.toMillis(timeout))
    socket.once("connect", () => settle("connected"))
    socket.once("error", (e) => settle(errnoCode(e) === "ECONNREFUSED" ? "refused" : "error"))
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      socket.destroy()
    })
  })

export const realDir = (dataDir: string): string => {
  try {
    return fs.realpathSync(dataDir)
  } catch {
    return path.resolve(dataDir)
  }
}

type Verdict = { readonly _tag: "Live"; readonly why: string } | { readonly _tag: "Stale" }

/** Is the process named in an existing info file still serving this data directory? */
const assess = (dir: string, read: Exclude<InfoRead, { _tag: "Missing" }>): Effect.Effect<Verdict> => {
  if (read._tag === "Invalid") {
    // Either a writer between exclusive create and write (no-hard-link fallback) or debris.
    return Effect.succeed(
      read.ageMs < 10_000 ? { _tag: "Live", why: "its lock file is being written" } : { _tag: "Stale" }
    )
  }
  const { info } = read
  // Our own pid but not opened here (claim() checked openedHere): left by an earlier process that had our pid.
  if (info.pid === process.pid && !openedHere.has(dir)) return Effect.succeed({ _tag: "Stale" })
  if (!pidAlive(info.pid)) return Effect.succeed({ _tag: "Stale" })
  if (info.port === null) return Effect.succeed({ _tag: "Live", why: "it is starting its embedded Postgres" })
  return probeTcp(info.port).pipe(
    Effect.map((p): Verdict =>
      // refused: the pid was reused by some other program. timeout/error: be conservative.
      p === "refused" ? { _tag: "Stale" } : { _tag: "Live", why: `it serves the embedded Postgres on 127.0.0.1:${info.port}` }
    )
  )
}

export const ioError = (dataDir: string, what: string) => (cause: unknown) =>
  new EmbeddedDbError({
    reason: "Io",
    dataDir,
    message: `Embedded Postgres: ${what} (${cause instanceof Error ? cause.message : String(cause)})`,
    cause
  })

// ---------------------------------------------------------------------------------------------
// Claim / release

interface Claim {
  readonly dir: string
  readonly file: string
  readonly info: EmbeddedInfo
}

export const claim = (dataDir: string, dir: string): Effect.Effect<Claim, EmbeddedDbError> =>
  Effect.gen(function* () {
    const file = infoPath(dir)
    for (let attempt = 0; attempt < 5; attempt++) {
      const info: EmbeddedInfo = { port: null, pid: process.pid, startedAt: new Date().toISOString() }
      // Synchronous from the openedHere check to openedHere.add: no same-process interleaving.
      const outcome = yield* Effect.try({
        try: (): { _tag: "Claimed" } | { _tag: "OpenedHere" } | { _tag: "Taken"; read: InfoRead } => {
          if (openedHere.has(dir)) return { _tag: "OpenedHere" }
          if (createExclusiveSync(file, JSON.stringify(info) + "\n")) {
            openedHere.add(dir)
            return { _tag: "Claimed" }
          }
          return { _tag: "Taken", read: readInfoSync(file) }
        },
        catch: ioError(dataDir, `cannot create ${file}`)
      })
      if (outcome._tag === "Claimed") return { dir, file, info }
      if (outcome._tag === "OpenedHere") {
        return yield* new EmbeddedDbError({
          reason: "InUse",
          dataDir,
          pid: process.pid,
          message: `DATA_DIR ${dir} is in use by pid ${process.pid} (this process already runs an embedded Postgres on it)`
        })
      }
      const read = outcome.read
      if (read._tag === "Missing") continue // released between our create and read
      const verdict = yield* assess(dir, read)
      if (verdict._tag === "Live") {
        const pid = read._tag === "Valid" ? read.info.pid : undefined
        return yield* new EmbeddedDbError({
          reason: "InUse",
          dataDir,
          ...(pid === undefined ? {} : { pid }),
          message:
            `DATA_DIR ${dir} is in use by ${pid === undefined ? "another process" : `pid ${pid}`} (${verdict.why}). ` +
            `PGlite is single-process: stop that process, or connect to its server instead of opening the directory. ` +
            `If you are sure no process uses it, delete ${file}.`
        })
      }
      // Stale: remove it unless it changed since we read it (someone else may have taken over).
      yield* Effect.try({
        try: () => {
          const again = readInfoSync(file)
          if (again._tag !== "Missing" && again.raw === read.raw) fs.rmSync(file, { force: true })
        },
        catch: ioError(dataDir, `cannot remove the stale ${file}`)
      })
      yield* Effect.logInfo(
        `Embedded Postgres: removed a stale ${INFO_FILE_NAME}` +
          (read._tag === "Valid" ? ` (pid ${read.info.pid}, started ${read.info.startedAt})` : " (unreadable)")
      )
    }
    return yield* new EmbeddedDbError({
      reason: "InUse",
      dataDir,
      message: `DATA_DIR ${dir}: could not take ${file}; other processes keep creating it`
    })
  })

export const release = (c: Claim): Effect.Effect<void> =>
  Effect.sync(() => {
    try {
      const read = readInfoSync(c.file)
      if (read._tag === "Valid" && read.info.pid === c.info.pid && read.info.startedAt === c.info.startedAt) {
        fs.rmSync(c.file, { force: true })
      }
    } finally {
      openedHere.delete(c.dir)
    }
  }).pipe(Effect.catchAllDefect((d) => Effect.logWarning(`Embedded Postgres: cannot remove ${c.file}`, d)))

// ---------------------------------------------------------------------------------------------
