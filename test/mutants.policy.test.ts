/**
 * The capture stage's policies pinned exactly: the URL policy's every refusal
 * (reason and detail), the address policy's explicit denies, and the trust
 * policy (capture/Trust.ts): PEM parsing, the CA file and `ca` limits at their
 * bounds, the shared default TLS context, and every certificate error code
 * becoming CertificateRejected. Certificates are made with the openssl command
 * line; TLS servers listen on 127.0.0.1 only; network faults are injected through
 * the socket connector, so no packet leaves this machine.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { addressProblem } from "../src/capture/AddressPolicy.js"
import type * as Dispatcher from "../src/capture/Dispatcher.js"
import { loadExtraCa, parsePem, secureContext } from "../src/capture/Trust.js"
import * as UrlPolicy from "../src/capture/UrlPolicy.js"
import { failureOf } from "./mutants.support.js"
import { tempDirectory } from "./support.js"

const asData = (error: object): Record<string, unknown> => ({ ...error })

describe("UrlPolicy.check", () => {
  const approved = new Set([
    "https://reports.northwind.test/q3.txt",
    "http://127.0.0.1:8080/a.txt",
    "http://localhost:8080/a.txt",
    "https://127.0.0.1:8443/a.txt",
    "https://reports.northwind.test/a#b",
    "ftp://reports.northwind.test/a.txt"
  ])
  const production = { approved, allowLoopbackHttp: false }
  const testMode = { approved, allowLoopbackHttp: true }
  const notApproved = (source: string, reason: string, detail: string) => ({ _tag: "NotApproved", source, reason, detail })
  const checked = (source: string, options: UrlPolicy.UrlPolicyOptions): string | Record<string, unknown> => {
    const result = UrlPolicy.check(source, options)
    return typeof result === "string" ? (result as string) : asData(result)
  }

  it("an approved https URL passes as itself, in either mode where its host allows", () => {
    assert.strictEqual(checked("https://reports.northwind.test/q3.txt", production), "https://reports.northwind.test/q3.txt")
    assert.strictEqual(checked("https://127.0.0.1:8443/a.txt", production), "https://127.0.0.1:8443/a.txt")
    assert.strictEqual(checked("https://127.0.0.1:8443/a.txt", testMode), "https://127.0.0.1:8443/a.txt")
    assert.strictEqual(checked("http://127.0.0.1:8080/a.txt", testMode), "http://127.0.0.1:8080/a.txt")
  })

  it("the URL's own problem comes first, even when listed", () => {
    assert.deepStrictEqual(
      checked("https://reports.northwind.test/a#b", production),
      notApproved("https://reports.northwind.test/a#b", "fragment", "URL must not contain a fragment")
    )
    assert.deepStrictEqual(
      checked("ftp://reports.northwind.test/a.txt", production),
      notApproved("ftp://reports.northwind.test/a.txt", "scheme-not-allowed", "URL uses ftp:; only https (and http in test mode) are allowed")
    )
  })

  it("outside the approved set", () => {
    assert.deepStrictEqual(
      checked("https://reports.northwind.test/other.txt", production),
      notApproved("https://reports.northwind.test/other.txt", "not-in-approved-set", "not in the approved source set")
    )
  })

  it("plain http: only in test mode, and only to 127.0.0.1", () => {
    assert.deepStrictEqual(
      checked("http://127.0.0.1:8080/a.txt", production),
      notApproved("http://127.0.0.1:8080/a.txt", "scheme-not-allowed", "plain http is allowed only in test mode (allowLoopbackHttp)")
    )
    assert.deepStrictEqual(
      checked("http://localhost:8080/a.txt", testMode),
      notApproved("http://localhost:8080/a.txt", "scheme-not-allowed", "in test mode plain http may only reach the literal host 127.0.0.1")
    )
  })

  it("https in test mode: only to the literal host 127.0.0.1", () => {
    assert.deepStrictEqual(
      checked("https://reports.northwind.test/q3.txt", testMode),
      notApproved("https://reports.northwind.test/q3.txt", "host-not-allowed", "in test mode only the literal host 127.0.0.1 may be reached")
    )
  })
})

describe("AddressPolicy: the explicit denies and the test-mode address", () => {
  it("IPv4-compatible IPv6 (::/96), which ipaddr.js calls unicast, is refused by name", () => {
    for (const address of ["::102:304", "::2", "::808:808"]) {
      assert.strictEqual(addressProblem(address, { allowLoopbackHttp: false }), "IPv4-compatible IPv6", address)
    }
  })

  it("IPv6 outside 2000::/3 that ipaddr.js calls unicast is refused", () => {
    for (const address of ["1000::1", "4000::1", "e000::1"]) {
      assert.strictEqual(addressProblem(address, { allowLoopbackHttp: false }), "not IPv6 global unicast (2000::/3)", address)
    }
    assert.isUndefined(addressProblem("2001:4860:4860::8888", { allowLoopbackHttp: false }))
    assert.isUndefined(addressProblem("3ffe:ffff::1", { allowLoopbackHttp: false }))
  })

  it("an IPv4 address next to a deny is allowed; the deny itself is not", () => {
    assert.isUndefined(addressProblem("168.63.129.15", { allowLoopbackHttp: false }))
    assert.isUndefined(addressProblem("168.63.129.17", { allowLoopbackHttp: false }))
    assert.strictEqual(addressProblem("168.63.129.16", { allowLoopbackHttp: false }), "cloud metadata (Azure WireServer)")
  })

  it("test mode reaches 127.0.0.1 and nothing else", () => {
    assert.isUndefined(addressProblem("127.0.0.1", { allowLoopbackHttp: true }))
    for (const address of ["127.0.0.2", "::1", "::ffff:127.0.0.1", "::7f00:1", "93.184.215.14"]) {
      assert.strictEqual(addressProblem(address, { allowLoopbackHttp: true }), "in test mode only 127.0.0.1 may be reached", address)
    }
  })

  it("not an IP literal in either mode", () => {
    for (const address of ["", "127.0.0.1.", "127.000.000.001", "1.2.3", "[::1]", "::ffff:127.0.0.01"]) {
      assert.strictEqual(addressProblem(address, { allowLoopbackHttp: false }), "not an IP address", address)
      assert.strictEqual(addressProblem(address, { allowLoopbackHttp: true }), "not an IP address", address)
    }
  })
})

// ---------------------------------------------------------------------------
// Trust
// ---------------------------------------------------------------------------

interface Pki {
  readonly directory: string
  readonly ca: string
  readonly otherCa: string
  readonly caKey: string
  readonly leaf: { readonly key: string; readonly cert: string }
}

/** A throwaway PKI made with the openssl command line: two CAs and a leaf for IP 127.0.0.1 signed by the first. */
const makePki = Effect.gen(function*() {
  const directory = yield* tempDirectory
  const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: directory, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  yield* Effect.sync(() => {
    for (const name of ["ca", "other"]) {
      openssl("req", "-x509", ...ec, "-keyout", `${name}.key`, "-out", `${name}.pem`, "-days", "2", "-subj", `/CN=citegate ${name}`,
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    }
    openssl("req", ...ec, "-keyout", "ip.key", "-out", "ip.csr", "-subj", "/CN=ip")
    execFileSync("sh", ["-c", "printf '%s\\n' 'subjectAltName=IP:127.0.0.1' 'basicConstraints=CA:FALSE' 'extendedKeyUsage=serverAuth' > ip.ext"], {
      cwd: directory
    })
    openssl("x509", "-req", "-in", "ip.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "ip.pem", "-days", "2",
      "-extfile", "ip.ext")
  }).pipe(Effect.orDie)
  const read = (name: string) => Effect.promise(() => fsp.readFile(path.join(directory, name), "utf8"))
  return {
    directory,
    ca: yield* read("ca.pem"),
    otherCa: yield* read("other.pem"),
    caKey: yield* read("ca.key"),
    leaf: { key: yield* read("ip.key"), cert: yield* read("ip.pem") }
  } satisfies Pki
})

const writeFile = (directory: string, name: string, content: string | Buffer) =>
  Effect.as(Effect.promise(() => fsp.writeFile(path.join(directory, name), content)), path.join(directory, name))

describe("Trust.parsePem", () => {
  it.scoped("certificates in order, with text around and between them", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const ca = pki.ca.trim()
      const other = pki.otherCa.trim()
      assert.deepStrictEqual(parsePem(pki.ca), { certificates: [ca] })
      assert.deepStrictEqual(parsePem(`# first\n${ca}\nsubject=other\n${other}\n`), { certificates: [ca, other] })
    }))

  it.scoped("refusals, each with its problem", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const ca = pki.ca.trim()
      const body = ca.slice("-----BEGIN CERTIFICATE-----".length, -"-----END CERTIFICATE-----".length)
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["", "holds no PEM certificate"],
        ["no certificate here\n", "holds no PEM certificate"],
        [pki.caKey, "holds a PRIVATE KEY block; only CERTIFICATE blocks belong in a CA file"],
        [`${ca}\n${pki.caKey}`, "holds a PRIVATE KEY block; only CERTIFICATE blocks belong in a CA file"],
        [`-----BEGIN CERTIFICATE-----\n${ca}`, "holds a malformed PEM block"],
        [`${ca}\n-----END CERTIFICATE-----\n`, "holds a malformed PEM block"],
        [`${ca}\n-----BEGIN CERTIFICATE-----${body}`, "holds a malformed PEM block"],
        [`-----BEGIN CERTIFICATE-----${body}-----END X509 CRL-----`, "holds a malformed PEM block"]
      ]
      for (const [text, problem] of cases) assert.deepStrictEqual(parsePem(text), { problem }, text.slice(0, 80))
      const broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"
      const first = parsePem(broken)
      assert.isTrue("problem" in first && first.problem.startsWith("certificate 1 is not a valid X.509 certificate: "), JSON.stringify(first))
      const second = parsePem(`${ca}\n${broken}`)
      assert.isTrue("problem" in second && second.problem.startsWith("certificate 2 is not a valid X.509 certificate: "), JSON.stringify(second))
    }))

  it.scoped("at most 1,000 certificates: 1,000 pass, 1,001 are refused", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const ca = pki.ca.trim()
      const many = (n: number) => Array.from({ length: n }, () => ca).join("\n")
      const thousand = parsePem(many(1_000))
      assert.isTrue("certificates" in thousand && thousand.certificates.length === 1_000)
      assert.deepStrictEqual(parsePem(many(1_001)), { problem: "holds more than 1000 certificates" })
    }))
})

describe("Trust.loadExtraCa", () => {
  it.effect("nothing given: no extra certificates", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* loadExtraCa({}), [])
    }))

  it.scoped("the file's certificates first, then each `ca` text's, in order", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const caFile = yield* writeFile(pki.directory, "bundle.pem", pki.ca)
      assert.deepStrictEqual(yield* loadExtraCa({ caFile, ca: [pki.otherCa, pki.ca] }), [pki.ca.trim(), pki.otherCa.trim(), pki.ca.trim()])
      assert.deepStrictEqual(yield* loadExtraCa({ ca: pki.otherCa }), [pki.otherCa.trim()])
    }))

  it.scoped("the file: missing, not a regular file, not UTF-8, or not PEM certificates, with its path", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const missing = path.join(pki.directory, "absent.pem")
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ caFile: missing }))), {
        _tag: "InvalidCaFile",
        path: missing,
        detail: "no such file"
      })
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ caFile: pki.directory }))), {
        _tag: "InvalidCaFile",
        path: pki.directory,
        detail: "not a regular file"
      })
      const latin1 = yield* writeFile(pki.directory, "latin1.pem", Buffer.concat([Buffer.from(pki.ca), Buffer.from([0xe9, 0x0a])]))
      const notUtf8 = asData(yield* failureOf(loadExtraCa({ caFile: latin1 })))
      assert.strictEqual(notUtf8.path, latin1)
      assert.match(String(notUtf8.detail), /utf-8/i)
      const key = yield* writeFile(pki.directory, "key.pem", pki.caKey)
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ caFile: key }))), {
        _tag: "InvalidCaFile",
        path: key,
        detail: "holds a PRIVATE KEY block; only CERTIFICATE blocks belong in a CA file"
      })
    }))

  it.scoped("the CA file is closed after each read, whether it is accepted or refused", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const good = yield* writeFile(pki.directory, "good.pem", pki.ca)
      const bad = yield* writeFile(pki.directory, "bad.pem", "not a certificate")
      const openFiles = () => Effect.promise(() => fsp.readdir("/proc/self/fd")).pipe(Effect.map((fds) => fds.length))
      const before = yield* openFiles()
      for (let i = 0; i < 40; i++) {
        yield* loadExtraCa({ caFile: good })
        yield* Effect.either(loadExtraCa({ caFile: bad }))
      }
      // 80 reads: a leaked descriptor each would show; a few may come and go with the test runner itself.
      assert.isBelow((yield* openFiles()) - before, 10)
    }))

  it.scoped("a FIFO is refused without waiting for a writer", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const fifo = path.join(directory, "ca.fifo")
      execFileSync("mkfifo", [fifo])
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ caFile: fifo }))), {
        _tag: "InvalidCaFile",
        path: fifo,
        detail: "not a regular file"
      })
    }))

  it.scoped("the file's size limit is 1 MiB exactly", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      // The certificate, then comment text up to the exact size.
      const padded = (size: number) => Buffer.concat([Buffer.from(pki.ca), Buffer.alloc(size - Buffer.byteLength(pki.ca), 0x41)])
      const exact = yield* writeFile(pki.directory, "exact.pem", padded(1_048_576))
      assert.deepStrictEqual(yield* loadExtraCa({ caFile: exact }), [pki.ca.trim()])
      const over = yield* writeFile(pki.directory, "over.pem", padded(1_048_577))
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ caFile: over }))), {
        _tag: "InvalidCaFile",
        path: over,
        detail: "1048577 bytes exceeds the 1048576 byte limit"
      })
    }))

  it.scoped("`ca` texts: 1 Mi characters pass, one more is refused; a bad one is refused without a path", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const padded = (length: number) => pki.ca + "A".repeat(length - pki.ca.length)
      assert.deepStrictEqual(yield* loadExtraCa({ ca: padded(1_048_576) }), [pki.ca.trim()])
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ ca: [pki.ca, padded(1_048_577)] }))), {
        _tag: "InvalidCaFile",
        path: null,
        detail: "longer than 1048576 characters"
      })
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ ca: ["garbage"] }))), {
        _tag: "InvalidCaFile",
        path: null,
        detail: "holds no PEM certificate"
      })
    }))

  it.scoped("at most 1,000 certificates in all: the file's and `ca`'s together", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const many = (n: number) => Array.from({ length: n }, () => pki.ca.trim()).join("\n")
      const caFile = yield* writeFile(pki.directory, "many.pem", many(600))
      assert.strictEqual((yield* loadExtraCa({ caFile, ca: many(400) })).length, 1_000)
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ caFile, ca: many(401) }))), {
        _tag: "InvalidCaFile",
        path: caFile,
        detail: "more than 1000 certificates"
      })
      assert.deepStrictEqual(asData(yield* failureOf(loadExtraCa({ ca: [many(600), many(401)] }))), {
        _tag: "InvalidCaFile",
        path: null,
        detail: "more than 1000 certificates"
      })
    }))
})

describe("Trust.secureContext", () => {
  it("without extra CAs one context is built once and shared", () => {
    const shared = secureContext([])
    assert.isDefined(shared)
    assert.strictEqual(secureContext([]), shared)
  })

  const tlsServer = (leaf: { readonly key: string; readonly cert: string }) =>
    Effect.acquireRelease(
      Effect.async<https.Server>((resume) => {
        const server = https.createServer({ key: leaf.key, cert: leaf.cert }, (_req, res) => {
          res.writeHead(200, { "content-type": "text/plain" })
          res.end("over tls")
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    ).pipe(Effect.map((server) => `https://127.0.0.1:${(server.address() as AddressInfo).port}/a.txt`))

  const captureOver = (source: string, options: Partial<Capture.CaptureOptions>) =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const context = yield* Layer.build(
        Capture.layer({ approved: [source], allowLoopbackHttp: true, timeoutMs: 5_000, ...options }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory }))
        )
      ).pipe(Effect.orDie)
      return yield* Effect.either(Context.get(context, Capture.Capture).capture(source))
    })

  it.scopedLive("a leaf of the CA given is trusted; without it, or with another CA only, it is CertificateRejected", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const source = yield* tlsServer(pki.leaf)
      const trusted = yield* captureOver(source, { ca: pki.ca })
      assert.strictEqual(trusted._tag, "Right", JSON.stringify(trusted))
      for (const options of [{}, { ca: pki.otherCa }]) {
        const refused = yield* captureOver(source, options)
        assert.strictEqual(refused._tag, "Left")
        if (refused._tag === "Left") {
          assert.strictEqual(refused.left._tag, "CertificateRejected", JSON.stringify(refused.left))
          if (refused.left._tag === "CertificateRejected") assert.strictEqual(refused.left.code, "UNABLE_TO_VERIFY_LEAF_SIGNATURE")
        }
      }
    }))
})

describe("Trust.certificateErrorCodes: every verification failure is CertificateRejected", () => {
  // Node's certificate verification codes (OpenSSL's X509 errors and the host name check).
  const codes = [
    "UNABLE_TO_GET_ISSUER_CERT",
    "UNABLE_TO_GET_CRL",
    "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
    "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
    "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
    "CERT_SIGNATURE_FAILURE",
    "CRL_SIGNATURE_FAILURE",
    "CERT_NOT_YET_VALID",
    "CERT_HAS_EXPIRED",
    "CRL_NOT_YET_VALID",
    "CRL_HAS_EXPIRED",
    "ERROR_IN_CERT_NOT_BEFORE_FIELD",
    "ERROR_IN_CERT_NOT_AFTER_FIELD",
    "ERROR_IN_CRL_LAST_UPDATE_FIELD",
    "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
    "DEPTH_ZERO_SELF_SIGNED_CERT",
    "SELF_SIGNED_CERT_IN_CHAIN",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "CERT_CHAIN_TOO_LONG",
    "CERT_REVOKED",
    "INVALID_CA",
    "PATH_LENGTH_EXCEEDED",
    "INVALID_PURPOSE",
    "CERT_UNTRUSTED",
    "CERT_REJECTED",
    "HOSTNAME_MISMATCH",
    "ERR_TLS_CERT_ALTNAME_INVALID"
  ]

  it.scopedLive("each code from the connector becomes CertificateRejected with it; any other stays ConnectionFailed", () =>
    Effect.gen(function*() {
      const source = "https://reports.northwind.test/q3.txt"
      // Fault injection: the connector fails with the chosen code, so no packet ever leaves this machine.
      let code = ""
      const socketConnector: Dispatcher.Connector = (_options, callback) =>
        callback(Object.assign(new Error(`verification failed: ${code}`), { code }), null)
      const resolver: Dispatcher.Resolver = async () => [{ address: "93.184.215.14", family: 4 }]
      const directory = yield* tempDirectory
      const context = yield* Layer.build(
        Capture.layer({ approved: [source], resolver, socketConnector, timeoutMs: 5_000 }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory }))
        )
      ).pipe(Effect.orDie)
      const capture = Context.get(context, Capture.Capture)
      for (const next of codes) {
        code = next
        assert.deepStrictEqual(asData(yield* failureOf(capture.capture(source))), {
          _tag: "CertificateRejected",
          source,
          host: "reports.northwind.test",
          code: next,
          detail: `verification failed: ${next}`
        })
      }
      for (const next of ["ECONNRESET", "", "CERT_HAS_EXPIRED_"]) {
        code = next
        const error = yield* failureOf(capture.capture(source))
        assert.strictEqual(error._tag, "ConnectionFailed", next)
      }
    }))
})
