import { capability, Stage } from "../Capability.js"
import { Outbox } from "./Outbox.js"
import { OutboxRelayLive } from "./OutboxRelay.js"
import { RELAY } from "./Registry.js"

/** The outbox: events staged in the business transaction, a pending row per interested consumer, the relay to NATS. */
export const OutboxCapability = capability({
  name: "outbox",
  services: [[Stage.platform, Outbox.Default]],
  workers: [OutboxRelayLive],
  consumers: [RELAY]
})
