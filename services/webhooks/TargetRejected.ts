import { Data } from "effect"

/**
 * A webhook endpoint URL (or one of the addresses it resolves to) is not an
 * acceptable delivery target. `reason` is written for the tenant who
 * registered the URL, so it names the rule that failed and never echoes
 * anything secret (we never put userinfo from the URL into it).
 */
export class TargetRejected extends Data.TaggedError("TargetRejected")<{
  readonly reason: string
}> {
  override get message(): string {
    return this.reason
  }
}
