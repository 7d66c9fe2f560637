import { Layer } from "effect"
import { ApiKeys } from "../services/ApiKeys.js"
import { KeysLayer } from "../services/Keys.js"
import type { BankProvider } from "../services/provider/BankProvider.js"
import { SandboxProviderLive } from "../services/provider/SandboxProvider.js"
import { Tenants } from "../services/Tenants.js"
import { Tokens } from "../services/Tokens.js"
import { Users } from "../services/Users.js"
import { VirtualAccounts } from "../services/VirtualAccounts.js"

/** Every domain service, given AppConfig and a migrated SqlClient. */
export const makeServices = <E, R>(provider: Layer.Layer<BankProvider, E, R>) =>
  Layer.mergeAll(Users.Default, ApiKeys.Default, VirtualAccounts.Default).pipe(
    Layer.provideMerge(Layer.mergeAll(Tenants.Default, Tokens.Default, provider)),
    Layer.provideMerge(KeysLayer)
  )

export const ServicesLive = makeServices(SandboxProviderLive)
