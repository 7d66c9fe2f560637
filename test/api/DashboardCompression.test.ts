import { expect, layer } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import * as http from "node:http"
import * as zlib from "node:zlib"
import { dashboardBundle } from "../../src/http/DashboardAssets.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * The dashboard's script and stylesheet over real HTTP, compressed once at build: gzip when the request asks for gzip,
 * brotli when it accepts brotli, as built when it asks for neither; `Vary: Accept-Encoding` on each, and a
 * Content-Length that is the bytes on the wire. Read with node:http, which does not decompress, so the test sees
 * exactly what was sent.
 */

interface Raw {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly bytes: Buffer
}

const get = (port: number, path: string, headers: Record<string, string>) =>
  Effect.async<Raw, Error>((resume) => {
    const req = http.get({ host: "127.0.0.1", port, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) })))
      res.on("error", (e) => resume(Effect.fail(e)))
    })
    req.on("error", (e) => resume(Effect.fail(e)))
  }).pipe(Effect.orDie)

const portOf = Effect.map(HttpServer.HttpServer, (s) => (s.address._tag === "TcpAddress" ? s.address.port : 0))

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("the dashboard's assets, compressed", (it) => {
  it.effect("gzip asked: gzip sent, decompressing to the built bytes; brotli accepted: brotli; neither: as built", () =>
    Effect.gen(function* () {
      const port = yield* portOf
      const page = yield* get(port, "/dashboard", {})
      expect(page.status).toBe(200)
      const b = yield* dashboardBundle
      const script = `/dashboard/assets/${b.script.name}`
      expect(page.bytes.toString("utf8")).toContain(script)

      for (const a of [b.script, b.style]) {
        const path = `/dashboard/assets/${a.name}`
        const built = Buffer.from(a.body)

        const gz = yield* get(port, path, { "accept-encoding": "gzip" })
        expect(gz.status).toBe(200)
        expect(gz.headers["content-encoding"]).toBe("gzip")
        expect(gz.headers["vary"]).toMatch(/Accept-Encoding/i)
        expect(gz.headers["content-type"]).toBe(a.contentType)
        expect(Number(gz.headers["content-length"])).toBe(gz.bytes.length)
        expect(gz.bytes.length).toBeLessThan(built.length)
        expect(zlib.gunzipSync(gz.bytes).equals(built)).toBe(true)

        // What a browser sends: brotli is preferred.
        const br = yield* get(port, path, { "accept-encoding": "gzip, deflate, br, zstd" })
        expect(br.headers["content-encoding"]).toBe("br")
        expect(Number(br.headers["content-length"])).toBe(br.bytes.length)
        expect(zlib.brotliDecompressSync(br.bytes).equals(built)).toBe(true)

        // Not asked (no header, or only what is not kept): the file as built, no Content-Encoding.
        for (const headers of [{}, { "accept-encoding": "identity" }, { "accept-encoding": "deflate" }, { "accept-encoding": "gzip;q=0" }]) {
          const plain = yield* get(port, path, headers)
          expect(plain.status).toBe(200)
          expect(plain.headers["content-encoding"], JSON.stringify(headers)).toBeUndefined()
          expect(plain.headers["vary"]).toMatch(/Accept-Encoding/i)
          expect(Number(plain.headers["content-length"])).toBe(built.length)
          expect(plain.bytes.equals(built)).toBe(true)
        }
      }
      console.log(`dashboard script over HTTP: identity ${b.script.body.length} B, gzip ${b.script.encoded.gzip.length} B, brotli ${b.script.encoded.br.length} B`)
    }))
})
