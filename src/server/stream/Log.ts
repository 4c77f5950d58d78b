/**
 * Where a streamed answer's events are kept for resuming: in this process's memory (the default,
 * `Retention.ts`), or in PostgreSQL when the service runs as replicas (`server/PostgresStreams.ts`), so
 * that a follower resumes on any replica. Same bounds either way (`Retention`).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { StreamGone, StreamRetentionFull } from "../../Errors.js"
import type { StreamEvent } from "./Events.js"
import { follow, Registry, type Retained, type Retention } from "./Retention.js"

/** A stream being produced here. */
export interface StreamHandle {
  readonly id: string
  readonly runId: string
}

/** A retained stream, as a follower finds it. */
export interface StreamInfo extends StreamHandle {
  /** The oldest event id still retained. */
  readonly firstId: number
}

/** One retained event: its id and its JSON (what is sent). */
export interface LoggedEvent {
  readonly id: number
  readonly json: string
}

/** @since 0.2.0 */
export interface StreamLog {
  /** A new stream of `runId` (refused while the retained events of live streams fill the byte budget). */
  readonly open: (runId: string) => Effect.Effect<StreamHandle, StreamRetentionFull>
  /** Keeps one event; it is retained (and visible to followers) when this completes. */
  readonly append: (stream: StreamHandle, event: StreamEvent, json: string) => Effect.Effect<void>
  /** The producer is done (its `done` event was appended, or it stopped). */
  readonly end: (stream: StreamHandle) => Effect.Effect<void>
  readonly lookup: (id: string) => Effect.Effect<StreamInfo | undefined>
  /** The events after `after`, then live ones until the stream's `done`. */
  readonly follow: (stream: StreamInfo, after: number) => Stream.Stream<LoggedEvent, StreamGone>
}

/** The in-memory log of one route, and its registry (sizes for tests and metrics). */
export const memory = (retention: Retention): { readonly log: StreamLog; readonly registry: Registry } => {
  const registry = new Registry(retention)
  // The handles this log gives out are the registry's own records.
  const log: StreamLog = {
    open: (runId) => registry.open(runId),
    append: (stream, event, json) => Effect.suspend(() => registry.append(stream as Retained, event, json)),
    end: (stream) => Effect.suspend(() => registry.end(stream as Retained)),
    lookup: (id) => Effect.sync(() => registry.get(id)),
    follow: (stream, after) => follow(stream as Retained, after)
  }
  return { log, registry }
}
