import Foundation

/// `famctl init --name NAME`
enum InitCommand: Command {
    static let spec = CommandSpec(
        path: ["init"],
        abstract: "Create this device: its keys, its event log, and a private family of its own.",
        discussion: """
            The home directory (mode 0700) receives identity.key (the device's Ed25519 and
            X25519 keys, mode 0600) and famctl.sqlite (the log). A device's keys never
            leave it: a new phone is a new device.
            """,
        options: [.value("--name", "NAME", "(required) A name for this device, shown to the family (e.g. \"Mum's phone\").")])

    static func run(_ inv: Invocation) throws {
        let name = try inv.requiredName("--name")
        let path = try Home.location(inv)
        let home = try Home.create(path, name: name)
        if inv.json {
            Console.json(["device": home.deviceID.hex, "name": name, "home": path])
        } else {
            Console.out("Created device \(home.deviceID.short) \"\(name)\" in \(path)")
        }
    }
}
