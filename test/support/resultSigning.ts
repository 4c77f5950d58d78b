/**
 * Signed results' fixtures (test/resultAttestation.*.test.ts): an Ed25519 key pair written as the
 * operator writes it, and the service on 127.0.0.1 with `verify.resultSigning.keyFile` and one run
 * of the loopback sources captured.
 */
import { Effect } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { keyIdOf } from "../../src/evidence/Signatures.js"
import { call, sources, startService, tokens, waitForRun } from "../serverSupport.js"
import { tempDirectory } from "../support.js"

/**
 * A new Ed25519 pair under `directory`: `result.pem` (the private key, PKCS#8 PEM), `trusted.pem`
 * (a keyring of its public key) and the trusted list the library takes.
 */
export const writeSigningKeys = (directory: string) =>
  Effect.promise(async () => {
    const pair = generateKeyPairSync("ed25519")
    const privateFile = path.join(directory, "result.pem")
    const keyring = path.join(directory, "trusted.pem")
    await fsp.writeFile(privateFile, pair.privateKey.export({ type: "pkcs8", format: "pem" }))
    await fsp.writeFile(keyring, pair.publicKey.export({ type: "spki", format: "pem" }))
    return { pair, privateFile, keyring, trusted: [{ keyid: keyIdOf(pair.publicKey), publicKey: pair.publicKey }] }
  })

/** The service signing results with a new key, over the loopback sources' `q3-sales.txt`, one run captured. */
export const signingService = Effect.gen(function*() {
  const { server } = yield* sources
  const sales = server.url("/q3-sales.txt")
  const keys = yield* writeSigningKeys(yield* tempDirectory)
  const service = yield* startService({ sources: [sales], config: { verify: { resultSigning: { keyFile: keys.privateFile } } } })
  const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
  const runId = started.json.id as string
  yield* waitForRun(service, runId)
  return { sales, service, runId, keys }
})
