/**
 * Errors of a service running as several replicas over one PostgreSQL database: `ReplicaError`.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/**
 * A streamed answer whose producing replica stopped (killed, or cut off from the database) before its
 * `done`: its lease ran out, and a follower on another replica closed the stream with this error and a
 * `done` of state `rejected`. The events before it stay as they were sent; nothing of the answer is
 * accepted.
 */
export class StreamProducerLost extends TaggedError<StreamProducerLost>()("StreamProducerLost", {
  /** The last event id the producer wrote. */
  lastId: Schema.Int,
  /** The lease (`server.leaseMs`) the producer stopped renewing. */
  leaseMs: Schema.Int
}) {
  override get message() {
    return `The replica answering this stream stopped after event ${this.lastId} (no heartbeat for ${this.leaseMs} ms); send the answer again`
  }
}

/** What a replicated service reports in its event streams. */
export const ReplicaError = Schema.Union(StreamProducerLost)
export type ReplicaError = typeof ReplicaError.Type
