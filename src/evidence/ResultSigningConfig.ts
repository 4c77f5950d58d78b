/**
 * `verify.resultSigning` in pipeline.json: the Ed25519 key the service signs verification results
 * with when a request asks (`?sign=1`, docs/signatures.md, "Signed results"). Its own module so the
 * configuration's schema names it in one line.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"

/**
 * `keyFile`: the operator's Ed25519 private key (PKCS#8 PEM; the key itself is never in the
 * configuration), resolved against pipeline.json's directory, read and checked when `serve` starts.
 */
export const ResultSigning = Schema.Struct({
  keyFile: Schema.String.pipe(
    Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters")
  )
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "ResultSigning" })
export type ResultSigning = typeof ResultSigning.Type
