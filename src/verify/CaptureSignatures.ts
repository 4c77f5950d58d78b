/**
 * Verification step 1b, signatures (`verify.signatures`, off by default): each loaded capture's
 * signed attestation read once (`CaptureStore.readAttestation`) and checked against the policy's
 * trusted keys and against the record just read (src/evidence/CaptureAttestation.ts). Under
 * `require` a capture whose attestation does not hold fails every citation of it, before any
 * search; under `check` the problems are returned as notes and the citations go on. Read-only.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Spans from "../internal/Spans.js"
import type { SourceUrl } from "../Domain.js"
import { type CaptureSignatureError, SignatureInvalid } from "../Errors.js"
import * as CaptureAttestation from "../evidence/CaptureAttestation.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import type { Loaded } from "./Load.js"
import type { PolicyShape } from "./Policy.js"

/** The captures as loaded, with those refused under `require`, and the problems found (for `check`). */
export interface Screened {
  readonly captures: ReadonlyMap<SourceUrl, Loaded>
  readonly notes: ReadonlyArray<CaptureSignatureError>
}

const readAttestation = (store: CaptureStoreShape, source: SourceUrl): Effect.Effect<string | undefined, CaptureSignatureError> =>
  store.readAttestation === undefined ? Effect.succeed(undefined) : Effect.mapError(
    store.readAttestation(source),
    (error) => new SignatureInvalid({ keyid: "", source, detail: `the attestation cannot be read: ${error.message}` })
  )

/** Each loaded capture's attestation, read and checked once. */
export const screen = (
  policy: PolicyShape,
  store: CaptureStoreShape,
  captures: ReadonlyMap<SourceUrl, Loaded>
): Effect.Effect<Screened> => {
  const signatures = policy.signatures
  if (signatures === undefined || signatures.mode === "off") return Effect.succeed({ captures, notes: [] })
  return Effect.gen(function*() {
    const screened = new Map(captures)
    const notes: Array<CaptureSignatureError> = []
    for (const [source, loaded] of captures) {
      // A capture that failed to load has failed its citations already.
      if (Either.isLeft(loaded)) continue
      const checked = yield* readAttestation(store, source).pipe(
        Effect.map((envelope) => CaptureAttestation.check(loaded.right.record, envelope, signatures.trusted)),
        Effect.catchAll((error) => Effect.succeed(Either.left(error)))
      )
      if (Either.isRight(checked)) continue
      notes.push(checked.left)
      if (signatures.mode === "require") screened.set(source, Either.left(checked.left))
    }
    return { captures: screened, notes }
  }).pipe(Spans.withSpanExported("Verifier.signatures"))
}
