/** JSON rendering: machine-readable, decodable with `RenderedResult`. */
import * as Schema from "effect/Schema"
import { cut } from "../internal/bounded.js"
import * as CompiledEncode from "../internal/compiledEncode.js"
import { maxShownLength } from "./Describe.js"
import { RenderedResult, type Rendering, toResult } from "./Rendering.js"

// `Schema.encodeSync(RenderedResult)`, compiled once (internal/compiledEncode.ts): the service renders one per request.
const encode = CompiledEncode.encodeSync(RenderedResult)

/**
 * A rejected fact's error echoes what the report said (a snippet, a source): a
 * hostile report's megabytes must not come back in full. String fields of each
 * per-fact error are cut to `maxShownLength`, as in every other format; the
 * result still decodes (a cut value is a string).
 */
const boundFailures = (encoded: ReturnType<typeof encode>): ReturnType<typeof encode> => {
  if (encoded.status !== "rejected" || encoded.error._tag !== "ReportRejected") return encoded
  const failures = encoded.error.failures.map((failure) => ({
    ...failure,
    error: Object.fromEntries(
      Object.entries(failure.error).map(([key, value]) => [key, typeof value === "string" ? cut(value, maxShownLength) : value])
    ) as typeof failure.error
  }))
  return { ...encoded, error: { ...encoded.error, failures: failures as unknown as typeof encoded.error.failures } }
}

/** The JSON value the `json` format writes (and the `jsonld` format builds on). */
export const toJson = (rendering: Rendering): ReturnType<typeof encode> => boundFailures(encode(toResult(rendering)))

const generalEncode = Schema.encodeSync(RenderedResult)

/** `toJson` through `Schema.encodeSync` alone: the reference the compiled encoder is tested against. */
export const toJsonGeneral = (rendering: Rendering): ReturnType<typeof encode> => boundFailures(generalEncode(toResult(rendering)))

/**
 * The text of a JSON rendering's value, with `fields` after its own keys (a signed result's
 * `attestation`): the same bytes as rendering it and adding the fields to the parsed text, without
 * the second pass (`JSON.parse` of a rendering gives back its value's keys, in order, and values).
 */
export const text = (value: object, fields?: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(fields === undefined ? value : { ...value, ...fields }, null, 2) + "\n"

/**
 * `text` without indentation or trailing newline: what the HTTP service answers (a JSON API's
 * bodies are read by programs; compact, like every other JSON body of the service), the same
 * value as `text` gives.
 */
export const compact = (value: object, fields?: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(fields === undefined ? value : { ...value, ...fields })

export const render = (rendering: Rendering): string => text(toJson(rendering))
