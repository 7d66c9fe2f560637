import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { matches, projectFiles, SYSTEM, testFiles, UNIT } from "../vitest.config.js"

/**
 * The three vitest projects (vitest.config.ts): each test file is in exactly one, every listed entry still names a
 * file, and the lists agree with what the files import: a file that spawns a process, drives a browser or is a bench
 * is in system; a unit file reaches no database, NATS or process; an integration file does reach Postgres or NATS.
 */
const root = path.resolve(import.meta.dirname, "..")
/** A file's import statements, together. */
const text = (file: string) => [...fs.readFileSync(path.join(root, file), "utf8").matchAll(/^import\s[^;]*?from\s+"[^"]+"/gm)].map((m) => m[0]).join("\n")

/** Spawns processes (directly or through the support modules that do), stops a service mid-step, or drives a browser. */
const SYSTEM_MARK = /node:child_process|\bstartService\b|\brunCli\b|support\/(Crash|CliRuns|NatsServer|Browser)\.js|playwright-core/
/** Reaches the real Postgres or NATS. */
const BACKEND_MARK = /support\/(TestApp|TestDatabase|Pipeline|Resilience|Webhooks)\.js|streams\/(Nats|JetStream)\.js|@effect\/sql-pg|from "pg"/

describe("the vitest projects", () => {
  const all = testFiles()
  const { unit, integration, system } = projectFiles()

  it("put every test file in exactly one project", () => {
    expect(all.length).toBeGreaterThan(0)
    expect([...unit, ...integration, ...system].sort()).toEqual(all)
    expect(unit.filter((f) => integration.includes(f) || system.includes(f))).toEqual([])
    expect(integration.filter((f) => system.includes(f))).toEqual([])
  })

  it("list nothing twice and nothing that is gone", () => {
    expect(UNIT.filter((e) => SYSTEM.includes(e))).toEqual([])
    expect(all.filter((f) => UNIT.some((e) => matches(e, f)) && SYSTEM.some((e) => matches(e, f)))).toEqual([])
    expect([...UNIT, ...SYSTEM].filter((e) => !all.some((f) => matches(e, f)))).toEqual([])
  })

  it("agree with the files' imports", () => {
    expect(all.filter((f) => (SYSTEM_MARK.test(text(f)) || f.startsWith("test/bench/")) && !system.includes(f))).toEqual([])
    expect(unit.filter((f) => BACKEND_MARK.test(text(f)) || SYSTEM_MARK.test(text(f)))).toEqual([])
    expect(integration.filter((f) => !BACKEND_MARK.test(text(f)))).toEqual([])
  })
})
