/**
 * The manifest's exported Schemas on their own: each struct is strict by its
 * own annotation (a caller decoding with Schema's defaults still gets unknown
 * keys refused), and each carries the identifier its errors and JSON Schema name.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, Option, Schema, SchemaAST } from "effect"
import * as Manifest from "../src/Manifest.js"

const captured = {
  number: 1,
  source: "https://a.test/x",
  status: "captured",
  captureSha256: "a".repeat(64),
  byteLength: 3,
  contentType: "text/plain; charset=utf-8",
  accessedAt: "2026-10-01T09:30:00.000Z"
}
const missing = {
  number: 2,
  source: "https://a.test/y",
  status: "missing",
  reason: { _tag: "MissingCapture", source: "https://a.test/y" }
}
const body = { format: Manifest.manifestFormat, labels: ["a"], sources: [captured, missing] }

// Schema's defaults ignore unknown keys: only the Schema's own annotation refuses them.
const decodesWithDefaults = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))

const identifier = (schema: Schema.Schema.Any) => Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(schema.ast))

describe("Manifest Schemas", () => {
  it("each struct refuses unknown keys by its own annotation", () => {
    assert.isTrue(decodesWithDefaults(Manifest.CapturedSource, captured))
    assert.isFalse(decodesWithDefaults(Manifest.CapturedSource, { ...captured, extra: 1 }))
    assert.isTrue(decodesWithDefaults(Manifest.MissingSource, missing))
    assert.isFalse(decodesWithDefaults(Manifest.MissingSource, { ...missing, extra: 1 }))
    assert.isTrue(decodesWithDefaults(Manifest.ManifestBody, body))
    assert.isFalse(decodesWithDefaults(Manifest.ManifestBody, { ...body, extra: 1 }))
    const digest = Manifest.digestOf(Schema.decodeUnknownSync(Manifest.ManifestBody)(body))
    assert.isTrue(decodesWithDefaults(Manifest.Manifest, { ...body, digest }))
    assert.isFalse(decodesWithDefaults(Manifest.Manifest, { ...body, digest, extra: 1 }))
  })

  it("each carries its identifier", () => {
    assert.strictEqual(identifier(Manifest.CapturedSource), "CapturedSource")
    assert.strictEqual(identifier(Manifest.MissingSource), "MissingSource")
    assert.strictEqual(identifier(Manifest.ManifestBody), "ManifestBody")
    assert.strictEqual(identifier(Manifest.Manifest), "Manifest")
  })
})
