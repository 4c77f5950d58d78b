/**
 * The key id of an Ed25519 public key, as signature envelopes and `verify.trustedKeys` name it. A leaf
 * so that the configuration can check an inline key's id while it decodes, without the signing module.
 */
import { createHash, type KeyObject } from "node:crypto"

/** The key id of a public key: SHA-256 (hex) of its DER SubjectPublicKeyInfo. */
export const keyIdOf = (publicKey: KeyObject): string =>
  createHash("sha256").update(publicKey.export({ type: "spki", format: "der" })).digest("hex")
