/**
 * How a transport failure becomes a typed capture error (`src/capture/Transport.ts`): the guarded
 * connector's own refusals found anywhere in the cause chain (to a depth of 10: the chain is
 * attacker-influenced), and every other failure described by its chain of messages, exactly.
 */
import { assert, describe, it } from "@effect/vitest"
import type { SourceUrl } from "../src/Domain.js"
import { AddressRefusedError, CertificateRefusedError } from "../src/capture/Dispatcher.js"
import { describeCause, findCause, transportError } from "../src/capture/Transport.js"

const source = "https://example.test/a.txt" as SourceUrl

/** `inner` wrapped in `depth` errors, each the cause of the next (the outermost message "wrap 1"). */
const wrapped = (inner: unknown, depth: number): unknown => {
  let current = inner
  for (let i = depth; i >= 1; i--) current = new Error(`wrap ${i}`, { cause: current })
  return current
}

const coded = (message: string, code: unknown, cause?: unknown) =>
  Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code })

describe("Transport: findCause", () => {
  const isRange = (u: unknown): u is RangeError => u instanceof RangeError

  it("finds the error itself or any cause up to the tenth link, and nothing past it", () => {
    const target = new RangeError("target")
    assert.strictEqual(findCause(target, isRange), target)
    assert.strictEqual(findCause(wrapped(target, 1), isRange), target)
    assert.strictEqual(findCause(wrapped(target, 9), isRange), target)
    assert.isUndefined(findCause(wrapped(target, 10), isRange))
    assert.isUndefined(findCause(new Error("none"), isRange))
  })

  it("follows `cause` on any object, and stops at values without one", () => {
    const target = new RangeError("target")
    assert.strictEqual(findCause({ cause: { cause: target } }, isRange), target)
    assert.isUndefined(findCause(null, isRange))
    assert.isUndefined(findCause("text", isRange))
    assert.isUndefined(findCause({ cause: null }, isRange))
    assert.isUndefined(findCause({ reason: target }, isRange))
    // A cycle ends at the bound rather than looping.
    const a: { cause?: unknown } = {}
    const b = { cause: a }
    a.cause = b
    assert.isUndefined(findCause(a, isRange))
  })
})

describe("Transport: describeCause", () => {
  it("joins the chain's messages with their codes, outermost first", () => {
    assert.strictEqual(describeCause(new Error("fetch failed", { cause: coded("connect ECONNREFUSED 127.0.0.1:9", "ECONNREFUSED") })),
      "fetch failed: connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)")
    assert.strictEqual(describeCause(coded("x", 0)), "x (0)")
    assert.strictEqual(describeCause(coded("x", undefined)), "x")
    assert.strictEqual(describeCause(coded("x", "")), "x ()")
  })

  it("leaves out empty messages and repeats, and stops after ten links", () => {
    assert.strictEqual(describeCause(new Error("a", { cause: new Error("", { cause: new Error("a", { cause: new Error("b") }) }) })), "a: b")
    // The same message with another code is not a repeat.
    assert.strictEqual(describeCause(coded("a", "E1", coded("a", "E2"))), "a (E1): a (E2)")
    assert.strictEqual(describeCause(wrapped(new Error("deep"), 9)), "wrap 1: wrap 2: wrap 3: wrap 4: wrap 5: wrap 6: wrap 7: wrap 8: wrap 9: deep")
    assert.strictEqual(describeCause(wrapped(new Error("deep"), 10)), "wrap 1: wrap 2: wrap 3: wrap 4: wrap 5: wrap 6: wrap 7: wrap 8: wrap 9: wrap 10")
    // Links that are not Errors are passed through, not described.
    assert.strictEqual(describeCause({ cause: new Error("inner") }), "inner")
  })

  it("says transport error when the chain has no message", () => {
    assert.strictEqual(describeCause(new Error("")), "transport error")
    assert.strictEqual(describeCause("a string"), "transport error")
    assert.strictEqual(describeCause(undefined), "transport error")
    // A null cause ends the chain (it has no cause of its own to read).
    assert.strictEqual(describeCause({ cause: null }), "transport error")
    assert.strictEqual(describeCause(new Error("outer", { cause: null })), "outer")
  })
})

describe("Transport: transportError", () => {
  it("an address refusal anywhere in the chain is AddressRejected with its host, address and reason", () => {
    const refused = new AddressRefusedError("example.test", "10.0.0.1", "private address")
    const error = transportError(source)(wrapped(refused, 3) as Error)
    assert.deepStrictEqual({ ...error }, {
      _tag: "AddressRejected",
      source,
      host: "example.test",
      address: "10.0.0.1",
      reason: "private address"
    } as any)
  })

  it("a certificate refusal is CertificateRejected with its host, code and detail", () => {
    const refused = new CertificateRefusedError("example.test", "CERT_HAS_EXPIRED", "certificate has expired")
    const error = transportError(source)(wrapped(refused, 2) as Error)
    assert.deepStrictEqual({ ...error }, {
      _tag: "CertificateRejected",
      source,
      host: "example.test",
      code: "CERT_HAS_EXPIRED",
      detail: "certificate has expired"
    } as any)
  })

  it("anything else is ConnectionFailed with the described chain", () => {
    const error = transportError(source)(new Error("fetch failed", { cause: coded("socket hang up", "ECONNRESET") }))
    assert.deepStrictEqual({ ...error }, { _tag: "ConnectionFailed", source, detail: "fetch failed: socket hang up (ECONNRESET)" } as any)
  })

  it("the refusal classes carry their names and messages", () => {
    const address = new AddressRefusedError("h", "1.2.3.4", "why")
    assert.deepStrictEqual([address.name, address.message], ["AddressRefusedError", "refused to connect to h at 1.2.3.4: why"])
    const certificate = new CertificateRefusedError("h", "CODE", "detail", { cause: "c" })
    assert.deepStrictEqual([certificate.name, certificate.message, certificate.cause], ["CertificateRefusedError", "detail", "c"])
  })
})
