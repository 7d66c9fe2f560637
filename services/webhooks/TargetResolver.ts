import { Context } from "effect"
import { type Resolver, systemResolver } from "./SafeTarget.js"

/**
 * How endpoint host names are resolved, at registration and again at every delivery. The system
 * resolver unless a test supplies a DNS table (to prove that names resolving to private addresses
 * are refused without relying on outside DNS).
 */
export class TargetResolver extends Context.Reference<TargetResolver>()("services/webhooks/TargetResolver", {
  defaultValue: (): Resolver => systemResolver
}) {}
