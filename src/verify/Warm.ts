/**
 * The warm path: the service's steady state, where every capture a
 * verification names is in the verified-capture cache (CaptureCache.ts), kept
 * under the stamp its store gives now (Load.ts), with its search index built.
 * Then steps 2 to 5 (digests, the exact search in each index, picks and
 * anchors, absences, the opt-in screens, evidence) run in one synchronous
 * step, with the same functions in the same order as the general path
 * (Verifier.ts), instead of an effect per capture.
 *
 * Anything it does not fully handle is left to the general path, from the
 * captures as loaded, with nothing changed: a capture not loaded from the
 * cache (a miss, a changed stamp, a read error) or whose index is not built,
 * `verify.signatures` on (attestations are read), spans exported (a span per
 * capture), and an exact miss under normalised matching (that search is linear
 * and sliced).
 *
 * @since 0.5.0
 */
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import type { SuffixIndex } from "../internal/suffixArray.js"
import * as Digests from "./Digests.js"
import * as Evidence from "./Evidence.js"
import type { Loaded } from "./Load.js"
import * as Load from "./Load.js"
import * as Match from "./Match.js"
import type { PolicyShape } from "./Policy.js"
import type { CitationInput, Failures } from "./Records.js"
import type { CheckedCitations } from "./Report.js"

/** Whether verifications may take the warm path, and (for tests) which path each one took. */
export interface WarmPathOptions {
  readonly enabled: boolean
  readonly observe?: ((warm: boolean) => void) | undefined
}

/**
 * The warm path's switch, on by default: off, every verification takes the general path (the
 * equivalence tests compare the two; a measurement can too).
 */
export class WarmPath extends Context.Reference<WarmPath>()("citegate/verify/WarmPath", {
  defaultValue: (): WarmPathOptions => ({ enabled: true })
}) {}

/** Whether the policy asks for nothing the warm path leaves to the general one (the attestations' reads). */
export const handles = (policy: PolicyShape): boolean => policy.signatures === undefined || policy.signatures.mode === "off"

/**
 * Each loaded capture's built index; undefined when any capture is not warm: it failed to load, or
 * has no built index (read now rather than taken from the cache, too long to index, or not yet built).
 */
const builtIndexes = (captures: ReadonlyMap<SourceUrl, Loaded>): ReadonlyMap<SourceUrl, SuffixIndex> | undefined => {
  const built = new Map<SourceUrl, SuffixIndex>()
  for (const [source, loaded] of captures) {
    const index = Either.isRight(loaded) ? loaded.right.index?.ready() : undefined
    if (index === undefined) return undefined
    built.set(source, index)
  }
  return built
}

/**
 * Steps 2 to 5 of every citation at once, synchronously, when every capture is warm; undefined
 * (nothing done that shows) when the general path must decide. `approved` are the failures of
 * approval (Load.approve), which this does not change: it works on a copy, so a fall back starts
 * from them as they were.
 *
 * Bounded without yielding: it runs inside the verification's deadline like the general path, whose
 * steps on a warm capture are synchronous too (`Search.sliced` looks a built index up in one step).
 * Each look-up costs O(m log n) for a key of m code units (the report's size bounds the keys), the
 * evidence a scan from the nearest checkpoint, and the repair diagnostics of absent quotes stay in
 * their own bounds (count and a quarter of the deadline, anchor/Diagnostic.ts), as on the general path.
 */
export const check = (
  policy: PolicyShape,
  citations: ReadonlyArray<CitationInput>,
  captures: ReadonlyMap<SourceUrl, Loaded>,
  approved: Failures
): CheckedCitations | undefined => {
  const indexes = builtIndexes(captures)
  if (indexes === undefined) return undefined
  const failures = approved.map((list) => [...list])
  const toSearch = Digests.groupByCapture(citations, captures, failures)
  // Every capture's exact matches first: an exact miss under normalised matching falls back before
  // any diagnostic has run.
  const matches: Array<readonly [CaptureRecord, Match.CaptureMatches]> = []
  for (const [record, indices] of toSearch) {
    const matched = Match.matchIndexed({ policy, record, citations, indices, failures }, indexes.get(record.source)!)
    if (matched === undefined) return undefined
    matches.push([record, matched])
  }
  const results = Evidence.pending(citations.length) // each one set by the evidence, or by `Evidence.failed`
  const loaded = new Map<SourceUrl, CaptureRecord>()
  const diagnose = Evidence.diagnoser(policy)
  for (const [record, matched] of matches) {
    loaded.set(record.source, record)
    Evidence.settle(policy, record, citations, matched, diagnose, failures, results, Load.checkpointsOf(captures, record.source))
  }
  return { results: Evidence.failed(results, failures), loaded, signatureNotes: [] }
}
