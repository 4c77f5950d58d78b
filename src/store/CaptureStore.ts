/**
 * Where capture records live during one run. The service interface has no
 * paths in it: the filesystem store (`store/Filesystem.ts`, bound to this tag
 * by `layerFileSystem`) is the embedded default, and other backends
 * (`store/Memory.ts`, `store/Postgres.ts`) provide the same Tag. The Verifier
 * reads captures only through this service, and only with `read`.
 *
 * This module is the contract: the tag, its shape, and the public names of
 * the filesystem store, the stored form and the run-directory inspection,
 * re-exported from the modules that implement them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CaptureRecord, Sha256Hex, SourceUrl } from "../Domain.js"
import type { CaptureListError, CaptureReadError, CaptureWriteError, InvalidRunDirectory } from "../Errors.js"
import * as Filesystem from "./Filesystem.js"
import type { RecordWithBody } from "./Format.js"

export type { RecordWithBody }

/**
 * @since 0.1.0
 * @category models
 */
export interface CaptureStoreShape {
  /**
   * Persist a record atomically and exclusively: either the complete record
   * appears under its final name, or nothing does. An existing record of the
   * same source is never replaced (`CaptureExists`). A v2 record needs its
   * body, the one it describes (length and SHA-256 checked here, else
   * `CaptureWriteFailed` and nothing stored): the body is stored first
   * (content-addressed, read-only, exclusive; a body already stored under the
   * same digest is kept), then the record, so a record never names a body that
   * is not there.
   */
  readonly write: (record: CaptureRecord, body?: Uint8Array) => Effect.Effect<void, CaptureWriteError>
  /**
   * Read the record of exactly this source. Never writes, renames, chmods or
   * migrates anything. A v2 record is returned only when its body is stored
   * and hashes to `body.sha256` (`CorruptCapture` `body-missing` /
   * `body-mismatch` otherwise).
   */
  readonly read: (source: SourceUrl) => Effect.Effect<CaptureRecord, CaptureReadError>
  /**
   * Optional: `read`, and with it the body a v2 record describes (`undefined` for a v1 record),
   * read once: the same checks as `read` (the body stored, its length and SHA-256 the record's).
   * Exports, which need both, call it instead of `read` and `readBody` (a body read and hashed
   * twice otherwise).
   *
   * @since 0.3.0
   */
  readonly readWithBody?: ((source: SourceUrl) => Effect.Effect<RecordWithBody, CaptureReadError>) | undefined
  /**
   * The stored body with this digest (audits, `doctor`), checked against it.
   * `MissingCapture` / `CorruptCapture` name the body as `body <sha256>`.
   */
  readonly readBody: (sha256: Sha256Hex) => Effect.Effect<Uint8Array, CaptureReadError>
  /**
   * The sources of every capture in the run, sorted, for exports (`run-pipeline export --format warc`)
   * that read each one after through `read` and `readBody`. Bounded: at most `limit` sources (default
   * `defaultMaxListedCaptures`, 10 000); a run holding more fails `CaptureListTooLarge` with the count,
   * taken before any record is read. Read-only. Listing is never how verification finds a capture: a
   * report's sources are the configuration's approved sources, each read by its exact name.
   *
   * @since 0.3.0
   */
  readonly list: (options?: ListOptions) => Effect.Effect<ReadonlyArray<SourceUrl>, CaptureListError>
  /**
   * Optional: names the data this store reads (backend, location and run), the same for two store
   * values over the same data. The verified-capture cache (`verify/CaptureCache.ts`) keys on it; a
   * store without one is never cached.
   */
  readonly identity?: string | undefined
  /**
   * Optional: a cheap stamp of what `read(source)` would read now, taken before each use of a
   * cached capture (the filesystem store: device, inode, size, modification and change times of
   * the record file). A different stamp means the capture is read and checked again; `undefined`
   * (nothing there to stamp) means it is read and not cached. A store without `stamp` relies on
   * captures being immutable, as its contract says.
   */
  readonly stamp?: ((source: SourceUrl) => Effect.Effect<string | undefined>) | undefined
  /**
   * Optional: the stamps of several sources at once, as `stamp` would give each (a source absent
   * from the map has nothing to stamp). A store where each `stamp` costs a round trip (PostgreSQL:
   * one query for all the sources a verification cites) has it, and so does the filesystem store
   * (an `lstat` of each record file, in one effect; in a verification thread one taken after the
   * request arrived, internal/Arrivals.ts); the Verifier's load step asks it once per verification
   * when a cache is in use.
   *
   * @since 0.3.0
   */
  readonly stamps?: ((sources: Iterable<SourceUrl>) => Effect.Effect<ReadonlyMap<SourceUrl, string>>) | undefined
  /**
   * Optional: `stamps` taken synchronously (a store whose stamps are local syscalls: the filesystem
   * store's `lstat`), for a caller that answers warm requests without an effect (the service's
   * verify lane). The same stamps as `stamps`, each taken after the request being verified arrived.
   *
   * @since 0.5.0
   */
  readonly stampsNow?: ((sources: Iterable<SourceUrl>) => ReadonlyMap<SourceUrl, string>) | undefined
  /**
   * Optional: keep a record's signed attestation (a DSSE envelope's text, at most
   * `maxAttestationBytes`), exclusively and immutably like the record: a second attestation of the
   * same source fails `CaptureExists`. The capture stage calls it right after `write` when
   * `capture.signing.keyFile` is set; a store without it cannot keep signed captures.
   */
  readonly writeAttestation?: ((source: SourceUrl, envelope: string) => Effect.Effect<void, CaptureWriteError>) | undefined
  /**
   * Optional: the attestation kept for this source, `undefined` when there is none. Read-only, like
   * `read`; the Verifier calls it once per distinct capture when `verify.signatures` is not `off`.
   * A store without it has no signed captures.
   */
  readonly readAttestation?: ((source: SourceUrl) => Effect.Effect<string | undefined, CaptureReadError>) | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ListOptions {
  /** The most sources one listing returns (a whole number; default `defaultMaxListedCaptures`). */
  readonly limit?: number
}

/**
 * @since 0.1.0
 * @category tags
 */
export class CaptureStore extends Context.Tag("citegate/CaptureStore")<CaptureStore, CaptureStoreShape>() {}

/** The shared strict decoder's parts, for stores kept elsewhere (src/internal/recordDecode.ts). */
export { checkBody, checkRecord, decodeRecord } from "../internal/recordDecode.js"


/** The stored form every store shares (store/Format.ts). */
export {
  attestationFileName,
  bodyFileName,
  defaultMaxBodyBytes,
  defaultMaxListedCaptures,
  defaultMaxRecordBytes,
  encodeChunkCodeUnits,
  encodeRecord,
  encodeRecordChunks,
  maxAttestationBytes,
  partialPrefix,
  recordFileName
} from "./Format.js"

/** The filesystem store (store/Filesystem.ts). */
export { type FileIo, type FileSystemOptions, nodeIo } from "./Filesystem.js"

/** Inspecting a run directory, `run-pipeline doctor` (store/Inspect.ts). */
export {
  type AttestationEntry,
  type BodyEntry,
  inspect,
  type Leftover,
  type RecordProblem,
  type RunInspection,
  sweep,
  type SweepResult
} from "./Inspect.js"

/**
 * A store over one run directory on the local filesystem.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFileSystem: (
  options: Filesystem.FileSystemOptions
) => Effect.Effect<CaptureStoreShape, InvalidRunDirectory> = Filesystem.make

/**
 * The filesystem store as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFileSystem = (options: Filesystem.FileSystemOptions): Layer.Layer<CaptureStore, InvalidRunDirectory> =>
  Layer.effect(CaptureStore, makeFileSystem(options))
