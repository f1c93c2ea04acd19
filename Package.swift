// swift-tools-version:6.0
import PackageDescription

/// Strict settings shared by every Swift target.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

var package = Package(
    name: "famctl",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "famctl", targets: ["famctl"]),
        .library(name: "Envelope", targets: ["Envelope"]),
        .library(name: "EventLog", targets: ["EventLog"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "Replicator", targets: ["Replicator"]),
    ],
    targets: [
        // System C libraries: thin module maps, found with pkg-config.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]),
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),

        // Envelope: the pure event format (keys, HLC, signed bytes). No storage.
        .target(name: "Envelope", dependencies: ["CSodium"]),
        // EventLog: the append-only SQLite log. Knows no stores, no transport.
        .target(name: "EventLog", dependencies: ["Envelope", "CSQLite"]),
        // Projections and Replicator sit side by side on the log; neither knows the other.
        .target(name: "Projections", dependencies: ["Envelope", "EventLog"]),
        .target(name: "Replicator", dependencies: ["Envelope", "EventLog", "CCurl"]),
        // The command-line tool ties them together.
        // Released with the Swift runtime and Foundation linked in: a command
        // starts in about two thirds of the time, with no shared Swift
        // libraries to load and relocate (docs/performance.md, step 71).
        .executableTarget(
            name: "famctl", dependencies: ["Envelope", "EventLog", "Projections", "Replicator"]),
        // A helper the crash-safety tests kill at random moments.
        .executableTarget(name: "famctl-crashloop", dependencies: ["Envelope", "EventLog"]),

        // The seeds of the property tests (`make test-deep` runs more of them).
        .target(name: "PropertySeeds", path: "Tests/PropertySeeds"),
        .testTarget(
            name: "EnvelopeTests", dependencies: ["Envelope", "PropertySeeds"],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "EventLogTests", dependencies: ["EventLog", "Envelope", "famctl-crashloop", "PropertySeeds"]),
        .testTarget(name: "ProjectionsTests", dependencies: ["Projections", "EventLog", "Envelope", "PropertySeeds"]),
        .testTarget(
            name: "ReplicatorTests", dependencies: ["Replicator", "EventLog", "Envelope"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "famctlTests", dependencies: ["famctl", "Envelope", "EventLog", "Projections", "PropertySeeds"],
            resources: [.copy("Fixtures")]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strict
        // What each object file asks the linker for (the static runtime's
        // libraries) follows from this flag at compile time too.
        + [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))]
    // Every executable links what its objects ask for, or a release build of
    // all products (`swift build -c release`) fails to link.
    if target.type == .executable {
        target.linkerSettings = (target.linkerSettings ?? [])
            + [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))]
    }
}
