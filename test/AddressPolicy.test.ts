import { assert, describe, it } from "@effect/vitest"
import { addressProblem } from "../src/capture/AddressPolicy.js"

const production = { allowLoopbackHttp: false }
const testMode = { allowLoopbackHttp: true }

describe("AddressPolicy", () => {
  const refused: ReadonlyArray<readonly [string, string]> = [
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local, cloud metadata"],
    ["100.64.0.1", "CGNAT"],
    ["100.100.100.200", "CGNAT, cloud metadata"],
    ["168.63.129.16", "cloud metadata"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["0.0.0.0", "unspecified"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.51.100.10", "documentation"],
    ["203.0.113.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["192.0.0.192", "IETF protocol assignments"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fe80::1", "IPv6 link-local"],
    ["fc00::1", "IPv6 unique local"],
    ["fd00:ec2::254", "AWS IPv6 metadata"],
    ["ff02::1", "IPv6 multicast"],
    ["2001:db8::1", "IPv6 documentation"],
    ["3fff::1", "IPv6 documentation"],
    ["2001:2::1", "IPv6 benchmarking"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::ffff:8.8.8.8", "IPv4-mapped, refused outright"],
    ["::127.0.0.1", "IPv4-compatible"],
    ["64:ff9b::a00:1", "NAT64 of 10.0.0.1"],
    ["64:ff9b:1::1", "local-use NAT64"],
    ["2002:7f00:1::", "6to4 of 127.0.0.1"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["fec0::1", "site-local"],
    ["100::1", "discard"],
    ["4000::1", "outside 2000::/3"],
    ["0177.0.0.1", "octal notation"],
    ["2130706433", "integer notation"],
    ["localhost", "not an address"]
  ]
  for (const [address, why] of refused) {
    it(`refuses ${address} (${why})`, () => {
      assert.isString(addressProblem(address, production))
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
      assert.isString(addressProblem(address, testMode), address)
    }
  })
})
