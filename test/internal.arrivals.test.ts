/**
 * Arrival counts (src/internal/Arrivals.ts): a stamp a verification thread took serves exactly the
 * requests counted before it was taken, for at most `freshMs`; a thread without a counter stamps
 * afresh every time. Through the filesystem store: a record changed on disk is seen by every
 * request counted after the change, never hidden by a stamp taken before it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Arrivals from "../src/internal/Arrivals.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { recordFileName } from "../src/store/Format.js"
import { tempDirectory, writeRecords } from "./support.js"
import { fixtureSources } from "./support/captureCacheFixture.js"

const { recordOf, sourceOf } = fixtureSources("arrivals.example.com")

/** A counter attached to this thread for the scope (as a verification thread attaches its own). */
const attached = Effect.acquireRelease(
  Effect.sync(() => {
    const counter = Arrivals.makeCounter()
    Arrivals.attach(counter)
    return counter
  }),
  () => Effect.sync(() => Arrivals.attach(undefined))
)

/** A taker that counts its calls and gives `value()`. */
const counted = (value: () => string | undefined) => {
  const calls = { n: 0 }
  return { calls, take: () => (calls.n++, value()) }
}

describe("arrival counts", () => {
  it("count with wrapping, and compare across the wrap", () => {
    const counter = Arrivals.makeCounter()
    assert.strictEqual(Arrivals.arrive(counter), 1)
    assert.strictEqual(Arrivals.arrive(counter), 2)
    counter[0] = 2 ** 31 - 1
    assert.strictEqual(Arrivals.arrive(counter), -(2 ** 31))
    assert.isTrue(Arrivals.covers(5, 5))
    assert.isTrue(Arrivals.covers(5, 4))
    assert.isFalse(Arrivals.covers(5, 6))
    // A mark read just after the wrap covers a count just before it, not the other way round.
    assert.isTrue(Arrivals.covers(-(2 ** 31), 2 ** 31 - 1))
    assert.isFalse(Arrivals.covers(2 ** 31 - 1, -(2 ** 31)))
  })

  it("lend a count for one call only, a throw included", () => {
    assert.strictEqual(Arrivals.lending(7, () => Arrivals.lentArrival()), 7)
    assert.isUndefined(Arrivals.lentArrival())
    assert.throws(() => Arrivals.lending(8, () => {
      throw new Error("boom")
    }))
    assert.isUndefined(Arrivals.lentArrival())
  })

  it("take afresh every time in a thread without a counter", () => {
    const share = Arrivals.sharing<string, string>(8)
    const { calls, take } = counted(() => "s")
    Arrivals.lending(1, () => share("k", take))
    Arrivals.lending(1, () => share("k", take))
    assert.strictEqual(calls.n, 2)
  })

  it.scoped("serve a stamp to requests counted before it was taken, and to no later one", () =>
    Effect.gen(function*() {
      const counter = yield* attached
      const share = Arrivals.sharing<string, string>(8)
      let now = "v1"
      const { calls, take } = counted(() => now)
      const first = Arrivals.arrive(counter)
      const second = Arrivals.arrive(counter)
      assert.strictEqual(Arrivals.lending(first, () => share("k", take)), "v1")
      assert.strictEqual(calls.n, 1)
      // Counted before the stamp was taken: served the kept stamp.
      now = "v2"
      assert.strictEqual(Arrivals.lending(second, () => share("k", take)), "v1")
      assert.strictEqual(calls.n, 1)
      // Counted after: a stamp of its own, which the earlier requests may use from now on.
      const third = Arrivals.arrive(counter)
      assert.strictEqual(Arrivals.lending(third, () => share("k", take)), "v2")
      assert.strictEqual(calls.n, 2)
      assert.strictEqual(Arrivals.lending(first, () => share("k", take)), "v2")
      // No request lent (an effect's verification): afresh, and kept for the requests counted by then.
      now = "v3"
      assert.strictEqual(share("k", take), "v3")
      assert.strictEqual(Arrivals.lending(third, () => share("k", take)), "v3")
      assert.strictEqual(calls.n, 3)
      // Nothing to stamp: not kept.
      now = undefined as unknown as string
      assert.isUndefined(share("k", take))
      assert.isUndefined(Arrivals.lending(first, () => share("k", take)))
      assert.strictEqual(calls.n, 5)
      // Another key is stamped on its own.
      assert.isUndefined(Arrivals.lending(first, () => share("other", take)))
      assert.strictEqual(calls.n, 6)
    }))

  it.scoped("never serve a stamp to a request counted while it was being taken", () =>
    Effect.gen(function*() {
      const counter = yield* attached
      const share = Arrivals.sharing<string, string>(8)
      let during: number | undefined
      let now = "v1"
      const first = Arrivals.arrive(counter)
      // A request handed over while the first's stamp is being taken: it arrived after the stamp began.
      Arrivals.lending(first, () =>
        share("k", () => {
          during = Arrivals.arrive(counter)
          return now
        }))
      now = "v2"
      assert.strictEqual(Arrivals.lending(during!, () => share("k", () => now)), "v2")
    }))

  it("restore the outer count after a nested lending", () => {
    const inner = Arrivals.lending(1, () => [Arrivals.lending(2, () => Arrivals.lentArrival()), Arrivals.lentArrival()])
    assert.deepStrictEqual(inner, [2, 1])
    assert.isUndefined(Arrivals.lentArrival())
  })

  it.scoped("keep at most maxKept keys", () =>
    Effect.gen(function*() {
      const counter = yield* attached
      const share = Arrivals.sharing<number, string>(4)
      const { calls, take } = counted(() => "s")
      const arrival = Arrivals.arrive(counter)
      for (let key = 0; key < 5; key++) Arrivals.lending(arrival, () => share(key, take))
      assert.strictEqual(calls.n, 5)
      // The fifth started the kept stamps afresh: the first four are taken again, the fifth is kept.
      Arrivals.lending(arrival, () => share(4, take))
      assert.strictEqual(calls.n, 5)
      Arrivals.lending(arrival, () => share(0, take))
      assert.strictEqual(calls.n, 6)
    }))

  it.live("serve a stamp for at most freshMs", () =>
    Effect.gen(function*() {
      const counter = yield* attached
      const share = Arrivals.sharing<string, string>(8)
      const { calls, take } = counted(() => "s")
      const arrival = Arrivals.arrive(counter)
      Arrivals.lending(arrival, () => share("k", take))
      Arrivals.lending(arrival, () => share("k", take))
      assert.strictEqual(calls.n, 1)
      yield* Effect.sleep(Arrivals.freshMs + 50)
      Arrivals.lending(arrival, () => share("k", take))
      assert.strictEqual(calls.n, 2)
    }).pipe(Effect.scoped))

  it.scoped("filesystem store: a record changed on disk is seen by every request counted after the change", () =>
    Effect.gen(function*() {
      const counter = yield* attached
      const directory = yield* tempDirectory
      yield* writeRecords(directory, [recordOf(1), recordOf(2)])
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const sources = [sourceOf(1), sourceOf(2)]
      const early = Arrivals.arrive(counter)
      const queued = Arrivals.arrive(counter)
      const before = Arrivals.lending(early, () => store.stampsNow!(sources))
      assert.strictEqual(before.size, 2)
      yield* Effect.promise(() => fsp.chmod(path.join(directory, recordFileName(sourceOf(1))), 0o600))
      // Queued with the first: the stamps taken for it (after both arrived) serve it too.
      assert.deepStrictEqual(Arrivals.lending(queued, () => store.stampsNow!(sources)), before)
      // Counted after the change: its own stamps, which see it.
      const late = Arrivals.arrive(counter)
      const after = Arrivals.lending(late, () => store.stampsNow!(sources))
      assert.notStrictEqual(after.get(sourceOf(1)), before.get(sourceOf(1)))
      assert.strictEqual(after.get(sourceOf(2)), before.get(sourceOf(2)))
      // A record removed is seen the same way.
      yield* Effect.promise(() => fsp.rm(path.join(directory, recordFileName(sourceOf(2))), { force: true }))
      const gone = Arrivals.lending(Arrivals.arrive(counter), () => store.stampsNow!(sources))
      assert.isFalse(gone.has(sourceOf(2)))
    }))
})
