/**
 * Where a record is stored: `<sha256 hex of the exact source URL string>.json`.
 * The expected names are computed independently (node:crypto here, and fixed
 * vectors from `printf '%s' URL | sha256sum`), never with `recordFileName`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { expectedRecordName } from "./mutants.support.js"
import { accessedAt, tempDirectory } from "./support.js"

const vectors = [
  ["https://reports.northwind.test/q3-sales.txt", "cec4fed0cfc69f0d3689d454e757615cc335a21fafce09d57c0142a4d35d2143.json"],
  // Non-ASCII: the digest is of the UTF-8 bytes.
  ["https://reports.northwind.test/ü/😀?q=é", "608a63756bb77ab7d3b6094552f306f70f9e222da8282c1db8ea94876fd498c3.json"]
] as const

describe("CaptureStore: record file names", () => {
  for (const [source, name] of vectors) {
    it(`known vector: ${source}`, () => {
      assert.strictEqual(CaptureStore.recordFileName(source), name)
      assert.strictEqual(expectedRecordName(source), name)
    })
  }

  it("agrees with an independent SHA-256 for sources that differ only slightly", () => {
    const sources = [
      "https://a.test/x",
      "https://a.test/x?",
      "https://a.test/X",
      "https://a.test/x/",
      "https://a.test/%7Ex",
      "https://a.test/~x"
    ]
    const names = sources.map((s) => CaptureStore.recordFileName(s))
    assert.deepStrictEqual(names, sources.map(expectedRecordName))
    assert.strictEqual(new Set(names).size, sources.length)
  })

  it.scoped("write puts the record under that name, and read finds it there and only there", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const source = vectors[0][0] as SourceUrl
      yield* store.write(makeCaptureRecord({ source, text: "hello\n", accessedAt, contentType: "text/plain" }))
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(directory)), [vectors[0][1]])
      assert.strictEqual((yield* store.read(source)).text, "hello\n")
    }))
})
