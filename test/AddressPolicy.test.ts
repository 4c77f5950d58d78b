import { assert, describe, it } from "@effect/vitest"
import { addressProblem } from "../src/capture/AddressPolicy.js"

const production = { allowLoopbackHttp: false }
const testMode = { allowLoopbackHttp: true }

describe("AddressPolicy", () => {
  // [address, why it must be refused, the reason given]
  const refused: ReadonlyArray<readonly [string, string, string]> = [
    ["127.0.0.1", "loopback", "loopback address"],
    ["127.8.9.10", "loopback", "loopback address"],
    ["10.0.0.1", "private", "private address"],
    ["172.16.5.4", "private", "private address"],
    ["192.168.1.1", "private", "private address"],
    ["169.254.169.254", "link-local, cloud metadata", "linkLocal address"],
    ["100.64.0.1", "CGNAT", "carrierGradeNat address"],
    ["100.100.100.200", "CGNAT, cloud metadata", "carrierGradeNat address"],
    ["168.63.129.16", "cloud metadata", "cloud metadata (Azure WireServer)"],
    ["224.0.0.1", "multicast", "multicast address"],
    ["255.255.255.255", "broadcast", "broadcast address"],
    ["0.0.0.0", "unspecified", "unspecified address"],
    ["240.0.0.1", "reserved", "reserved address"],
    ["192.0.2.10", "documentation", "reserved address"],
    ["198.51.100.10", "documentation", "reserved address"],
    ["203.0.113.10", "documentation", "reserved address"],
    ["198.18.0.1", "benchmarking", "reserved address"],
    ["192.0.0.192", "IETF protocol assignments", "reserved address"],
    ["::1", "IPv6 loopback", "loopback address"],
    ["::", "IPv6 unspecified", "unspecified address"],
    ["fe80::1", "IPv6 link-local", "linkLocal address"],
    ["fc00::1", "IPv6 unique local", "uniqueLocal address"],
    ["fd00:ec2::254", "AWS IPv6 metadata", "uniqueLocal address"],
    ["ff02::1", "IPv6 multicast", "multicast address"],
    ["2001:db8::1", "IPv6 documentation", "reserved address"],
    ["3fff::1", "IPv6 documentation", "reserved address"],
    ["2001:2::1", "IPv6 benchmarking", "benchmarking address"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback", "ipv4Mapped address"],
    ["::ffff:10.0.0.1", "IPv4-mapped private", "ipv4Mapped address"],
    ["::ffff:8.8.8.8", "IPv4-mapped, refused outright", "ipv4Mapped address"],
    ["::127.0.0.1", "IPv4-compatible", "ipv4Mapped address"],
    ["64:ff9b::a00:1", "NAT64 of 10.0.0.1", "rfc6052 address"],
    ["64:ff9b:1::1", "local-use NAT64", "rfc6052 address"],
    ["2002:7f00:1::", "6to4 of 127.0.0.1", "6to4 address"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo", "teredo address"],
    ["fec0::1", "site-local", "deprecatedSiteLocal address"],
    ["100::1", "discard", "discard address"],
    ["4000::1", "outside 2000::/3", "not IPv6 global unicast (2000::/3)"],
    ["0177.0.0.1", "octal notation", "not an IP address"],
    ["2130706433", "integer notation", "not an IP address"],
    ["localhost", "not an address", "not an IP address"]
  ]
  for (const [address, why, reason] of refused) {
    it(`refuses ${address} (${why})`, () => {
      assert.strictEqual(addressProblem(address, production), reason)
    })
  }

  for (const address of ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"]) {
    it(`allows global unicast ${address}`, () => {
      assert.isUndefined(addressProblem(address, production))
    })
  }

  it("in test mode allows exactly 127.0.0.1, spelled one way", () => {
    assert.isUndefined(addressProblem("127.0.0.1", testMode))
    for (const address of ["127.0.0.2", "::1", "::ffff:127.0.0.1", "93.184.215.14", "10.0.0.1"]) {
      assert.strictEqual(addressProblem(address, testMode), "in test mode only 127.0.0.1 may be reached", address)
    }
  })
})
