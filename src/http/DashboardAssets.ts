import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The dashboard's browser bundle (src/dashboard), built by the service itself with esbuild the first time it is
 * asked for, then kept in memory: no build step for a person, and no build artefact in the repository. File names
 * carry a hash of their content, so browsers may cache them for good. One build per process (and per test app's
 * process), shared by every request; a failed build is reported (and tried again on the next request).
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
  readonly body: Uint8Array
}
export interface DashboardBundle {
  readonly script: Asset
  readonly style: Asset
}

const hashed = (base: string, ext: string, contentType: string, body: Uint8Array): Asset => ({
  name: `${base}-${crypto.createHash("sha256").update(body).digest("hex").slice(0, 16)}.${ext}`,
  contentType,
  body
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
  return {
    script: hashed("app", "js", "text/javascript; charset=utf-8", js.contents),
    style: hashed("app", "css", "text/css; charset=utf-8", css.contents)
  }
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
