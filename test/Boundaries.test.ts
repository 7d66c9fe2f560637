import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { BUILT_IN, CAPABILITIES } from "../services/Capabilities.js"
import type { Capability } from "../services/Capability.js"
import { EDGE_PROBLEMS, PROBLEM_CODES } from "../src/contract/Problems.js"

/**
 * Dependencies point one way: the HTTP edge (src/http) may use services, the contract and the domain; services and
 * streams never use the HTTP edge; streams/ (transport and ports) never uses services/; the contract (wire schemas,
 * problem classes, the event catalogue) uses only the domain; the pure domain uses nothing of ours outside itself; and
 * a capability reaches another only through its services or an event, never through its store. This reads every import
 * of those folders and fails on one that points back. The capabilities' manifests are checked against the folders.
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

/** A capability's insides another capability must not reach: its SQL, its row mappers, its manifest and docs. */
const INTERNAL = /(Store|Rows|Capability|Docs|Examples)\.(js|ts)$/

/** `services/<a>/... imports services/<b>/<Module>` for every import from one capability folder into another's insides. */
const crossCapabilityReaches = () =>
  filesUnder("services").flatMap((f) => {
    const from = f.split(path.sep)[1]!
    if (!fs.statSync(path.join(root, "services", from)).isDirectory()) return []
    return importsOf(f)
      .filter((s) => s.startsWith("services/") && s.split("/").length === 3 && s.split("/")[1] !== from && INTERNAL.test(s))
      .map((s) => `${f} imports ${s}`)
  })

/**
 * The reaches that stay, each because it writes inside the caller's own transaction (one transaction per business
 * step), or maps rows the caller's own query read. Moving them behind the owner's service would split a transaction
 * or read the same rows twice.
 */
const SAME_TRANSACTION = new Set<string>([
  // Automation's hold action places the hold inside the actor's own transaction (exactly once per fired rule).
  "services/automation/Actor.ts imports services/transfers/HoldStore.js",
  // The copilot maps the transaction rows its own read selected to the wire shape deposits answer.
  "services/copilot/CopilotReads.ts imports services/deposits/DepositRows.js",
  // A review's approve or reject moves the deposit's hold and its refund transfer inside the review's transaction.
  "services/deposits/Reviews.ts imports services/transfers/HoldStore.js",
  "services/deposits/Reviews.ts imports services/transfers/TransferStore.js",
  // The insights roll-ups read a schedule's periods with billing's row mapper inside the roll-up's transaction.
  "services/insights/Rollups.ts imports services/billing/BillingRows.js",
  // A settlement claims its payout transfers in the same transaction as its allocation journal.
  "services/settlement/SettlementClaims.ts imports services/transfers/TransferStore.js",
  "services/settlement/Settlements.ts imports services/transfers/TransferStore.js",
  // A settlement transfer's outcome updates its settlement row in the outcome's transaction (with the ledger).
  "services/transfers/Outcomes.ts imports services/settlement/SettlementStore.js"
])

describe("module boundaries", () => {
  it("src/domain imports nothing of ours outside itself, and no framework beyond effect", () => {
    expect(violations("src/domain", (s) => s.startsWith("src/domain/") || s === "effect" || s.startsWith("node:"))).toEqual([])
  })

  it("src/contract imports only the domain, itself, effect and @effect/platform", () => {
    expect(violations("src/contract", (s) =>
      s.startsWith("src/domain/") || s.startsWith("src/contract/") || s === "effect" || s === "@effect/platform"
    )).toEqual([])
  })

  it("the typed client and the API definition import no server code (they are bundled for the browser)", () => {
    const definition = (s: string) =>
      s.startsWith("src/domain/") || s.startsWith("src/contract/") || s.startsWith("src/http/groups/") || s.startsWith("src/client/") ||
      s === "src/http/Api.js" || s === "src/http/Security.js" || s === "effect" || s === "@effect/platform"
    const files = ["src/http/Api.ts", "src/http/Security.ts", ...filesUnder("src/http/groups"), ...filesUnder("src/client")]
    expect(files.flatMap((f) => importsOf(f).filter((s) => !definition(s)).map((s) => `${f} imports ${s}`))).toEqual([])
    // The domain modules they reach stay off Node (src/domain may use node: elsewhere, e.g. ids).
    const reached = new Set(files.flatMap(importsOf).filter((s) => s.startsWith("src/domain/") || s.startsWith("src/contract/")))
    const closure = [...reached].flatMap((s) => importsOf(s.replace(/\.js$/, ".ts"))).filter((s) => s.startsWith("node:"))
    expect(closure).toEqual([])
  })

  it("services/ and streams/ never import the HTTP edge", () => {
    const notHttp = (s: string) => !s.startsWith("src/http/")
    expect([...violations("services", notHttp), ...violations("streams", notHttp)]).toEqual([])
  })

  it("streams/ is transport and ports only: it imports nothing from services/", () => {
    expect(violations("streams", (s) => !s.startsWith("services/"))).toEqual([])
  })

  it("a capability reaches another only through its services or an event, not its store, row mappers or manifest", () => {
    expect(crossCapabilityReaches().filter((r) => !SAME_TRANSACTION.has(r))).toEqual([])
    // Each exception is still needed (an exception that no longer happens is removed from the list).
    expect([...SAME_TRANSACTION].filter((r) => !crossCapabilityReaches().includes(r))).toEqual([])
  })

  it("every folder under services/ is a capability in CAPABILITIES, with its manifest named for it", () => {
    const folders = fs.readdirSync(path.join(root, "services"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)
    expect(CAPABILITIES.map((c) => c.name).sort()).toEqual([...folders].sort())
    for (const c of CAPABILITIES) {
      const word = c.name[0]!.toUpperCase() + c.name.slice(1)
      expect(fs.existsSync(path.join(root, "services", c.name, `${word}Capability.ts`)), `services/${c.name}/${word}Capability.ts`).toBe(true)
    }
  })

  it("every problem code belongs to the edge or to exactly one capability's manifest, with the same status", () => {
    const owned: Array<[string, number]> = [
      ...Object.entries(EDGE_PROBLEMS),
      ...CAPABILITIES.flatMap((c: Capability) => Object.entries(c.problems ?? {}))
    ]
    expect(owned.map(([code]) => code).sort()).toEqual(Object.keys(PROBLEM_CODES).sort())
    for (const [code, status] of owned) expect(PROBLEM_CODES[code as keyof typeof PROBLEM_CODES], code).toBe(status)
  })

  it("the outbox's consumers are the manifests' consumers, each name once", () => {
    expect(BUILT_IN.map((c) => c.name)).toEqual(CAPABILITIES.flatMap((c: Capability) => (c.consumers ?? []).map((s) => s.name)))
    expect(new Set(BUILT_IN.map((c) => c.name)).size).toBe(BUILT_IN.length)
    expect(BUILT_IN.map((c) => c.name)).toEqual(expect.arrayContaining(["relay", "webhooks", "automation", "insights", "billing"]))
  })

  it("the reader sees imports (it would pass vacuously otherwise)", () => {
    const seen = importsOf("src/http/Server.ts")
    expect(seen).toContain("src/http/Api.js")
    expect(seen.filter(isPackage)).toContain("@effect/platform")
  })
})
