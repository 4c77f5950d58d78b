/**
 * The rendering formats and the file extension each is written with (`run-pipeline verify --out`
 * names, demo outputs), stated by hand; and the verified report's schema name, which the service's
 * OpenAPI document shows to clients.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { assert, describe, it } from "@effect/vitest"
import { extension, formats } from "../src/render/Render.js"
import { CitegateApi } from "../src/server/Api.js"

describe("rendering formats", () => {
  it("five formats, each with its extension", () => {
    assert.deepStrictEqual(formats, ["text", "json", "markdown", "html", "jsonld"])
    assert.deepStrictEqual(extension, { text: "txt", json: "json", markdown: "md", html: "html", jsonld: "jsonld" })
  })

  it("the verified report is a named schema of the service's API", () => {
    const document = OpenApi.fromApi(CitegateApi) as unknown as { readonly components: { readonly schemas: Record<string, unknown> } }
    assert.includeMembers(Object.keys(document.components.schemas), ["VerifiedReport", "VerifiedCitation", "UnavailableFact", "RunInfo", "Manifest"])
  })
})
