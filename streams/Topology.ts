import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstreamManager,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type StreamConfig
} from "@nats-io/jetstream"
import { nanos } from "@nats-io/nats-core"
import { randomUUID } from "node:crypto"
import { Effect, Option } from "effect"
import type { Mode } from "../src/domain/Mode.js"
import { Nats, NatsError, tryNats } from "./Nats.js"

/**
 * Where our streams and subjects live on a NATS server. `prefix` is "" in production and a single
 * token ending in "." otherwise (e.g. "t1a2b3c4d." in a test run), so several deployments or test
 * runs can share one server without seeing each other's messages.
 */
export interface Topology {
  readonly prefix: string
}


/** A fresh, unique topology: what each test run should use on the shared server. */
export const isolatedTopology = (): Topology => ({ prefix: `t${randomUUID().replace(/-/g, "").slice(0, 10)}.` })

// Stream names may not contain ".", "*", ">", whitespace or path separators, so the subject
// prefix is folded into a name-safe form: "t1a2b." -> "T1A2B_".
const namePrefix = (t: Topology): string => t.prefix.toUpperCase().replace(/[^A-Z0-9]/g, "_")

export const streamNames = (t: Topology) => ({
  deposits: `${namePrefix(t)}DEPOSITS`,
  reconciled: `${namePrefix(t)}RECONCILED`
})

const SAFE_BYTE = /^[A-Za-z0-9_-]$/
const PLAIN_TOKEN = /^[A-Za-z0-9_-]+$/
const ASCII = /^[\x00-\x7f]*$/
const UNSAFE_ASCII = /[^A-Za-z0-9_-]/g
/** `%XX`: one byte, escaped. */
const percentByte = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`
const percentOf = (c: string) => percentByte(c.charCodeAt(0))
const utf8 = new TextEncoder()

/**
 * Encodes an arbitrary string as ONE valid subject token, deterministically and reversibly.
 *
 * Scheme: the string's UTF-8 bytes; `A-Z a-z 0-9 _ -` are kept as they are, every other byte
 * (".", "*", ">", whitespace, "%", non-ASCII, ...) becomes `%XX` with upper-case hex, as in URL
 * percent-encoding. The empty string, which would otherwise leave an empty token ("a..b"), is
 * the lone "%", which no non-empty input can produce (every "%" it emits has two hex digits after it).
 * Ordinary references ("ord_123-A") come out unchanged, so subjects stay readable. Because "%"
 * itself is escaped the mapping is injective: two references never share a subject.
 * Strings with lone UTF-16 surrogates are not valid text and encode as U+FFFD.
 */
export const token = (s: string): string => {
  if (s === "") return "%"
  // Ids, modes and NUBANs are already plain tokens: one native test instead of a regex test per byte.
  if (PLAIN_TOKEN.test(s)) return s
  // ASCII (event types such as `deposit.reconciled`, which every relayed event's subject holds): each character is its
  // own UTF-8 byte, so one native replace escapes the few unsafe ones, not a string per byte as below.
  if (ASCII.test(s)) return s.replace(UNSAFE_ASCII, percentOf)
  let out = ""
  for (const b of utf8.encode(s)) {
    const c = String.fromCharCode(b)
    out += SAFE_BYTE.test(c) ? c : percentByte(b)
  }
  return out
}

/** Inverse of {@link token}. Anything malformed is returned as it is (it was not made by `token`). */
export const decodeToken = (tok: string): string => {
  if (tok === "%") return ""
  if (!/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/.test(tok)) return tok
  const bytes: Array<number> = []
  for (let i = 0; i < tok.length; ) {
    if (tok[i] === "%") {
      bytes.push(parseInt(tok.slice(i + 1, i + 3), 16))
      i += 3
    } else {
      bytes.push(tok.charCodeAt(i))
      i += 1
    }
  }
  return new TextDecoder().decode(Uint8Array.from(bytes))
}

// The tenant id, mode and NUBAN are normally token-safe already (ids, "test"/"live", digits), so
// `token` leaves them unchanged; passing them through it anyway means a bad value can never turn
// into a wildcard or an extra subject level.

/**
 * The deposit stream's partition of an account key (tenant, mode, NUBAN): FNV-1a of `<tenantId>:<mode>:<accountNumber>`
 * modulo `partitions`. One account key always lands on the same partition, so its deposits stay in one subject
 * partition, which ONE reconciler process owns at a time (docs/deposits.md, "Partitions and owners").
 */
export const depositPartition = (tenantId: string, mode: string, accountNumber: string, partitions: number): number => {
  const key = `${tenantId}:${mode}:${accountNumber}`
  let h = 2166136261
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619)
  return (h >>> 0) % partitions
}

/**
 * `deposits.p<N>.<tenantId>.<mode>.<accountNumber>`, N = depositPartition(...) of `partitions` (DEPOSIT_PARTITIONS, the
 * same in every process): where the receiver (and the sweeper) publish inbound events. The partition is a subject level
 * of its own so one `filter_subject` (nats-server 2.9 allows only one) selects it: `deposits.p<N>.*.*.*`.
 */
export const depositSubject = (t: Topology, tenantId: string, mode: Mode, accountNumber: string, partitions: number): string =>
  `${t.prefix}deposits.p${depositPartition(tenantId, mode, accountNumber, partitions)}.${token(tenantId)}.${token(mode)}.${token(accountNumber)}`

/** What partition `partition`'s consumer selects: `deposits.p<N>.*.*.*`. */
export const depositPartitionFilter = (t: Topology, partition: number): string => `${t.prefix}deposits.p${partition}.*.*.*`

/**
 * The subjects of earlier versions, before partitions: `deposits.<tenantId>.<mode>.<accountNumber>` (one level fewer, so
 * no partition filter matches them). Read once, on upgrade (see JetStreamDepositBus).
 */
export const legacyDepositFilter = (t: Topology): string => `${t.prefix}deposits.*.*.*`

/**
 * `reconciled.<tenantId>.<mode>.<token(eventType)>.<token(accountRef)>`: where the outbox relay publishes. The event
 * type has a level of its own so one `filter_subject` (nats-server 2.9 allows only one) can select a type, e.g.
 * `reconciled.*.*.deposit%2Ereconciled.*`, and a tenant's account's changes of every type are `reconciled.<t>.<m>.*.<ref>`.
 */
export const reconciledSubject = (t: Topology, tenantId: string, mode: Mode, eventType: string, accountRef: string): string =>
  `${t.prefix}reconciled.${token(tenantId)}.${token(mode)}.${token(eventType)}.${token(accountRef)}`

/**
 * A subscription filter over reconciled subjects: one tenant and mode, optionally one event type and one account
 * reference (a wildcard level where not given).
 */
export const reconciledFilter = (
  t: Topology,
  tenantId: string,
  mode: Mode,
  only: { readonly eventType?: string | undefined; readonly accountRef?: string | undefined } = {}
): string =>
  `${t.prefix}reconciled.${token(tenantId)}.${token(mode)}.${only.eventType === undefined ? "*" : token(only.eventType)}.${only.accountRef === undefined ? "*" : token(only.accountRef)}`

/** Splits a reconciled subject back into its parts. */
export const parseReconciledSubject = (
  t: Topology,
  subject: string
): Option.Option<{ readonly tenantId: string; readonly mode: string; readonly eventType: string; readonly accountRef: string }> => {
  const head = `${t.prefix}reconciled.`
  if (!subject.startsWith(head)) return Option.none()
  const parts = subject.slice(head.length).split(".")
  if (parts.length !== 4) return Option.none()
  const [tenantId, mode, eventType, accountRef] = parts.map(decodeToken) as [string, string, string, string]
  return Option.some({ tenantId, mode, eventType, accountRef })
}

/**
 * Splits a deposit subject back into its parts (e.g. to key per-account processing); `partition` is null on a subject
 * of an earlier version (`deposits.<tenantId>.<mode>.<accountNumber>`).
 */
export const parseDepositSubject = (
  t: Topology,
  subject: string
): Option.Option<{ readonly partition: number | null; readonly tenantId: string; readonly mode: string; readonly accountNumber: string }> => {
  const head = `${t.prefix}deposits.`
  if (!subject.startsWith(head)) return Option.none()
  const parts = subject.slice(head.length).split(".")
  if (parts.length === 3) {
    const [tenantId, mode, accountNumber] = parts.map(decodeToken) as [string, string, string]
    return Option.some({ partition: null, tenantId, mode, accountNumber })
  }
  if (parts.length !== 4 || !/^p(0|[1-9][0-9]*)$/.test(parts[0]!)) return Option.none()
  const [tenantId, mode, accountNumber] = parts.slice(1).map(decodeToken) as [string, string, string]
  return Option.some({ partition: Number(parts[0]!.slice(1)), tenantId, mode, accountNumber })
}

/**
 * The `Nats-Msg-Id` of a deposit event. Within the duplicate window JetStream drops a second
 * publish with the same id, so the receiver and the sweeper may both publish an inbox row.
 */
export const depositMsgId = (tenantId: string, mode: Mode, provider: string, providerReference: string): string =>
  `${tenantId}:${mode}:${provider}:${providerReference}`

/**
 * The ONE durable consumer every reconciler process shared in earlier versions (filter `deposits.>`). No longer created;
 * on upgrade the partitions' first consumers start where it had got to, and it is deleted once every partition has a
 * consumer of its own (JetStreamDepositBus, "take-over").
 */
export const RECONCILER_DURABLE = "reconciler"

/**
 * The durable consumer of partition `partition` for one ownership of it: `reconciler-p<N>-<epoch>`, epoch being the
 * lease's (raised by every take-over, see PartitionLeases). A new owner makes a consumer of its own, starting where the
 * previous one had got to, and deletes the previous one, so a process that lost the partition, however late it wakes,
 * can never be delivered a message of the new ownership (its pulls go to a consumer that no longer exists).
 */
export const partitionConsumerName = (partition: number, epoch: number): string => `reconciler-p${partition}-${epoch}`

/** The partition and epoch of a partition consumer's name; None for any other consumer. */
export const parsePartitionConsumer = (name: string): Option.Option<{ readonly partition: number; readonly epoch: number }> => {
  const m = /^reconciler-p(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$/.exec(name)
  return m ? Option.some({ partition: Number(m[1]), epoch: Number(m[2]) }) : Option.none()
}

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Shared by both streams. duplicate_window is 10 minutes (server default 2) so a sweeper
 * republishing an inbox row some minutes later is still de-duplicated by JetStream; the
 * reconciler's unique key is the real guarantee beyond that.
 */
const commonStreamConfig = {
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  discard: DiscardPolicy.Old,
  duplicate_window: nanos(10 * 60 * 1000),
  max_age: nanos(30 * DAY_MS),
  num_replicas: 1
} satisfies Partial<StreamConfig>

export const depositsStreamConfig = (t: Topology) =>
  ({ ...commonStreamConfig, name: streamNames(t).deposits, subjects: [`${t.prefix}deposits.>`] }) satisfies Partial<StreamConfig>

export const reconciledStreamConfig = (t: Topology) =>
  ({ ...commonStreamConfig, name: streamNames(t).reconciled, subjects: [`${t.prefix}reconciled.*.*.*.*`] }) satisfies Partial<StreamConfig>

/**
 * How long a delivery may go unacknowledged before JetStream redelivers it: what a deposit held by a process that
 * died waits before another process gets it. Short, because the reconciler sends a progress ack (`working()`) for
 * every message it still holds every RECONCILER_PROGRESS_EVERY_MS, so a slow batch (a long transaction, a Postgres
 * outage) is never redelivered behind its back.
 */
export const RECONCILER_ACK_WAIT_MS = 5_000
/** Progress acks for held messages: well inside ack_wait (a third of it), so one late timer tick is not a redelivery. */
export const RECONCILER_PROGRESS_EVERY_MS = Math.floor(RECONCILER_ACK_WAIT_MS / 3)

/** Deliveries of one message before the reconciler records it as poison and terminates it. */
export const RECONCILER_MAX_DELIVER = 8

/**
 * A partition's durable pull consumer for one ownership (see partitionConsumerName). max_deliver bounds poison messages
 * (the inbox sweeper and dead-letter tooling take over after that); ack_wait is RECONCILER_ACK_WAIT_MS, kept alive by
 * progress acks while work is held; max_ack_pending caps the partition's in-flight work. Only ONE filter_subject:
 * nats-server 2.9 rejects filter_subjects. `startSeq`: where the previous owner's consumer had got to (its ack floor
 * + 1); undefined: from the stream's first message (a partition that never had a consumer).
 */
export const partitionConsumerConfig = (t: Topology, partition: number, epoch: number, startSeq: number | undefined) =>
  ({
    durable_name: partitionConsumerName(partition, epoch),
    ack_policy: AckPolicy.Explicit,
    ...(startSeq === undefined || startSeq <= 1
      ? { deliver_policy: DeliverPolicy.All }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq }),
    filter_subject: depositPartitionFilter(t, partition),
    max_deliver: RECONCILER_MAX_DELIVER,
    ack_wait: nanos(RECONCILER_ACK_WAIT_MS),
    max_ack_pending: 1024
  }) satisfies Partial<ConsumerConfig>

// JetStream's "stream name already in use with a different configuration".
const STREAM_NAME_IN_USE = 10058

/**
 * Creates or updates both streams. Idempotent and safe to run from every process at startup: an identical existing
 * stream makes `add` succeed; a changed one (say a new max_age) is updated in place.
 *
 * No consumer: the deposit partitions' consumers are made by their owners, one per ownership, when they take a
 * partition over (JetStreamDepositBus), never by a process that merely connects (an API process making a partition's
 * consumer from the stream's start would have it re-read the partition's whole history).
 */
export const ensureTopology = (t: Topology): Effect.Effect<void, NatsError, Nats> =>
  Effect.gen(function* () {
    const nc = yield* Nats
    const jsm = yield* tryNats("JetStream unavailable", () => jetstreamManager(nc))

    for (const cfg of [depositsStreamConfig(t), reconciledStreamConfig(t)]) {
      yield* tryNats(`cannot create stream ${cfg.name}`, async () => {
        try {
          await jsm.streams.add(cfg)
        } catch (e) {
          if (e instanceof JetStreamApiError && e.code === STREAM_NAME_IN_USE) {
            const { name, ...update } = cfg
            await jsm.streams.update(name, update)
          } else throw e
        }
      })
    }
  })
