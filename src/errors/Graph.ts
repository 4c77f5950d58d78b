/**
 * Errors of `run-pipeline validate-graph` (src/evidence/Graph.ts): a JSON-LD document that cannot be
 * validated against citegate's SHACL shapes. Each is found before the expensive work (expansion,
 * validation) or stops it; none is a violation of a shape (those are the validation's result).
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/** The file is larger than one validation reads (`maxBytes`); checked before it is read. */
export class GraphInputTooLarge extends TaggedError<GraphInputTooLarge>()("GraphInputTooLarge", {
  path: Schema.String,
  bytes: Schema.NonNegativeInt,
  limit: Schema.NonNegativeInt
}) {
  override get message() {
    return `${this.path} holds ${this.bytes} bytes, more than the ${this.limit} one graph validation reads`
  }
}

/**
 * The document is larger or deeper than one validation takes: JSON values (`nodes`), nesting (`depth`),
 * or RDF statements after expansion (`quads`). Counted before expansion (nodes, depth) and before
 * validation (quads).
 */
export class GraphTooComplex extends TaggedError<GraphTooComplex>()("GraphTooComplex", {
  path: Schema.String,
  measure: Schema.Literal("nodes", "depth", "quads"),
  limit: Schema.NonNegativeInt
}) {
  override get message() {
    const what = { nodes: "JSON values", depth: "levels of nesting", quads: "RDF statements" }[this.measure]
    return `${this.path} has more than ${this.limit} ${what}, more than one graph validation takes`
  }
}

/** The file cannot be read, or is not UTF-8 JSON, or a JSON-LD processor refuses it (`detail` says why). */
export class GraphInputInvalid extends TaggedError<GraphInputInvalid>()("GraphInputInvalid", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.path} is not a JSON-LD document citegate can validate: ${this.detail}`
  }
}

/**
 * The document names a remote context other than citegate's own (`urn:citegate:context:v1`):
 * validation never fetches anything, so it refuses instead.
 */
export class GraphContextRefused extends TaggedError<GraphContextRefused>()("GraphContextRefused", {
  path: Schema.String,
  url: Schema.String
}) {
  override get message() {
    return `${this.path} names the context ${this.url}; validation loads no context but citegate's own and fetches nothing`
  }
}

/** The shipped context or shapes cannot be read or parsed (a damaged installation). */
export class GraphShapesUnavailable extends TaggedError<GraphShapesUnavailable>()("GraphShapesUnavailable", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `citegate's ${this.path} cannot be loaded: ${this.detail}; reinstall the package`
  }
}

/** Why a graph could not be validated. */
export const GraphError = Schema.Union(
  GraphInputTooLarge,
  GraphTooComplex,
  GraphInputInvalid,
  GraphContextRefused,
  GraphShapesUnavailable
)
export type GraphError = typeof GraphError.Type
