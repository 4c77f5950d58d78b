/**
 * The trusted keyring's limits (src/evidence/TrustedKeys.ts `keyringLimits`, docs/signatures.md):
 * a keyring of exactly 64 keys, and a file of exactly 64 KiB, are read; one key more, or one byte
 * more, is `SigningKeyInvalid` naming the file, before any key past the limit is parsed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { SigningKeyInvalid } from "../src/Errors.js"
import { keyIdOf } from "../src/evidence/Signatures.js"
import { keyringLimits, loadKeyring } from "../src/evidence/TrustedKeys.js"
import { tempDirectory } from "./support.js"

const publicPems = (count: number) =>
  Array.from({ length: count }, () => generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }) as string)

const writeKeyring = (directory: string, name: string, text: string) =>
  Effect.promise(async () => {
    const file = path.join(directory, name)
    await fsp.writeFile(file, text)
    return file
  })

describe("trusted keyring limits", () => {
  it.scoped("exactly 64 keys are read, each with its own id; 65 are SigningKeyInvalid", () =>
    Effect.gen(function*() {
      assert.strictEqual(keyringLimits.keys, 64)
      const directory = yield* tempDirectory
      const pems = publicPems(keyringLimits.keys + 1)
      const atLimit = yield* writeKeyring(directory, "64.pem", pems.slice(0, keyringLimits.keys).join(""))
      const keys = yield* loadKeyring(atLimit)
      assert.strictEqual(keys.length, 64)
      assert.strictEqual(new Set(keys.map((k) => k.keyid)).size, 64)
      assert.strictEqual(keys[63]!.keyid, keyIdOf(keys[63]!.publicKey))
      const over = yield* writeKeyring(directory, "65.pem", pems.join(""))
      const error = yield* Effect.flip(loadKeyring(over))
      assert.instanceOf(error, SigningKeyInvalid)
      assert.strictEqual(error.path, over)
      assert.include(error.detail, "more than 64 keys")
    }))

  it.scoped("a file of exactly 64 KiB is read; one byte more is SigningKeyInvalid", () =>
    Effect.gen(function*() {
      assert.strictEqual(keyringLimits.bytes, 64 * 1024)
      const directory = yield* tempDirectory
      const pem = publicPems(1)[0]!
      // Text outside PEM blocks is not a key: blank lines pad the file to the size wanted.
      const padded = (bytes: number) => pem + "\n".repeat(bytes - Buffer.byteLength(pem))
      const atLimit = yield* writeKeyring(directory, "at.pem", padded(keyringLimits.bytes))
      assert.strictEqual((yield* Effect.promise(() => fsp.stat(atLimit))).size, 65_536)
      assert.strictEqual((yield* loadKeyring(atLimit)).length, 1)
      const over = yield* writeKeyring(directory, "over.pem", padded(keyringLimits.bytes + 1))
      const error = yield* Effect.flip(loadKeyring(over))
      assert.instanceOf(error, SigningKeyInvalid)
      assert.strictEqual(error.path, over)
    }))
})
