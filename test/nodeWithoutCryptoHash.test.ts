/**
 * `engines` allows every Node 20, and `crypto.hash` came with 20.12: the modules that use it when
 * present must load and give the same digests without it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { createHash } from "node:crypto"
import { createRequire, syncBuiltinESMExports } from "node:module"

const crypto = createRequire(import.meta.url)("node:crypto") as { hash?: unknown }
const saved = crypto.hash

describe("on a Node 20 without crypto.hash", () => {
  beforeAll(() => {
    delete crypto.hash
    syncBuiltinESMExports()
    vi.resetModules()
  })
  afterAll(() => {
    crypto.hash = saved
    syncBuiltinESMExports()
    vi.resetModules()
  })

  it("the token digest and the capture digest fall back to createHash", async () => {
    const { tokenDigest } = await import("../src/server/Auth.js")
    const { sha256Of } = await import("../src/Domain.js")
    const expected = (text: string) => createHash("sha256").update(text).digest("hex")
    for (const text of ["token-0123456789", "é\u{1F600}", "\ud800"]) {
      expect(tokenDigest(text)).toBe(expected(text))
      expect(sha256Of(text)).toBe(expected(text))
    }
    expect((await import("node:crypto") as { hash?: unknown }).hash).toBeUndefined()
  })
})
