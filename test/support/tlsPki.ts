/**
 * A throwaway PKI for the TLS tests (a test CA, leaves it signed, a self-signed leaf) and an
 * https server on 127.0.0.1 serving one body with them.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import type { TLSSocket } from "node:tls"
import { tempDirectory } from "../support.js"

export interface Pki {
  readonly directory: string
  readonly caFile: string
  readonly ca: string
  /** key + cert of leaves signed by the test CA, by subjectAltName. */
  readonly leaf: Record<"ip" | "name" | "otherName", { readonly key: string; readonly cert: string }>
  /** A self-signed leaf for IP 127.0.0.1 (no CA). */
  readonly selfSigned: { readonly key: string; readonly cert: string }
}

/** A throwaway PKI, made with the openssl command line in a temp directory (removed with the scope). */
export const makePki = Effect.gen(function*() {
  const directory = yield* tempDirectory
  const file = (name: string) => path.join(directory, name)
  const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: directory, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  yield* Effect.sync(() => {
    openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=citegate test CA",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for (const [name, san] of [["ip", "IP:127.0.0.1"], ["name", "DNS:citegate.test"], ["otherName", "DNS:other.test"]]) {
      openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`)
      execFileSync("sh", ["-c", `printf '%s\\n' 'subjectAltName=${san}' 'basicConstraints=CA:FALSE' 'extendedKeyUsage=serverAuth' > ${name}.ext`], { cwd: directory })
      openssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.pem`,
        "-days", "2", "-extfile", `${name}.ext`)
    }
    openssl("req", "-x509", ...ec, "-keyout", "self.key", "-out", "self.pem", "-days", "2", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1")
  }).pipe(Effect.orDie)
  const read = (name: string) => Effect.promise(() => fsp.readFile(file(name), "utf8"))
  const pair = (name: string) => Effect.all({ key: read(`${name}.key`), cert: read(`${name}.pem`) })
  return {
    directory,
    caFile: file("ca.pem"),
    ca: yield* read("ca.pem"),
    leaf: { ip: yield* pair("ip"), name: yield* pair("name"), otherName: yield* pair("otherName") },
    selfSigned: yield* pair("self")
  } satisfies Pki
})

export const body = "Net sales for Q3 2026 were 4,210 units.\n"

/** An https server on 127.0.0.1 (never any other address) with the given key and certificate. */
export const httpsServer = (credentials: { readonly key: string; readonly cert: string }) =>
  Effect.acquireRelease(
    Effect.async<{ server: https.Server; state: { port: number; requests: number; connections: number; servernames: Array<string | false | null> } }>(
      (resume) => {
        const state = { port: 0, requests: 0, connections: 0, servernames: [] as Array<string | false | null> }
        const server = https.createServer(credentials, (_req, res) => {
          state.requests++
          res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(body)
        })
        server.on("connection", () => state.connections++)
        server.on("secureConnection", (socket: TLSSocket) => state.servernames.push(socket.servername))
        server.on("tlsClientError", () => undefined)
        server.listen(0, "127.0.0.1", () => {
          state.port = (server.address() as AddressInfo).port
          resume(Effect.succeed({ server, state }))
        })
      }
    ),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))
