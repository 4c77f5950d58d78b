/**
 * The guarded connector of the capture stage (`src/capture/Dispatcher.ts`), called directly: which
 * host it resolves (IPv6 literals arrive bracketed), which address it hands to the socket, what it
 * refuses and how it names a certificate failure. The socket step is replaced by a recorder (fault
 * injection: nothing is ever connected) except in the last tests, which talk to servers started
 * here on 127.0.0.1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Undici from "@effect/platform-node/Undici"
import * as Dispatcher from "../src/capture/Dispatcher.js"
import { plainText, testServer } from "./httpServer.js"
import { httpsServer, makePki } from "./support/tlsPki.js"

type ConnectOptions = Parameters<Dispatcher.Connector>[0]

interface Outcome {
  readonly error: Error | null
  readonly socket: unknown
  /** What the socket step was asked to open (empty when the guard refused first). */
  readonly opened: ReadonlyArray<ConnectOptions>
  /** The names the resolver was asked for. */
  readonly resolved: ReadonlyArray<string>
}

const fakeSocket = { fake: "socket" }

/**
 * One connection attempt through the guard. `answer` is the resolver's answer for any name;
 * `socketError`, when given, is what the socket step fails with.
 */
const attempt = (
  connectOptions: Partial<ConnectOptions> & { readonly hostname: string },
  settings: {
    readonly allowLoopbackHttp?: boolean
    readonly answer?: () => Promise<ReadonlyArray<Dispatcher.ResolvedAddress>>
    readonly socketError?: Error
  } = {}
): Promise<Outcome> =>
  new Promise((resolve) => {
    const opened: Array<ConnectOptions> = []
    const resolved: Array<string> = []
    const connector = Dispatcher.guardedConnector({
      allowLoopbackHttp: settings.allowLoopbackHttp ?? false,
      resolver: (hostname) => {
        resolved.push(hostname)
        return settings.answer?.() ?? Promise.resolve([])
      },
      socketConnector: (options, callback) => {
        opened.push(options)
        if (settings.socketError !== undefined) callback(settings.socketError, null)
        else callback(null, fakeSocket as never)
      }
    })
    connector({ protocol: "https:", port: "443", ...connectOptions } as ConnectOptions, (error, socket) =>
      resolve({ error, socket, opened, resolved }))
  })

const publicV4 = "93.184.215.14"
const publicV6 = "2606:4700:4700::1111"
const answer = (...addresses: Array<string>) => () =>
  Promise.resolve(addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))

describe("guardedConnector: which host and address", () => {
  it("an IPv6 literal arrives bracketed: it is checked and opened without brackets, and never resolved", async () => {
    const outcome = await attempt({ hostname: `[${publicV6}]` })
    assert.isNull(outcome.error)
    assert.strictEqual(outcome.socket, fakeSocket)
    assert.deepStrictEqual(outcome.resolved, [])
    assert.strictEqual(outcome.opened.length, 1)
    assert.strictEqual(outcome.opened[0]!.hostname, publicV6)
    assert.strictEqual(outcome.opened[0]!.host, `[${publicV6}]`)

    const loopback = await attempt({ hostname: "[::1]" }, { allowLoopbackHttp: true })
    assert.instanceOf(loopback.error, Dispatcher.AddressRefusedError)
    const refused = loopback.error as Dispatcher.AddressRefusedError
    assert.strictEqual(refused.host, "::1")
    assert.strictEqual(refused.address, "::1")
    assert.strictEqual(refused.reason, "in test mode only 127.0.0.1 may be reached")
    assert.strictEqual(refused.message, "refused to connect to ::1 at ::1: in test mode only 127.0.0.1 may be reached")
    assert.strictEqual(refused.name, "AddressRefusedError")
    assert.isNull(loopback.socket)
    assert.deepStrictEqual(loopback.resolved, [])
    assert.deepStrictEqual(loopback.opened, [])
  })

  it("only a name both opened and closed by a bracket loses them; any other name is resolved as written", async () => {
    for (const hostname of ["[citegate.test", "citegate.test]", "[]x", "x[]"]) {
      const outcome = await attempt({ hostname }, { answer: answer(publicV4) })
      assert.deepStrictEqual(outcome.resolved, [hostname])
      assert.strictEqual(outcome.opened[0]!.hostname, publicV4, hostname)
    }
    const bracketed = await attempt({ hostname: "[citegate.test]" }, { answer: answer(publicV4) })
    assert.deepStrictEqual(bracketed.resolved, ["citegate.test"])
  })

  it("a name is resolved once; the socket goes to the first address, and the name stays the TLS host", async () => {
    const outcome = await attempt({ hostname: "citegate.test" }, { answer: answer(publicV4, "93.184.215.15") })
    assert.isNull(outcome.error)
    assert.deepStrictEqual(outcome.resolved, ["citegate.test"])
    assert.strictEqual(outcome.opened.length, 1)
    assert.strictEqual(outcome.opened[0]!.hostname, publicV4)
    assert.strictEqual(outcome.opened[0]!.host, "citegate.test")
    assert.strictEqual(outcome.opened[0]!.port, "443")
    assert.strictEqual(outcome.opened[0]!.protocol, "https:")

    // A `host` given by the caller is kept as it is.
    const withHost = await attempt({ hostname: "citegate.test", host: "citegate.test:8443" }, { answer: answer(publicV4) })
    assert.strictEqual(withHost.opened[0]!.host, "citegate.test:8443")
    assert.strictEqual(withHost.opened[0]!.hostname, publicV4)
  })

  it("a literal IPv4 host is checked as it is and never resolved", async () => {
    const outcome = await attempt({ hostname: publicV4 })
    assert.deepStrictEqual(outcome.resolved, [])
    assert.strictEqual(outcome.opened[0]!.hostname, publicV4)
    assert.strictEqual(outcome.opened[0]!.host, publicV4)
  })
})

describe("guardedConnector: refusals before any socket", () => {
  it("a name that resolves to no address is an error naming it", async () => {
    const outcome = await attempt({ hostname: "citegate.test" }, { answer: answer() })
    assert.instanceOf(outcome.error, Error)
    assert.notInstanceOf(outcome.error, Dispatcher.AddressRefusedError)
    assert.strictEqual(outcome.error!.message, "citegate.test resolved to no address")
    assert.isNull(outcome.socket)
    assert.deepStrictEqual(outcome.opened, [])
  })

  it("any disallowed address refuses the name, wherever it is in the answer", async () => {
    for (const addresses of [["10.0.0.7", publicV4], [publicV4, "10.0.0.7"]]) {
      const outcome = await attempt({ hostname: "citegate.test" }, { answer: answer(...addresses) })
      assert.instanceOf(outcome.error, Dispatcher.AddressRefusedError)
      const refused = outcome.error as Dispatcher.AddressRefusedError
      assert.strictEqual(refused.host, "citegate.test")
      assert.strictEqual(refused.address, "10.0.0.7")
      assert.isNotEmpty(refused.reason)
      assert.deepStrictEqual(outcome.opened, [])
    }
  })

  it("a failing resolver's error is passed on; a thrown non-Error becomes an Error with its text", async () => {
    const failure = new Error("getaddrinfo ENOTFOUND citegate.test")
    const thrown = await attempt({ hostname: "citegate.test" }, { answer: () => Promise.reject(failure) })
    assert.strictEqual(thrown.error, failure)
    const text = await attempt({ hostname: "citegate.test" }, { answer: () => Promise.reject("no such host") })
    assert.instanceOf(text.error, Error)
    assert.strictEqual(text.error!.message, "no such host")
    assert.isNull(text.socket)
    assert.deepStrictEqual(text.opened, [])
  })
})

describe("guardedConnector: socket failures", () => {
  const coded = (message: string, code?: unknown) => Object.assign(new Error(message), code === undefined ? {} : { code })

  it("a certificate failure becomes CertificateRefusedError with the host, the code, the detail and the cause", async () => {
    for (const code of ["CERT_HAS_EXPIRED", "DEPTH_ZERO_SELF_SIGNED_CERT", "ERR_TLS_CERT_ALTNAME_INVALID"]) {
      const original = coded(`certificate problem ${code}`, code)
      const outcome = await attempt({ hostname: `[${publicV6}]` }, { socketError: original })
      assert.instanceOf(outcome.error, Dispatcher.CertificateRefusedError, code)
      const refused = outcome.error as Dispatcher.CertificateRefusedError
      assert.strictEqual(refused.host, publicV6)
      assert.strictEqual(refused.code, code)
      assert.strictEqual(refused.message, `certificate problem ${code}`)
      assert.strictEqual(refused.name, "CertificateRefusedError")
      assert.strictEqual(refused.cause, original)
      assert.isNull(outcome.socket)
    }
  })

  it("any other socket failure is passed on as it is", async () => {
    for (const original of [coded("connect ECONNREFUSED", "ECONNREFUSED"), coded("no code"), coded("numeric", 35)]) {
      const outcome = await attempt({ hostname: publicV4 }, { socketError: original })
      assert.strictEqual(outcome.error, original)
      assert.isNull(outcome.socket)
    }
  })
})

describe("systemResolver", () => {
  it("answers every address as a list, even for a literal (no lookup is made for one)", async () => {
    assert.deepStrictEqual(await Dispatcher.systemResolver("127.0.0.1"), [{ address: "127.0.0.1", family: 4 }])
    assert.deepStrictEqual(await Dispatcher.systemResolver("::1"), [{ address: "::1", family: 6 }])
  })
})

describe("the default socket step", () => {
  const request = (url: string, options: Dispatcher.DispatcherOptions) =>
    Effect.gen(function*() {
      const agent = yield* Dispatcher.make(options)
      return yield* Effect.tryPromise(() => Undici.request(url, { dispatcher: agent }).then((r) => r.body.text())).pipe(Effect.either)
    })

  /** A request to an https server on 127.0.0.1 with a self-signed certificate, with no extra CA trusted. */
  const selfSignedRefused = Effect.gen(function*() {
    const pki = yield* makePki
    const server = yield* httpsServer(pki.selfSigned)
    const result = yield* request(`https://127.0.0.1:${server.port}/`, { allowLoopbackHttp: true })
    const cause = Either.isLeft(result) ? result.left.cause : undefined
    assert.instanceOf(cause, Dispatcher.CertificateRefusedError)
    assert.strictEqual(cause.code, "DEPTH_ZERO_SELF_SIGNED_CERT")
    assert.strictEqual(cause.host, "127.0.0.1")
    assert.strictEqual(server.requests, 0)
  })

  it.scopedLive("without extra CAs, https verifies against the bundled roots only: a self-signed 127.0.0.1 is refused", () =>
    selfSignedRefused)

  it.scopedLive("NODE_TLS_REJECT_UNAUTHORIZED=0 set in the process does not switch verification off", () =>
    Effect.gen(function*() {
      const previous = process.env["NODE_TLS_REJECT_UNAUTHORIZED"]
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          process.env["NODE_TLS_REJECT_UNAUTHORIZED"] = "0"
        }),
        () =>
          Effect.sync(() => {
            if (previous === undefined) delete process.env["NODE_TLS_REJECT_UNAUTHORIZED"]
            else process.env["NODE_TLS_REJECT_UNAUTHORIZED"] = previous
          })
      )
      yield* selfSignedRefused
    }))

  it.scopedLive("plain http is spoken without TLS", () =>
    Effect.gen(function*() {
      const server = yield* testServer(plainText("plain"))
      assert.deepStrictEqual(yield* request(server.url("/"), { allowLoopbackHttp: true }), Either.right("plain"))
    }))
})
