import { Effect, Ref } from "effect"

export type SandboxOperation = "listBanks" | "nameEnquiry" | "transfer" | "transferStatus"
/**
 * How the sandbox provider answers an operation: normally (`ok`), with a 5xx (`error`), not at all (`timeout`: the
 * caller's timeout ends the call), or, for a transfer, by accepting it and then never answering (`acceptThenTimeout`:
 * the transfer exists at the provider, the caller cannot know).
 */
export type FaultMode = "ok" | "error" | "timeout" | "acceptThenTimeout"

/** The switch tests use to make the sandbox provider fail. Every operation answers normally until told otherwise. */
export class SandboxFaults extends Effect.Service<SandboxFaults>()("services/providers/SandboxFaults", {
  effect: Effect.map(Ref.make<Partial<Record<SandboxOperation, FaultMode>>>({}), (modes) => ({
    set: (operation: SandboxOperation, mode: FaultMode) => Ref.update(modes, (m) => ({ ...m, [operation]: mode })),
    clear: Ref.set(modes, {}),
    modeOf: (operation: SandboxOperation) => Effect.map(Ref.get(modes), (m) => m[operation] ?? ("ok" as FaultMode))
  }))
}) {}
