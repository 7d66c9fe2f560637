import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { type ArgsSpec, parseArgs } from "../../src/cli/Args.js"
import { commands } from "../../src/cli/Commands.js"
import { plan } from "../../src/cli/Dispatch.js"

const spec: ArgsSpec = {
  positionals: ["id"],
  options: [
    { name: "mode", kind: "value", valueName: "test|live", description: "", choices: ["test", "live"], required: true },
    { name: "json", kind: "flag", description: "" }
  ]
}
const error = (argv: Array<string>) => Either.match(parseArgs(argv, spec), { onLeft: (e) => e.message, onRight: () => "parsed" })

describe("parseArgs", () => {
  it("reads positionals, --name value, --name=value and flags in any order", () => {
    for (const argv of [["x", "--mode", "live", "--json"], ["--json", "--mode=live", "x"], ["--mode", "live", "--json", "--", "x"]]) {
      const parsed = Either.getOrThrow(parseArgs(argv, spec))
      expect(parsed.positionals).toEqual(["x"])
      expect(parsed.values.get("mode")).toBe("live")
      expect(parsed.flags.has("json")).toBe(true)
    }
  })

  it("after -- every word is an argument", () => {
    expect(Either.getOrThrow(parseArgs(["--mode", "test", "--", "--json"], spec)).positionals).toEqual(["--json"])
  })

  it("rejects what it cannot read, saying what is wrong", () => {
    expect(error(["x"])).toBe("missing --mode test|live")
    expect(error(["--mode", "test"])).toBe("missing <id>")
    expect(error(["x", "y", "--mode", "test"])).toBe(`unexpected argument "y"`)
    expect(error(["x", "--mode"])).toBe("--mode needs a value (test|live)")
    expect(error(["x", "--mode", "--json"])).toBe("--mode needs a value (test|live)")
    expect(error(["x", "--mode", "prod"])).toBe(`--mode must be one of test, live; got "prod"`)
    expect(error(["x", "--mode=test", "--mode=live"])).toBe("--mode given twice")
    expect(error(["x", "--mode=test", "--json=yes"])).toBe("--json takes no value")
    expect(error(["x", "--mode=test", "--jsn"])).toBe("unknown option --jsn (did you mean --json?)")
    expect(error(["x", "--mode=test", "-j"])).toBe("unknown option -j")
    expect(error(["x", "--mode="])).toBe("--mode must not be empty")
  })
})

describe("parseArgs with a oneOf group", () => {
  const replay: ArgsSpec = {
    positionals: [],
    options: [
      { name: "from-seq", kind: "value", valueName: "N", description: "" },
      { name: "since", kind: "value", valueName: "ISO", description: "" }
    ],
    oneOf: [["from-seq", "since"]]
  }
  const outcome = (argv: Array<string>) => Either.match(parseArgs(argv, replay), { onLeft: (e) => e.message, onRight: () => "parsed" })

  it("takes exactly one of the group", () => {
    expect(outcome(["--from-seq", "5"])).toBe("parsed")
    expect(outcome(["--since", "2026-11-21T10:00:00Z"])).toBe("parsed")
    expect(outcome([])).toBe("give exactly one of --from-seq N and --since ISO")
    expect(outcome(["--from-seq", "5", "--since", "2026-11-21T10:00:00Z"])).toBe("give exactly one of --from-seq N and --since ISO")
  })
})

describe("plan", () => {
  const tag = (argv: Array<string>) => {
    const p = plan(argv, commands)
    return p._tag === "Run" ? `run ${p.command.path.join(" ")}` : `print ${p.exitCode}`
  }

  it("finds the command by its words and leaves the rest to its parser", () => {
    expect(tag(["tenants", "approve", "ten_1"])).toBe("run tenants approve")
    expect(tag(["keys", "create", "--tenant", "ten_1", "--mode", "test"])).toBe("run keys create")
    expect(tag(["migrate"])).toBe("run migrate")
  })

  it("help is exit 0; a missing, unknown or malformed command is exit 2", () => {
    for (const argv of [["--help"], ["-h"], ["help"], ["help", "tenants"], ["tenants", "--help"], ["tenants", "approve", "--help"]]) {
      expect(tag(argv), argv.join(" ")).toBe("print 0")
    }
    for (const argv of [[], ["nope"], ["tenants"], ["tenants", "nope"], ["tenants", "approve"], ["migrate", "extra"], ["replay", "--stream", "deposits"]]) {
      expect(tag(argv), argv.join(" ")).toBe("print 2")
    }
  })

  it("a usage error says what is wrong, suggests a near command, and shows the usage", () => {
    const text = (argv: Array<string>) => {
      const p = plan(argv, commands)
      return p._tag === "Print" ? p.text : ""
    }
    expect(text(["tenant", "list"])).toMatch(/^error: unknown command "tenant" \(did you mean tenants\?\)/)
    expect(text(["tenants"])).toMatch(/^error: "tenants" needs a command\nUsage: collections tenants <command>/)
    expect(text(["tenants", "lst"])).toMatch(/^error: unknown command "tenants lst" \(did you mean tenants list\?\)/)
    expect(text(["tenants", "create"])).toBe("error: missing --name NAME\nUsage: collections tenants create --name NAME [--json]\nSee: collections tenants create --help")
  })
})
