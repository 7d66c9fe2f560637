/**
 * `npm start`: the service from one bundled file, built by esbuild on the first start after a change and kept under
 * node_modules/.cache/collections-service/ (docs/performance.md, "At rest and at start").
 *
 * Why: loading the service's ~1,400 modules one by one (through tsx's loader on the sources, or Node's on the
 * packages) took 3.5 s of a 5 s start; the bundle loads in about 0.6 s, so the service answers in about 2 s on
 * Postgres and NATS. A source file, migration or the lockfile newer than the bundle rebuilds it (about 2 s); two
 * processes starting at once each build and rename theirs into place, so neither reads half a file.
 *
 * Packages that load files next to themselves (PGlite's wasm, argon2's and msgpackr's native addons, esbuild) and
 * pg's optional native driver stay outside the bundle. Stack traces name the bundle's lines; its source map sits beside
 * it, so NODE_OPTIONS=--enable-source-maps maps them back (it costs about a second at start, so it is not the default).
 * `src/main.ts` under tsx (`node --import tsx src/main.ts`) runs the same service from the sources, as the tests do.
 *
 * Plain JavaScript on purpose: it runs before any TypeScript loader exists.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const OUT_DIR = path.join(ROOT, "node_modules", ".cache", "collections-service")
const BUNDLE = path.join(OUT_DIR, "service.mjs")
/** What the bundle is built from: a newer file in any of these rebuilds it. */
const SOURCES = ["src", "services", "streams", "migrations"]
const INPUT_FILES = ["package-lock.json", "tsconfig.json"]
/** Packages kept outside the bundle (see above). */
const EXTERNAL = ["@electric-sql/*", "@node-rs/*", "esbuild", "msgpackr", "msgpackr-extract", "pg-native"]

const level = (process.env.LOG_LEVEL ?? "info").trim().toLowerCase()
const quiet = ["warning", "warn", "error", "fatal", "none"].includes(level)
const json = (process.env.LOG_FORMAT ?? "").trim().toLowerCase() === "json"
/** One INFO line in the service's format (text, or JSON with LOG_FORMAT=json), unless LOG_LEVEL is above info. */
export const say = (message) => {
  if (quiet) return
  const timestamp = new Date().toISOString()
  process.stdout.write(json ? `${JSON.stringify({ message, logLevel: "INFO", timestamp, annotations: {}, spans: {}, fiberId: "#0" })}\n` : `timestamp=${timestamp} level=INFO fiber=#0 message="${message}"\n`)
}

/** The newest modification time (ms) of a source under `dir` (the dashboard's browser sources included: harmless). */
const newest = (dir) => {
  let latest = 0
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (/\.(ts|tsx|mts|mjs|js|json|sql)$/.test(entry.name)) latest = Math.max(latest, fs.statSync(full).mtimeMs)
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return latest
}

/** Whether the bundle is missing or older than a source it was built from. */
const stale = () => {
  let built
  try {
    built = fs.statSync(BUNDLE).mtimeMs
  } catch {
    return true
  }
  const inputs = [...SOURCES.map((s) => newest(path.join(ROOT, s))), ...INPUT_FILES.map((f) => (fs.existsSync(path.join(ROOT, f)) ? fs.statSync(path.join(ROOT, f)).mtimeMs : 0))]
  return inputs.some((t) => t > built)
}

/** Builds the bundle into a temporary file beside it, then renames it into place. */
const buildBundle = async () => {
  const esbuild = await import("esbuild")
  fs.mkdirSync(OUT_DIR, { recursive: true })
  const tmp = path.join(OUT_DIR, `service.${process.pid}.${Date.now()}.mjs`)
  try {
    await esbuild.build({
      entryPoints: [path.join(ROOT, "src", "Service.ts")],
      outfile: tmp,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      external: EXTERNAL,
      tsconfig: path.join(ROOT, "tsconfig.json"),
      sourcemap: "linked",
      // CommonJS packages inside an ES module bundle call require(): give them Node's, for this file.
      banner: { js: "import { createRequire as __collectionsRequire } from 'node:module'; const require = __collectionsRequire(import.meta.url);" },
      logLevel: "error"
    })
    fs.renameSync(`${tmp}.map`, `${BUNDLE}.map`)
    // The map's name inside the bundle is the temporary one: point it at the renamed map.
    const code = fs.readFileSync(tmp, "utf8").replace(/\/\/# sourceMappingURL=.*\n?$/, "//# sourceMappingURL=service.mjs.map\n")
    fs.writeFileSync(tmp, code)
    fs.renameSync(tmp, BUNDLE)
  } finally {
    fs.rmSync(tmp, { force: true })
    fs.rmSync(`${tmp}.map`, { force: true })
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `node src/start.mjs --build`: only bring the bundle up to date (the benches do it once before starting several
  // processes, so they do not all build at once).
  const buildOnly = process.argv.includes("--build")
  if (!buildOnly) say(`collections starting (pid ${process.pid}, node ${process.version})`)
  if (stale()) {
    const started = Date.now()
    say("building the service bundle (first start after a change)")
    await buildBundle()
    say(`built the service bundle in ${Date.now() - started} ms`)
  }
  if (!buildOnly) await import(pathToFileURL(BUNDLE).href)
}
