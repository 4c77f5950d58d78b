/**
 * Bearer-token authentication at its edges: the exact header grammar (`Bearer` and one token of
 * printable ASCII, nothing before or after), the header length limit at and past 4096, a header
 * given as a list, the first of two tokens with one digest, and the principal built from the
 * configuration. Digests are computed here with `node:crypto` directly, not with `tokenDigest`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { Forbidden, Unauthorized } from "../src/Errors.js"
import { Access, Auth, authorize, maxAuthorizationLength, type Principal, tokenDigest } from "../src/server/Auth.js"
import { spanNames } from "./mutants.support.js"

const hex = (token: string) => createHash("sha256").update(Buffer.from(token, "utf8")).digest("hex")

/** A token of every printable ASCII character but space: `!` (0x21) … `~` (0x7e). */
const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("")
/** The longest token whose header is exactly `maxAuthorizationLength` characters. */
const longest = "L".repeat(4_096 - "Bearer ".length)

const configured = [
  { sha256: hex(printable), runs: "*" as const, capture: true, name: "printable" },
  { sha256: hex(longest), runs: ["run-a", "run-b"], capture: false },
  { sha256: hex("plain-token"), runs: [], capture: false, name: "plain" }
]
const auth = Auth.make(configured)

const reasonOf = (headers: Record<string, any>) =>
  Effect.map(Effect.flip(auth.authenticate(headers)), (error) => {
    assert.instanceOf(error, Unauthorized)
    return { _tag: error._tag, reason: (error as Unauthorized).reason }
  })

describe("Auth: the Authorization header", () => {
  it.effect("tokenDigest is the lowercase hex SHA-256 of the token's UTF-8 bytes", () =>
    Effect.sync(() => {
      // sha256("abc") from FIPS 180-2.
      assert.strictEqual(tokenDigest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      assert.strictEqual(tokenDigest("é-token"), hex("é-token"))
      assert.strictEqual(maxAuthorizationLength, 4_096)
    }))

  it.effect("every printable ASCII character but space is a token character", () =>
    Effect.gen(function*() {
      const principal = yield* auth.authenticate({ authorization: `Bearer ${printable}` })
      assert.strictEqual(principal.name, "printable")
      assert.strictEqual(principal.digest, hex(printable))
    }))

  it.effect("a header of exactly 4096 characters is looked at; one more is malformed without a lookup", () =>
    Effect.gen(function*() {
      assert.strictEqual(`Bearer ${longest}`.length, 4_096)
      const principal = yield* auth.authenticate({ authorization: `Bearer ${longest}` })
      assert.deepStrictEqual(
        { ...principal, runs: [...principal.runs] },
        { name: `token:${hex(longest).slice(0, 12)}`, digest: hex(longest), runs: ["run-a", "run-b"], capture: false, metrics: false }
      )
      assert.deepStrictEqual(yield* reasonOf({ authorization: `Bearer ${longest}L` }), { _tag: "Unauthorized", reason: "malformed" })
      // Just under the limit, an unknown token is unknown (not malformed).
      assert.deepStrictEqual(yield* reasonOf({ authorization: `Bearer ${longest.slice(1)}` }), { _tag: "Unauthorized", reason: "unknown-token" })
    }))

  it.effect("anything around `Bearer <token>` makes it malformed, also when the token itself is known", () =>
    Effect.gen(function*() {
      for (
        const header of [
          `xBearer ${printable}`,
          ` Bearer ${printable}`,
          `bearer ${printable}`,
          `Bearer  ${printable}`,
          `Bearer ${printable} `,
          `Bearer ${printable}\t`,
          `Bearer ${printable}\n`,
          `Bearer ${printable} x`,
          `Bearer ${printable}\x7f`,
          "Bearer é-token",
          "Bearer "
        ]
      ) {
        assert.deepStrictEqual(yield* reasonOf({ authorization: header }), { _tag: "Unauthorized", reason: "malformed" }, JSON.stringify(header))
      }
    }))

  it.effect("a header given as a list is malformed, even a list of one valid header", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* reasonOf({ authorization: [`Bearer ${printable}`] }), { _tag: "Unauthorized", reason: "malformed" })
      assert.deepStrictEqual(yield* reasonOf({ authorization: [] }), { _tag: "Unauthorized", reason: "malformed" })
      // Other headers are not looked at.
      assert.deepStrictEqual(yield* reasonOf({ "x-authorization": `Bearer ${printable}` }), { _tag: "Unauthorized", reason: "missing" })
    }))

  it.effect("a one-character token is a token", () =>
    Effect.gen(function*() {
      const one = Auth.make([{ sha256: hex("t"), runs: [], capture: false }])
      const principal = yield* one.authenticate({ authorization: "Bearer t" })
      assert.strictEqual(principal.digest, hex("t"))
      const unknown = yield* Effect.flip(one.authenticate({ authorization: "Bearer u" }))
      assert.deepStrictEqual({ ...unknown }, { _tag: "Unauthorized", reason: "unknown-token" } as any)
    }))
})

describe("Auth: the configured tokens", () => {
  it.effect("with no tokens configured every token is unknown", () =>
    Effect.gen(function*() {
      const none = Auth.make([])
      const error = yield* Effect.flip(none.authenticate({ authorization: `Bearer ${printable}` }))
      assert.deepStrictEqual({ ...error }, { _tag: "Unauthorized", reason: "unknown-token" } as any)
    }))

  it.effect("two entries with one digest: the first one configured decides", () =>
    Effect.gen(function*() {
      const twice = Auth.make([
        { sha256: hex("shared"), runs: ["x"], capture: false, name: "first" },
        { sha256: hex("shared"), runs: "*", capture: true, name: "second" }
      ])
      const principal = yield* twice.authenticate({ authorization: "Bearer shared" })
      assert.strictEqual(principal.name, "first")
      const error = yield* Effect.flip(twice.authenticate({ authorization: "Bearer shared" }, Access.capture))
      assert.deepStrictEqual({ ...error }, { _tag: "Forbidden", action: "capture", runId: null } as any)
    }))

  it.effect("the principal: runs as a set (or \"*\"), the capture right, the default access is any", () =>
    Effect.gen(function*() {
      const third = yield* auth.authenticate({ authorization: "Bearer plain-token" })
      assert.strictEqual(third.name, "plain")
      assert.instanceOf(third.runs, Set)
      assert.strictEqual((third.runs as ReadonlySet<string>).size, 0)
      assert.isFalse(third.capture)
      const all = yield* auth.authenticate({ authorization: `Bearer ${printable}` }, Access.any)
      assert.strictEqual(all.runs, "*")
      assert.isTrue(all.capture)
      // Capture access for a token that has it returns that token's principal.
      const capturing = yield* auth.authenticate({ authorization: `Bearer ${printable}` }, Access.capture)
      assert.strictEqual(capturing.name, "printable")
    }))

  it.effect("authorize: Access values and each way to read a run", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(Access.any, { _tag: "Any" })
      assert.deepStrictEqual(Access.capture, { _tag: "Capture" })
      assert.deepStrictEqual(Access.readRun("r"), { _tag: "ReadRun", runId: "r", owner: undefined })
      const listed: Principal = { name: "n", digest: "d1", runs: new Set(["r1"]), capture: false, metrics: false }
      assert.strictEqual(yield* authorize(listed, Access.readRun("r1")), listed)
      assert.strictEqual(yield* authorize(listed, Access.readRun("r2", "d1")), listed)
      assert.strictEqual(yield* authorize(listed, Access.any), listed)
      const other = yield* Effect.flip(authorize(listed, Access.readRun("r2", "d2")))
      assert.instanceOf(other, Forbidden)
      assert.deepStrictEqual({ ...other }, { _tag: "Forbidden", action: "read-run", runId: "r2" } as any)
      // A run without an owner (a stored run) is not readable by a principal without a digest match.
      const noOwner = yield* Effect.flip(authorize(listed, Access.readRun("r2")))
      assert.deepStrictEqual({ ...noOwner }, { _tag: "Forbidden", action: "read-run", runId: "r2" } as any)
    }))

  it.effect("authenticate is traced as the span Auth.authenticate", () =>
    Effect.gen(function*() {
      const names = yield* spanNames(auth.authenticate({ authorization: `Bearer ${printable}` }))
      assert.deepStrictEqual(names, ["Auth.authenticate"])
    }))
})
