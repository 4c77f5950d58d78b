/**
 * `verify.trustedKeys` as keys: file entries read (once, when the configuration is loaded) and
 * inline PEM entries parsed. A key's id is the SHA-256 of its public key, so the configured id
 * must be the key's own: a mislabelled key is refused, never trusted under another name.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import { createPublicKey } from "node:crypto"
import * as path from "node:path"
import * as Config from "../Config.js"
import { SigningKeyInvalid } from "../Errors.js"
import { readRegularFile } from "../internal/safeRead.js"
import { keyIdOf, loadPublicKey, loadSigningKey, type PublicKey } from "./Signatures.js"

/**
 * The configuration with every `verify.trustedKeys` file entry replaced by the key's PEM text
 * (relative files resolve against `baseDirectory`, pipeline.json's directory). The CLI and the
 * service call it when they load pipeline.json; a library caller with file entries calls it too.
 *
 * @since 0.3.0
 * @category keys
 */
export const resolve = Effect.fn("TrustedKeys.resolve")(function*(config: Config.PipelineConfig, baseDirectory: string) {
  const keys = config.verify?.trustedKeys
  if (keys === undefined || Object.values(keys).every(Config.isPemKey)) return config
  const resolved: Record<string, string> = {}
  for (const [keyid, value] of Object.entries(keys)) {
    if (Config.isPemKey(value)) {
      resolved[keyid] = value
      continue
    }
    const file = path.resolve(baseDirectory, value)
    const key = yield* loadPublicKey(file)
    if (key.keyid !== keyid) {
      return yield* new SigningKeyInvalid({ path: file, detail: `it holds the key with id ${key.keyid}, configured as ${keyid}` })
    }
    resolved[keyid] = key.publicKey.export({ type: "spki", format: "pem" }).toString()
  }
  return { ...config, verify: { ...config.verify, trustedKeys: resolved } }
})

/**
 * The trusted keys of a decoded configuration: its inline PEM entries (checked when it was
 * decoded). A file entry not yet `resolve`d is left out, so a capture it signed is refused under
 * `require` and reported under `check` (`UnknownSigningKey`): never trusted by accident.
 *
 * @since 0.3.0
 * @category keys
 */
export const publicKeys = (config: Config.PipelineConfig): ReadonlyArray<PublicKey> =>
  Object.entries(config.verify?.trustedKeys ?? {}).flatMap(([keyid, value]) => {
    if (!Config.isPemKey(value)) return []
    const publicKey = createPublicKey({ key: value, format: "pem" })
    return keyIdOf(publicKey) === keyid ? [{ keyid, publicKey }] : []
  })

/**
 * The capture stage's signing key (`capture.signing.keyFile`, relative to `baseDirectory`), or
 * `undefined` when signing is off.
 *
 * @since 0.3.0
 * @category keys
 */
export const signingKeyOf = (config: Config.PipelineConfig, baseDirectory: string) =>
  config.capture?.signing === undefined
    ? Effect.succeed(undefined)
    : loadSigningKey(path.resolve(baseDirectory, config.capture.signing.keyFile))

/** Largest keyring file read, and the most keys it may hold. */
export const keyringLimits = { bytes: 64 * 1024, keys: 64 } as const

const pemBlocks = /-----BEGIN PUBLIC KEY-----[A-Za-z0-9+/=\r\n\t ]*-----END PUBLIC KEY-----/g

/**
 * The Ed25519 public keys of a keyring file: one or more SPKI PEM blocks, one after another (at most
 * `keyringLimits`), each key's id derived from the key. What `run-pipeline check-attestation
 * --trusted-keys` reads: whoever checks a signed result holds public keys, not pipeline.json.
 *
 * @since 0.4.0
 * @category keys
 */
export const loadKeyring = Effect.fn("TrustedKeys.loadKeyring")(function*(file: string) {
  const text = (yield* readRegularFile(file, keyringLimits.bytes).pipe(
    Effect.mapError((failure) => new SigningKeyInvalid({ path: file, detail: failure.detail }))
  )).toString("utf8")
  if (text.includes("PRIVATE KEY")) {
    return yield* new SigningKeyInvalid({ path: file, detail: "it holds a private key: pass public keys (SPKI PEM) to check" })
  }
  const blocks = text.match(pemBlocks) ?? []
  if (blocks.length === 0) return yield* new SigningKeyInvalid({ path: file, detail: "it holds no PEM public key" })
  if (blocks.length > keyringLimits.keys) {
    return yield* new SigningKeyInvalid({ path: file, detail: `it holds more than ${keyringLimits.keys} keys` })
  }
  const keys: Array<PublicKey> = []
  for (const [i, pem] of blocks.entries()) {
    let publicKey
    try {
      publicKey = createPublicKey({ key: pem, format: "pem" })
    } catch {
      return yield* new SigningKeyInvalid({ path: file, detail: `key ${i + 1} is not a PEM public key` })
    }
    if (publicKey.asymmetricKeyType !== "ed25519") {
      return yield* new SigningKeyInvalid({ path: file, detail: `key ${i + 1} is a ${publicKey.asymmetricKeyType ?? "non-asymmetric"} key, not Ed25519` })
    }
    keys.push({ keyid: keyIdOf(publicKey), publicKey })
  }
  return keys
})
