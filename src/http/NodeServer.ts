import { HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, type Scope } from "effect"
import * as http from "node:http"

/** Handles a request outright and returns true, or returns false to leave it to the HttpApi app. */
export type FastPath = (req: http.IncomingMessage, res: http.ServerResponse) => boolean

/**
 * A Node server whose requests first pass the installed fast paths. The HttpApi app serves everything; a fast path
 * takes a hot route whose whole cost is the per-request work (the bank provider's deposit webhooks) and skips the
 * router, schema and middleware layers for it. Everything it answers, it answers as the app would.
 */
class FastPathServer extends http.Server {
  readonly fastPaths: Array<FastPath> = []
  override emit(event: string | symbol, ...args: Array<any>): boolean {
    if (event === "request") {
      for (const fast of this.fastPaths) if (fast(args[0], args[1])) return true
    }
    return super.emit(event as string, ...args)
  }
}

export class FastPaths extends Context.Tag("src/http/FastPaths")<FastPaths, {
  /** Installs a fast path for the scope's lifetime. */
  readonly install: (fast: FastPath) => Effect.Effect<void, never, Scope.Scope>
}>() {}

const make = () => {
  const server = new FastPathServer()
  const fastPaths = FastPaths.of({
    install: (fast) =>
      Effect.acquireRelease(
        Effect.sync(() => void server.fastPaths.push(fast)),
        () => Effect.sync(() => void server.fastPaths.splice(server.fastPaths.indexOf(fast), 1))
      )
  })
  return { server, fastPaths }
}

/** The HTTP server on a port, with its fast paths. */
export const NodeServerLive = (options: { readonly port: number; readonly host: string }) =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const { server, fastPaths } = make()
      return Layer.merge(NodeHttpServer.layer(() => server, options), Layer.succeed(FastPaths, fastPaths))
    })
  )

/** As NodeServerLive on a random loopback port, with an HttpClient aimed at it (NodeHttpServer.layerTest's recipe). */
export const NodeServerTest = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerWithoutAgent),
  Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
  Layer.provideMerge(NodeServerLive({ port: 0, host: "127.0.0.1" }))
)
