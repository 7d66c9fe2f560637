import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as zlib from "node:zlib"
import { chooseEncoding } from "../../src/http/ContentEncoding.js"
import { DASHBOARD_SRC, dashboardBundle } from "../../src/http/DashboardAssets.js"
import { dashboardHtml } from "../../src/http/DashboardPage.js"

/**
 * The dashboard's sources stay browser code: they import Preact, Effect, each other, the typed client
 * (`collections-service/client`, src/client: the API definition and HttpApiClient, no server code) and the contract
 * for its types, never a module that would pull server code or Node into the page. Every call goes through the typed
 * client: the hand-written fetch wrapper (src/dashboard/Api.ts) is gone. The service builds them into one script and
 * one stylesheet under content-hashed names, and the page names nothing else.
 */

const files = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? files(p) : /\.tsx?$/.test(e.name) ? [p] : []
  })

const IMPORT = /(?:^|\n)\s*(import|export)(\s+type)?\s[^"';]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g

describe("the dashboard bundle", () => {
  it("imports only Preact, Effect, itself, the typed client, and the contract's types", () => {
    const bad: Array<string> = []
    let seen = 0
    for (const f of files(DASHBOARD_SRC)) {
      for (const m of fs.readFileSync(f, "utf8").matchAll(IMPORT)) {
        const spec = (m[3] ?? m[4])!
        seen++
        const typeOnly = m[2] !== undefined
        const target = spec.startsWith(".") ? path.resolve(path.dirname(f), spec) : spec
        const client = path.resolve(DASHBOARD_SRC, "..", "client", "index.js")
        const ok = spec === "preact" || spec.startsWith("preact/") || spec === "effect" || target === client ||
          (spec.startsWith(".") && target.startsWith(DASHBOARD_SRC)) ||
          (typeOnly && spec.startsWith(".") && target.includes(`${path.sep}src${path.sep}contract${path.sep}`))
        if (!ok) bad.push(`${path.relative(DASHBOARD_SRC, f)} imports ${typeOnly ? "type " : ""}${spec}`)
      }
    }
    expect(bad).toEqual([])
    expect(seen).toBeGreaterThan(50)
  })

  it("calls the service only through the typed client: no fetch wrapper of its own", () => {
    expect(fs.existsSync(path.join(DASHBOARD_SRC, "Api.ts"))).toBe(false)
    const sources = files(DASHBOARD_SRC).map((f) => [path.relative(DASHBOARD_SRC, f), fs.readFileSync(f, "utf8")] as const)
    expect(sources.filter(([, t]) => /\bfetch\(|XMLHttpRequest/.test(t)).map(([f]) => f)).toEqual([])
    // Every page that calls the service does so with the client's operations (c.<group>.<endpoint>).
    const calling = sources.filter(([f, t]) => f.startsWith("pages") && /\b(dash|call)\(/.test(t))
    expect(calling.length).toBeGreaterThan(10)
    for (const [f, t] of calling) expect(t, f).toMatch(/\(c\) => c\.[a-zA-Z]+\.[a-zA-Z]+\(/)
    expect(sources.find(([f]) => f === "Client.ts")?.[1]).toMatch(/from "\.\.\/client\/index\.js"/)
  })

  it.effect("builds into one script and one stylesheet with content-hashed names, named by the page and nothing else", () =>
    Effect.gen(function* () {
      const b = yield* dashboardBundle
      expect(b.script.name).toMatch(/^app-[0-9a-f]{16}\.js$/)
      expect(b.style.name).toMatch(/^app-[0-9a-f]{16}\.css$/)
      expect(b.script.body.length).toBeGreaterThan(10_000)
      // Effect's runtime and Schema come with the typed client: 96 KB (29 KB gzipped) with the fetch wrapper, about
      // 700 KB (215 KB gzipped, 186 KB in brotli) with it.
      expect(b.script.body.length).toBeLessThan(800_000)
      // Built once per process: the same object on the next request.
      expect(yield* dashboardBundle).toBe(b)
      const html = dashboardHtml(b)
      const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
      expect(refs).toEqual(["data:,", `/dashboard/assets/${b.style.name}`, `/dashboard/assets/${b.script.name}`])
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/)
      expect(html).not.toMatch(/style=/)
      const js = new TextDecoder().decode(b.script.body)
      expect(js).not.toMatch(/node:|require\(/)
      // The typed client is in the bundle (its bearer tag's key survives minifying).
      expect(js).toContain("collections-service/client/Bearer")
    }))

  it.effect("keeps each file gzipped and in brotli, compressed once at build, each decompressing to the same bytes", () =>
    Effect.gen(function* () {
      const b = yield* dashboardBundle
      for (const a of [b.script, b.style]) {
        expect(Buffer.from(zlib.gunzipSync(a.encoded.gzip)).equals(Buffer.from(a.body)), a.name).toBe(true)
        expect(Buffer.from(zlib.brotliDecompressSync(a.encoded.br)).equals(Buffer.from(a.body)), a.name).toBe(true)
      }
      // About 700 KB as built, 215 KB gzipped, 186 KB in brotli (the sizes are printed for the record).
      expect(b.script.encoded.gzip.length).toBeLessThan(b.script.body.length / 3)
      expect(b.script.encoded.br.length).toBeLessThan(b.script.encoded.gzip.length)
      console.log(`dashboard script: ${b.script.body.length} bytes, gzip ${b.script.encoded.gzip.length}, brotli ${b.script.encoded.br.length}`)
      expect(yield* dashboardBundle).toBe(b)
    }))

  it("chooses the encoding the request accepts: brotli, then gzip, else as built", () => {
    expect(chooseEncoding(undefined)).toBe("identity")
    expect(chooseEncoding("")).toBe("identity")
    expect(chooseEncoding("identity")).toBe("identity")
    expect(chooseEncoding("gzip")).toBe("gzip")
    expect(chooseEncoding("x-gzip")).toBe("gzip")
    expect(chooseEncoding("gzip, deflate, br, zstd")).toBe("br")
    expect(chooseEncoding("gzip, deflate")).toBe("gzip")
    expect(chooseEncoding("br;q=0.5, gzip")).toBe("gzip")
    expect(chooseEncoding("GZIP;Q=1.0, BR;q=0")).toBe("gzip")
    expect(chooseEncoding("gzip;q=0, br;q=0")).toBe("identity")
    expect(chooseEncoding("*")).toBe("br")
    expect(chooseEncoding("*;q=0.2, br;q=0")).toBe("gzip")
    expect(chooseEncoding("deflate")).toBe("identity")
    expect(chooseEncoding("gzip;q=0.5, identity")).toBe("identity")
  })
})
