import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import { Effect } from "effect"
import { tempDir } from "./Processes.js"
import { waitFor } from "./Wait.js"

export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server"

/** Resolves once something accepts TCP connections on the port (bounded: 10 s). */
const listening = (port: number) =>
  waitFor(
    `nats-server to accept connections on ${port}`,
    Effect.async<void, Error>((resume) => {
      const s = net.connect(port, "127.0.0.1")
      s.once("connect", () => {
        s.destroy()
        resume(Effect.void)
      })
      s.once("error", (e) => resume(Effect.fail(e)))
    }).pipe(Effect.as(true)),
    { timeoutMs: 10_000, intervalMs: 50 }
  ).pipe(Effect.asVoid)

export interface OwnNatsServer {
  readonly port: number
  readonly url: string
  /** Starts the server (JetStream on, its store under storeDir); a no-op when it runs. */
  readonly start: Effect.Effect<void>
  /** Kills the server outright (SIGKILL: no goodbye to its clients), as a crash would. */
  readonly kill: Effect.Effect<void>
}

/**
 * A nats-server of the test's own on `port` (never the shared one on 4222, which other tests use): a test can stop
 * it and start it again at will. The store directory stays across restarts, so streams survive a restart as they
 * would in production. Killed when the scope closes.
 */
export const ownNatsServer = (port: number) =>
  Effect.gen(function* () {
    const storeDir = tempDir("nats-store-")
    let child: ChildProcess | undefined
    const kill = Effect.suspend(() => {
      const c = child
      child = undefined
      if (!c || c.exitCode !== null) return Effect.void
      return Effect.async<void>((resume) => {
        c.once("exit", () => resume(Effect.void))
        c.kill("SIGKILL")
      })
    })
    const start = Effect.suspend(() => {
      if (child) return Effect.void
      child = spawn(NATS_SERVER_BIN, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir], { stdio: "ignore" })
      return listening(port)
    })
    yield* Effect.addFinalizer(() => kill)
    return { port, url: `127.0.0.1:${port}`, start, kill } satisfies OwnNatsServer
  })
