import { layer } from "@effect/vitest"
import { Effect } from "effect"
import { HttpServer } from "@effect/platform"
import { execSync } from "node:child_process"
import * as fs from "node:fs"
import { apiToken, makeTestApp, signup } from "../support/TestApp.js"

layer(makeTestApp(), { timeout: 60_000 })("probe", (it) => {
  it.effect("big", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const server = yield* HttpServer.HttpServer
      const addr = server.address as any
      fs.writeFileSync("/tmp/big.json", JSON.stringify({ accountRef: "x", name: "y", pad: "a".repeat(2 * 1024 * 1024) }))
      const out = yield* Effect.promise(async () => execSync(`curl -s -i -X POST -H 'authorization: Bearer ${token}' -H 'content-type: application/json' --data-binary @/tmp/big.json http://127.0.0.1:${addr.port}/api/v1/virtual-accounts; echo; echo rc=$?`).toString())
      console.log(out.slice(0, 800))
    }))
})
