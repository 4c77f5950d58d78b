/**
 * Listing a run's captures (`CaptureStoreShape.list`): the one error the listing adds to the store's own.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { CorruptCapture, InvalidRunDirectory, LegacyCapture, MissingCapture, StoreUnavailable } from "./Store.js"
import { TaggedError } from "./TaggedError.js"

/**
 * The run holds more captures than one listing returns (`limit`, default `maxListedCaptures`):
 * counted before any record is read, so nothing past the limit is read or held.
 */
export class CaptureListTooLarge extends TaggedError<CaptureListTooLarge>()("CaptureListTooLarge", {
  run: Schema.String,
  captures: Schema.NonNegativeInt,
  limit: Schema.NonNegativeInt
}) {
  override get message() {
    return `The run ${JSON.stringify(this.run)} holds ${this.captures} captures, more than the ${this.limit} one listing returns`
  }
}

/**
 * What `list` fails with: too many captures; a record file that cannot name its source (the
 * filesystem store: not a record of the source its name is the digest of, or unreadable: a read
 * error); the run directory unreadable (`InvalidRunDirectory`) or the database failing (`StoreUnavailable`).
 */
export const CaptureListError = Schema.Union(
  CaptureListTooLarge,
  MissingCapture,
  CorruptCapture,
  LegacyCapture,
  InvalidRunDirectory,
  StoreUnavailable
)
export type CaptureListError = typeof CaptureListError.Type
