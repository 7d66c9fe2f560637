import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * No source file grows past 300 lines: a longer one does more than one thing and is split by what it does (issue 32).
 * This counts the lines of every non-test source file (src/, services/, streams/, migrations/, bin/; .ts, .tsx, .mjs)
 * as `wc -l` does, and fails listing each one over the limit with its count.
 */
const root = path.resolve(import.meta.dirname, "..")
const MAX_LINES = 300
const DIRS = ["src", "services", "streams", "migrations", "bin"]
const SOURCE = /\.(ts|tsx|mjs)$/
const TEST = /\.test\.(ts|tsx|mjs)$/

const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === "node_modules" ? [] : filesUnder(rel)
    return SOURCE.test(e.name) && !TEST.test(e.name) ? [rel] : []
  })

/** Lines as `wc -l` counts them: newline characters. */
const linesOf = (file: string) => {
  const text = fs.readFileSync(path.join(root, file), "utf8")
  let n = 0
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++
  return n
}

const sources = DIRS.flatMap((d) => (fs.existsSync(path.join(root, d)) ? filesUnder(d) : [])).sort()

describe("file sizes", () => {
  it(`every non-test source file is at most ${MAX_LINES} lines`, () => {
    const over = sources.map((f) => [f, linesOf(f)] as const).filter(([, n]) => n > MAX_LINES).map(([f, n]) => `${f}: ${n} lines`)
    expect(over).toEqual([])
  })

  it("the walk sees the source tree (it would pass vacuously otherwise)", () => {
    expect(sources.length).toBeGreaterThan(100)
    expect(sources).toContain(path.join("services", "deposits", "Reconciler.ts"))
    expect(sources).toContain(path.join("src", "dashboard", "ui.tsx"))
    expect(sources).toContain(path.join("bin", "collections.mjs"))
    expect(sources.some((f) => f.startsWith("test"))).toBe(false)
  })
})
