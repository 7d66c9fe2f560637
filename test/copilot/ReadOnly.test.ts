import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// The copilot never writes: none of its modules holds a statement that changes data or stages an event. (The HTTP test
// also checks at run time that asking leaves the tenant's outbox and audit log as they were.)

const FILES = [
  "services/copilot/Copilot.ts", "services/copilot/CopilotReads.ts", "services/copilot/LanguageModel.ts",
  "services/copilot/AccountAnswers.ts", "services/copilot/DepositAnswers.ts", "services/copilot/MoneyOutAnswers.ts",
  "services/copilot/InsightAnswers.ts",
  "src/http/handlers/CopilotHandlers.ts"
]

describe("the copilot is read-only", () => {
  for (const file of FILES) {
    it(`${file} has no INSERT, UPDATE, DELETE, DDL, lock or outbox stage`, () => {
      const text = fs.readFileSync(path.join(import.meta.dirname, "../..", file), "utf8")
      expect(text).not.toMatch(/\b(INSERT|UPDATE|DELETE|TRUNCATE|ALTER|CREATE|DROP|MERGE|UPSERT)\b/)
      expect(text).not.toMatch(/FOR (UPDATE|SHARE)|withTransaction|\.stage\(|Outbox|pg_notify|sql\.insert|sql\.update/)
    })
  }
})
