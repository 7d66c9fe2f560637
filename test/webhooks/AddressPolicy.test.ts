import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { addressRefusal, isPublicAddress, parseTargetUrl } from "../../services/webhooks/AddressPolicy.js"

describe("isPublicAddress", () => {
  it.each([
    "8.8.8.8",
    "93.184.216.34",
    "1.1.1.1",
    "2606:4700::1111",
    "2a00:1450:4001:82b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808"
  ])("public: %s", (ip) => {
    expect(isPublicAddress(ip)).toBe(true)
  })

  it.each([
    // IPv4 special ranges
    "0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.255.254",
    "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.192", "192.0.2.1", "192.88.99.1",
    "192.168.0.1", "198.18.0.1", "198.19.255.255", "198.51.100.1", "203.0.113.1", "224.0.0.1",
    "239.255.255.250", "240.0.0.1", "255.255.255.255",
    // IPv6 special ranges and IPv4 embeddings
    "::", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::7f00:1", "::8.8.8.8",
    "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b:1::808:808", "2002:7f00:1::", "2002:808:808::",
    "2001::1", "2001:db8::1", "3fff::1", "5f00::1", "fe80::1", "fe80::1%eth0", "fec0::1", "fc00::1",
    "fd00:ec2::254", "fd12:3456::1", "ff02::1", "100::1",
    // Not canonical literals: never judged, so never "public"
    "2130706433", "127.1", "0177.0.0.1", "0x7f.0.0.1", "010.8.8.8", "[::1]", "", "example.com", " 8.8.8.8"
  ])("not public: %s", (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })

  it("explains why", () => {
    expect(addressRefusal("100.64.0.1")).toBe("a carrier-grade NAT (100.64.0.0/10) address")
    expect(addressRefusal("::ffff:10.0.0.1")).toBe("an IPv4-mapped form of a private-network address")
    expect(addressRefusal("64:ff9b::a9fe:a9fe")).toBe("a NAT64 form of a cloud metadata address")
    expect(addressRefusal("::1")).toBe("a loopback address")
    expect(addressRefusal("::")).toBe("the unspecified address (::)")
    expect(addressRefusal("fec0::1")).toBe("a site-local (fec0::/10) address")
    expect(addressRefusal("2002:7f00:1::")).toBe("a 6to4 (2002::/16) tunnel address")
    expect(addressRefusal("8.8.8.8")).toBeUndefined()
  })

  it("reads ::a.b.c.d as IPv4-compatible like the OS does, not as IPv4-mapped like ipaddr.js", () => {
    expect(addressRefusal("::8.8.8.8")).toBe("an IPv4-compatible (::/96) address")
    expect(addressRefusal("::127.0.0.1")).toBe("an IPv4-compatible (::/96) address")
  })
})

describe("parseTargetUrl", () => {
  it("normalises odd IPv4 spellings through WHATWG URL before judging", () => {
    for (const raw of ["http://2130706433", "http://0x7f000001", "http://0177.0.0.1", "http://127.1"]) {
      const parsed = parseTargetUrl(raw, { allowInsecure: true })
      expect(Either.isRight(parsed) && parsed.right).toMatchObject({ host: "127.0.0.1", isIpLiteral: true, port: 80 })
    }
  })

  it("strips IPv6 brackets and the trailing dot, keeps explicit ports", () => {
    const v6 = parseTargetUrl("https://[2606:4700::1111]:8443/x", { allowInsecure: false })
    expect(Either.isRight(v6) && v6.right).toMatchObject({ host: "2606:4700::1111", port: 8443, isIpLiteral: true })
    const name = parseTargetUrl("https://Example.COM./x", { allowInsecure: false })
    expect(Either.isRight(name) && name.right).toMatchObject({ host: "example.com", port: 443, isIpLiteral: false })
  })
})
