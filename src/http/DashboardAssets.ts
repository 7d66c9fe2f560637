import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as zlib from "node:zlib"
import type { StoredEncoding } from "./ContentEncoding.js"

/**
 * The dashboard's browser bundle (src/dashboard), built by the service itself with esbuild the first time it is
 * asked for, then kept in memory: no build step for a person, and no build artefact in the repository. File names
 * carry a hash of their content, so browsers may cache them for good. One build per process (and per test app's
 * process), shared by every request; a failed build is reported (and tried again on the next request). Each file is
 * compressed once with the build, gzip and brotli (the script is about 700 KB minified, mostly Effect's runtime: about
 * 215 KB gzipped, 186 KB in brotli), and served in what the request accepts (src/http/DashboardPage.ts).
 */

/**
 * src/dashboard: beside this module when it runs from the sources; from the service's bundle
 * (node_modules/.cache/collections-service, see src/start.mjs) it is found by walking up to the checkout.
 */
const dashboardSource = () => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const beside = path.resolve(here, "../dashboard")
  if (fs.existsSync(path.join(beside, "main.tsx"))) return beside
  for (let dir = here; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "src", "dashboard")
    if (fs.existsSync(path.join(candidate, "main.tsx"))) return candidate
  }
  return beside
}

export const DASHBOARD_SRC = dashboardSource()

export interface Asset {
  readonly name: string
  readonly contentType: string
  /** The file as built (identity). */
  readonly body: Uint8Array
  /** The same bytes compressed once, at build: gzip (level 9) and brotli (quality 10). */
  readonly encoded: Readonly<Record<StoredEncoding, Uint8Array>>
}
export interface DashboardBundle {
  readonly script: Asset
  readonly style: Asset
}

const gzip = promisify(zlib.gzip)
const brotli = promisify(zlib.brotliCompress)

/**
 * Compressed off the event loop (zlib's thread pool). Brotli at quality 10: about 0.7 s for the script on one core,
 * within 2% of quality 11's size at half its time; quality 9 would be 6% bigger.
 */
const compressed = async (body: Uint8Array): Promise<Asset["encoded"]> => {
  const [gz, br] = await Promise.all([
    gzip(body, { level: 9 }),
    brotli(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 10,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length
      }
    })
  ])
  return { gzip: new Uint8Array(gz), br: new Uint8Array(br) }
}

const hashed = async (base: string, ext: string, contentType: string, body: Uint8Array): Promise<Asset> => ({
  name: `${base}-${crypto.createHash("sha256").update(body).digest("hex").slice(0, 16)}.${ext}`,
  contentType,
  body,
  encoded: await compressed(body)
})

const build = async (): Promise<DashboardBundle> => {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: [path.join(DASHBOARD_SRC, "main.tsx"), path.join(DASHBOARD_SRC, "styles.css")],
    tsconfig: path.join(DASHBOARD_SRC, "tsconfig.json"),
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: ["es2020"],
    jsx: "automatic",
    jsxImportSource: "preact",
    write: false,
    outdir: "/dashboard-out",
    legalComments: "none",
    logLevel: "silent"
  })
  const js = result.outputFiles.find((f) => f.path.endsWith(".js"))
  const css = result.outputFiles.find((f) => f.path.endsWith(".css"))
  if (!js || !css) throw new Error("the dashboard build produced no script or no stylesheet")
  const [script, style] = await Promise.all([
    hashed("app", "js", "text/javascript; charset=utf-8", js.contents),
    hashed("app", "css", "text/css; charset=utf-8", css.contents)
  ])
  return { script, style }
}

let pending: Promise<DashboardBundle> | null = null

/** The bundle, built once per process on first use. */
export const dashboardBundle: Effect.Effect<DashboardBundle, Error> = Effect.tryPromise({
  try: () => {
    if (pending === null) {
      pending = build()
      pending.catch(() => {
        pending = null
      })
    }
    return pending
  },
  catch: (e) => (e instanceof Error ? e : new Error(String(e)))
})
