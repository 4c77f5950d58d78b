/**
 * Verification step 2, digests: the capture's own digest (its text rehashed at
 * load), then the digest the citation names. Citations whose capture passes
 * both are grouped by capture for the search.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import { DigestMismatch } from "../Errors.js"
import type { Loaded } from "./Load.js"
import type { CitationFailure, CitationInput, Failures } from "./Records.js"

/** The capture's own digest, then the digest the report names: the capture to search, or why not. */
export const checkDigests = (fact: CitationInput, capture: Loaded): Either.Either<CaptureRecord, CitationFailure> => {
  if (Either.isLeft(capture)) return Either.left(capture.left)
  const { record, textSha256 } = capture.right
  if (textSha256 !== record.sha256) {
    return Either.left(
      new DigestMismatch({
        source: record.source,
        kind: "stored",
        reported: fact.captureSha256,
        stored: record.sha256,
        computed: textSha256
      })
    )
  }
  if (fact.captureSha256 !== record.sha256) {
    return Either.left(
      new DigestMismatch({
        source: record.source,
        kind: "report",
        reported: fact.captureSha256,
        stored: record.sha256,
        computed: textSha256
      })
    )
  }
  return Either.right(record)
}

/**
 * The citations to search, by capture (in the order captures were first named). A citation whose
 * source was not approved was not loaded and has failed already; one whose capture or digests do
 * not check out gets its failure here.
 */
export const groupByCapture = (
  citations: ReadonlyArray<CitationInput>,
  captures: ReadonlyMap<SourceUrl, Loaded>,
  failures: Failures
): ReadonlyMap<CaptureRecord, ReadonlyArray<number>> => {
  const toSearch = new Map<CaptureRecord, Array<number>>()
  citations.forEach((citation, i) => {
    const capture = captures.get(citation.source as SourceUrl)
    if (capture === undefined) return // not approved: already failed, nothing was read
    const checked = checkDigests(citation, capture)
    if (Either.isLeft(checked)) failures[i]!.push(checked.left)
    else {
      const group = toSearch.get(checked.right)
      if (group === undefined) toSearch.set(checked.right, [i])
      else group.push(i)
    }
  })
  return toSearch
}
