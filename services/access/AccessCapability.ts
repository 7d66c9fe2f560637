import { Layer } from "effect"
import { ACCESS_PROBLEMS } from "../../src/contract/Access.js"
import { capability, Stage } from "../Capability.js"
import { ACCESS_DOCS } from "./AccessDocs.js"
import { ApiKeys } from "./ApiKeys.js"
import { KeysLayer } from "./Keys.js"
import { Tenants } from "./Tenants.js"
import { Tokens } from "./Tokens.js"
import { Users } from "./Users.js"
import { ACCESS_EXAMPLES } from "./AccessExamples.js"

/** Access: tenants, dashboard users, API keys and the tokens both planes carry. */
export const AccessCapability = capability({
  name: "access",
  services: [
    [Stage.base, KeysLayer],
    [Stage.platform, Layer.mergeAll(Tenants.Default, Tokens.Default)],
    [Stage.stores, Layer.mergeAll(Users.Default, ApiKeys.Default)]
  ],
  docs: ACCESS_DOCS,
  examples: ACCESS_EXAMPLES,
  problems: ACCESS_PROBLEMS
})
