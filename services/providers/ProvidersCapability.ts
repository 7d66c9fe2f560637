import { Layer } from "effect"
import { PROVIDERS_PROBLEMS } from "../../src/contract/Providers.js"
import { capability, Stage } from "../Capability.js"
import { MonnifyInbound } from "./MonnifyInbound.js"
import { PaystackInbound } from "./PaystackInbound.js"
import { ProviderCredits } from "./ProviderCredits.js"
import { ProvidersLive } from "./Providers.js"
import { PROVIDERS_DOCS } from "./ProvidersDocs.js"
import { ProviderSetup } from "./ProviderSetup.js"
import { ProviderSync, ProviderSyncLive } from "./ProviderSync.js"
import { SandboxFaults } from "./SandboxFaults.js"
import { SandboxReporterLive } from "./SandboxReporter.js"
import { PROVIDERS_EXAMPLES } from "./ProvidersExamples.js"

/**
 * Bank providers: each tenant's connection per mode (Paystack, Monnify or the built-in sandbox), the router that picks
 * one per call, their inbound webhooks, the missed-webhook sync and the sandbox's simulator. The sandbox bank itself is
 * the `BankProvider` layer src/Services.ts `makeServices` is given.
 */
export const ProvidersCapability = capability({
  name: "providers",
  services: [
    [Stage.base, SandboxFaults.Default],
    [Stage.providers, ProvidersLive],
    [Stage.credits, ProviderCredits.Default],
    [Stage.inbound, Layer.mergeAll(PaystackInbound.Default, MonnifyInbound.Default, ProviderSync.Default, ProviderSetup.Default)]
  ],
  workers: [SandboxReporterLive, ProviderSyncLive],
  docs: PROVIDERS_DOCS,
  examples: PROVIDERS_EXAMPLES,
  problems: PROVIDERS_PROBLEMS
})
