// swift-tools-version:6.0
import PackageDescription

// A program built on Prism's engine through the PrismKit library product. Prism is the package two
// folders up; SwiftPM names a path dependency after its folder, whatever the checkout is called.
let prismFolder = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "prism"

let package = Package(
    name: "PrismKitExample",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(name: "prism-kit-example",
                          dependencies: [.product(name: "PrismKit", package: prismFolder)]),
    ],
    swiftLanguageModes: [.v6]
)
