import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Dependencies point one way: the HTTP edge (src/http) may use services, the contract and the domain; services and
 * streams never use the HTTP edge; the contract (wire schemas, problem classes) uses only the domain; the pure domain
 * uses nothing of ours outside itself. This reads every import of those folders and fails on one that points back.
 */
const root = path.resolve(import.meta.dirname, "..")

const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name)
    return e.isDirectory() ? filesUnder(rel) : e.name.endsWith(".ts") ? [rel] : []
  })

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^"';]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g

/** Every module a file imports: our own as paths from the repository root, packages as their names. */
const importsOf = (file: string): Array<string> => {
  const text = fs.readFileSync(path.join(root, file), "utf8")
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = (m[1] ?? m[2])!
    return spec.startsWith(".") ? path.relative(root, path.resolve(path.dirname(path.join(root, file)), spec)) : spec
  })
}

const violations = (dir: string, allowed: (spec: string) => boolean) =>
  filesUnder(dir).flatMap((f) => importsOf(f).filter((s) => !allowed(s)).map((s) => `${f} imports ${s}`))

const ours = (spec: string) => !/^[a-z@]/.test(spec) || spec.startsWith("src/")
const isPackage = (spec: string) => !ours(spec)

describe("module boundaries", () => {
  it("src/domain imports nothing of ours outside itself, and no framework beyond effect", () => {
    expect(violations("src/domain", (s) => s.startsWith("src/domain/") || s === "effect" || s.startsWith("node:"))).toEqual([])
  })

  it("src/contract imports only the domain, itself, effect and @effect/platform", () => {
    expect(violations("src/contract", (s) =>
      s.startsWith("src/domain/") || s.startsWith("src/contract/") || s === "effect" || s === "@effect/platform"
    )).toEqual([])
  })

  it("services/ and streams/ never import the HTTP edge", () => {
    const notHttp = (s: string) => !s.startsWith("src/http/")
    expect([...violations("services", notHttp), ...violations("streams", notHttp)]).toEqual([])
  })

  it("the reader sees imports (it would pass vacuously otherwise)", () => {
    const seen = importsOf("src/http/Server.ts")
    expect(seen).toContain("src/http/Api.js")
    expect(seen.filter(isPackage)).toContain("@effect/platform")
  })
})
